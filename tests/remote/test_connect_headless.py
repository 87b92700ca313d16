"""`acp-tui --connect URL -p ...` against acpremote's `expose` of the demo agent, over the
WebSocket profile: a turn whose permission lets the agent write the client's own file, a
cancel, and a connection dropped mid-turn that comes back, with the session going on and its
record whole."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.remote.connect_support import Client, Exposed, exposed, free_port
from tests.support.cli import run_cli


def _workspace(home: Path) -> Path:
    workspace = home / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    return workspace


@pytest.mark.parametrize(("answer", "written"), [("allow", True), ("reject", False)])
def test_a_permission_answered_lets_the_remote_agent_write_the_clients_file_or_not(
    tmp_path: Path, answer: str, written: bool
) -> None:
    workspace = _workspace(tmp_path)
    with exposed(tmp_path) as server:
        run = Client(
            tmp_path, "--connect", server.url, "--cwd", str(workspace),
            "--permission", answer, "-p", "/edit notes.txt",
        )  # fmt: skip
        status, out, err = run.finish()
    assert status == 0, err
    assert f"permission for Edit notes.txt: {answer}_once" in err
    text = (workspace / "notes.txt").read_text()
    assert ("Edited by the ACP demo agent" in text) is written
    assert ("`notes.txt` updated" in out) is written


def test_ctrl_c_cancels_the_remote_turn(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    with exposed(tmp_path) as server:
        run = Client(tmp_path, "--connect", server.url, "--cwd", str(workspace), "-p", "/slow 30")
        run.wait_for("⏳ 1/30")
        run.process.send_signal(signal.SIGINT)
        status, out, err = run.finish()
    assert status == 130, err
    assert "nobody cancelled me" not in out


def test_a_connection_dropped_mid_turn_comes_back_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    workspace = _workspace(tmp_path)
    port = free_port()
    first = Exposed(tmp_path, port)
    run = Client(
        tmp_path, "--connect", first.url, "--cwd", str(workspace),
        "-p", "/slow 30", "-p", "after the drop",
    )  # fmt: skip
    try:
        run.wait_for("⏳ 2/30")
        first.kill()  # the server dies mid-turn; another takes its place
        second = Exposed(tmp_path, port)
        try:
            status, out, err = run.finish()
        finally:
            second.kill()
    finally:
        if run.process.poll() is None:
            run.process.kill()
    lines = err.splitlines()
    assert any(f"the connection to {first.url} was lost" in line for line in lines), err
    assert any(line.endswith("; reconnecting") for line in lines), err
    assert f"acp-tui: Reconnected to {first.url}: the session goes on" in lines
    assert lines[-1] == (
        "acp-tui: a turn cut short by a lost connection (the session went on after)"
    )
    assert status == 1
    assert "> after the drop" in out  # the second turn, in the same session
    # The record holds both turns: what came before the drop, and the turn after it.
    sessions = run_cli(tmp_path, "sessions", "--all")
    assert sessions.returncode == 0, sessions.stderr
    session_id = next(word for word in sessions.stdout.split() if word.startswith("sess_"))
    exported = run_cli(tmp_path, "export", session_id)
    assert exported.returncode == 0, exported.stderr
    assert "⏳ 2/30" in exported.stdout and "after the drop" in exported.stdout


def test_a_configured_remote_agent_runs_by_its_name_and_lists_its_sessions(
    tmp_path: Path,
) -> None:
    workspace = _workspace(tmp_path)
    with exposed(tmp_path) as server:
        config = tmp_path / "config" / "acp-tui" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f'[agents.devbox]\nurl = "{server.url}"\n', encoding="utf-8")
        run = Client(tmp_path, "--agent", "devbox", "--cwd", str(workspace), "-p", "hi there")
        status, out, err = run.finish()
        assert status == 0, err
        assert "> hi there" in out
        listed = run_cli(tmp_path, "sessions", "--agent", "devbox", "--cwd", str(workspace))
    assert listed.returncode == 0, listed.stderr
    assert f"Sessions with devbox in {workspace}:" in listed.stdout
    assert "agent, local" in listed.stdout  # the agent's own list and acp-tui's record
