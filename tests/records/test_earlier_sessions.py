"""After a resume the agent cannot do (it no longer knows the session), the conversation goes
on in a new session: its old id and its new one both keep naming it, for `export`, `changes`
and `--resume`."""

from __future__ import annotations

import sys
from pathlib import Path

from acp_tui.records import RecordStore
from tests.support.cli import run_cli

# Keeps no sessions across processes: every resume in a new process fails.
FORGETFUL = [sys.executable, "-m", "acp_tui.demo", "--speed", "0", "--no-persist"]


def latest_session(home: Path) -> str:
    listed = run_cli(home, "sessions", "--all").stdout.splitlines()
    return listed[1].split()[0]


def test_both_ids_answer_after_a_failed_resume(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    allow = ("--cwd", str(ws), "--permission", "allow")
    first = run_cli(tmp_path, *allow, "-p", "/edit a.txt", "--", *FORGETFUL)
    assert first.returncode == 0, first.stderr
    old = latest_session(tmp_path)
    resumed = run_cli(tmp_path, *allow, "--resume", old, "-p", "/edit b.txt", "--", *FORGETFUL)
    assert resumed.returncode == 0, resumed.stderr
    assert "The agent could not reopen this session" in resumed.stderr
    new = latest_session(tmp_path)
    assert new != old

    for session in (old, new, old[:10]):
        exported = run_cli(tmp_path, "export", session)
        assert exported.returncode == 0, exported.stderr
        assert f"- Session: `{new}`\n- Earlier sessions: `{old}`\n" in exported.stdout
        assert "/edit a.txt" in exported.stdout and "/edit b.txt" in exported.stdout
    for session, file in ((old, "a.txt"), (new, "b.txt")):
        changes = run_cli(tmp_path, "changes", session, "--cwd", str(ws))
        assert changes.returncode == 0, changes.stderr
        assert f"  A  {file}  +4 -0" in changes.stdout

    # The old id still resumes the conversation (in yet another session, for this agent).
    again = run_cli(tmp_path, *allow, "--resume", old, "-p", "hello", "--", *FORGETFUL)
    assert again.returncode == 0, again.stderr
    newest = latest_session(tmp_path)
    exported = run_cli(tmp_path, "export", old).stdout
    assert f"- Session: `{newest}`\n- Earlier sessions: `{old}`, `{new}`\n" in exported


def test_a_prefix_names_one_conversation_by_any_of_its_ids(tmp_path: Path) -> None:
    store = RecordStore.open(tmp_path / "history.sqlite3")
    assert store is not None
    kept = store.create("a", ["a"], "/w", "sess-old-1")
    other = store.create("a", ["a"], "/w", "sess-other")
    assert kept is not None and other is not None
    store.save(kept, [], session_id="sess-new-1")
    store.settle()
    assert store.earlier_sessions() == {kept: ["sess-old-1"]}
    for name in ("sess-old-1", "sess-new-1", "sess-old", "sess-new"):
        found = store.find(name)
        assert found is not None and found.id == kept, name
    assert store.find("sess-") is None  # two conversations
    store.delete(kept)
    assert store.earlier_sessions() == {}
    store.close()
