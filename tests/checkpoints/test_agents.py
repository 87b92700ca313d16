"""Checkpoints with real agent processes, run as a user would: `acp-tui -p`, then
`acp-tui changes` and `acp-tui rewind`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support import TEST_AGENTS
from tests.support.cli import run_cli

DISK_AGENT = [sys.executable, str(TEST_AGENTS / "disk_agent.py")]


def workspace(home: Path) -> Path:
    root = home / "ws"
    root.mkdir(parents=True)
    (root / "app.py").write_text('def greet(name):\n    print("Hello " + name)\n')
    (root / "old.txt").write_text("keep me\n")
    return root


def test_the_demo_agents_edit_through_fs_is_a_change_of_its_turn(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    run = run_cli(tmp_path, "--cwd", str(ws), "--permission", "allow", "-p", "/edit app.py")
    assert run.returncode == 0, run.stderr
    assert "turn 1: 1 file changed +1 -0 (acp-tui changes " in run.stderr
    edited = (ws / "app.py").read_text()
    assert "Edited by the ACP demo agent" in edited

    listed = run_cli(tmp_path, "changes", "--cwd", str(ws))
    assert listed.returncode == 0, listed.stderr
    assert "Turn 1 · /edit app.py" in listed.stdout
    assert "1 file changed +1 -0" in listed.stdout
    assert "  M  app.py  +1 -0" in listed.stdout

    patch = run_cli(tmp_path, "changes", "--cwd", str(ws), "--turn", "1", "--patch")
    assert "+# Edited by the ACP demo agent (edit 1)." in patch.stdout

    session = listed.stdout.split()[1]
    # Not a terminal and no --yes: nothing is done, and it says how.
    asked = run_cli(tmp_path, "rewind", session[:8], "--turn", "1", "--cwd", str(ws))
    assert asked.returncode == 3 and "--yes" in asked.stderr
    assert (ws / "app.py").read_text() == edited

    rewound = run_cli(tmp_path, "rewind", session, "--turn", "1", "--yes", "--cwd", str(ws))
    assert rewound.returncode == 0, rewound.stderr
    assert "restore app.py" in rewound.stdout
    assert (ws / "app.py").read_text() == 'def greet(name):\n    print("Hello " + name)\n'

    undone = run_cli(tmp_path, "rewind", session, "--undo", "--yes", "--cwd", str(ws))
    assert undone.returncode == 0, undone.stderr
    assert (ws / "app.py").read_text() == edited


def test_an_agent_writing_on_disk_and_deleting_with_a_shell_command(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    prompt = "write notes/todo.md one\\ntwo\nsh rm old.txt"
    run = run_cli(tmp_path, "--cwd", str(ws), "-p", prompt, "--", *DISK_AGENT)
    assert run.returncode == 0, run.stderr
    assert not (ws / "old.txt").exists()

    listed = run_cli(tmp_path, "changes", "hostile-session", "--cwd", str(ws))
    assert "2 files changed +2 -1" in listed.stdout
    assert "  A  notes/todo.md  +2 -0" in listed.stdout
    assert "  D  old.txt        +0 -1" in listed.stdout

    # The user edits the new file after the turn: the rewind asks, --yes overwrites it.
    (ws / "notes" / "todo.md").write_text("mine\n")
    rewound = run_cli(tmp_path, "rewind", "hostile", "--turn", "1", "--yes", "--cwd", str(ws))
    assert rewound.returncode == 0, rewound.stderr
    assert "delete  notes/todo.md  (changed after the turn: yours?)" in rewound.stdout
    assert (ws / "old.txt").read_text() == "keep me\n"
    assert not (ws / "notes").exists()


def test_changes_and_rewind_say_what_is_wrong(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    none = run_cli(tmp_path, "changes", "--cwd", str(ws))
    assert none.returncode == 1 and "no checkpoints were taken" in none.stderr
    assert run_cli(tmp_path, "--cwd", str(ws), "-p", "hi").returncode == 0
    unknown = run_cli(tmp_path, "changes", "nope", "--cwd", str(ws))
    assert unknown.returncode == 1 and "no checkpoints of a session 'nope'" in unknown.stderr
    no_turn = run_cli(tmp_path, "changes", "--turn", "7", "--cwd", str(ws))
    assert no_turn.returncode == 1 and "no checkpoint for turn 7" in no_turn.stderr
    usage = run_cli(tmp_path, "rewind", "sess", "--cwd", str(ws))
    assert usage.returncode == 2 and "--turn N or --undo" in usage.stderr


def test_no_checkpoints_when_asked_not_to(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    run = run_cli(
        tmp_path,
        "--cwd",
        str(ws),
        "--no-checkpoints",
        "--permission",
        "allow",
        "-p",
        "/edit app.py",
    )
    assert run.returncode == 0 and "changed" not in run.stderr
    assert not (tmp_path / "data" / "acp-tui" / "checkpoints").exists()


def test_a_repository_of_the_users_is_untouched_by_turns_and_rewinds(tmp_path: Path) -> None:
    import hashlib
    import os
    import subprocess

    ws = workspace(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text("not the workspace's\n")
    (ws / "elsewhere").symlink_to(outside)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env |= {"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@x"}
    env |= {"GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@x"}

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ws, env=env, capture_output=True, text=True, check=True
        ).stdout

    git("init", "-q")
    git("add", "app.py")
    git("commit", "-qm", "first")
    (ws / "app.py").write_text("staged\n")
    git("add", "app.py")

    def index() -> str:
        return hashlib.sha256((ws / ".git" / "index").read_bytes()).hexdigest()

    def fingerprint() -> tuple[object, ...]:
        return git("status", "--porcelain=v2", "--untracked-files=all"), git("for-each-ref")

    before = fingerprint()
    index_before = index()  # after `git status` refreshed it
    steps = "\n".join(
        [
            "sh head -c 20000000 /dev/zero > huge.bin",
            "sh printf 'a\\0b' > data.bin",
            "write app.py by the agent",
            "sh rm old.txt",
        ]
    )
    run = run_cli(tmp_path, "--cwd", str(ws), "-p", steps, "--", *DISK_AGENT)
    assert run.returncode == 0, run.stderr
    listed = run_cli(tmp_path, "changes", "--cwd", str(ws))
    assert "  A  data.bin  binary" in listed.stdout
    assert "  -  huge.bin: not kept (larger than 16 MB (19.1 MB))" in listed.stdout
    assert "elsewhere" not in listed.stdout  # skipped before and after: not this turn's

    rewound = run_cli(tmp_path, "rewind", "hostile", "--turn", "1", "--yes", "--cwd", str(ws))
    assert rewound.returncode == 1, rewound.stderr  # huge.bin is not deleted, and it says so
    assert rewound.stderr == (
        "acp-tui: huge.bin: not put back: the checkpoint does not hold it, but deleting it "
        "could not be undone (larger than 16 MB (19.1 MB))\n"
    )
    assert (ws / "app.py").read_text() == "staged\n"
    assert (ws / "old.txt").read_text() == "keep me\n"
    assert not (ws / "data.bin").exists()
    assert (ws / "huge.bin").stat().st_size == 20_000_000  # never stored: left alone
    assert os.readlink(ws / "elsewhere") == str(outside)
    assert [p.name for p in outside.iterdir()] == ["target.txt"]
    # The index is as the user's last git command left it; then git sees what it saw.
    assert index() == index_before
    (ws / "huge.bin").unlink()
    assert fingerprint() == before


def test_links_to_outside_the_agent_replaced_deleted_or_repointed_are_left_and_listed(
    tmp_path: Path,
) -> None:
    """A link to outside the workspace is not in any checkpoint: a rewind cannot make it
    again, so it must not delete what the agent put in its place either."""
    ws = workspace(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text("not the workspace's\n")
    (outside / "other.txt").write_text("nor this\n")
    for name in ("replaced", "deleted", "repointed"):
        (ws / name).symlink_to(outside / "target.txt")
    steps = "\n".join(
        [
            "sh rm replaced && printf 'the agent\\n' > replaced",
            "sh rm deleted",
            f"sh ln -sfn {outside / 'other.txt'} repointed",
            "write app.py by the agent",
        ]
    )
    run = run_cli(tmp_path, "--cwd", str(ws), "-p", steps, "--", *DISK_AGENT)
    assert run.returncode == 0, run.stderr
    assert (ws / "replaced").read_text() == "the agent\n"

    rewound = run_cli(tmp_path, "rewind", "hostile", "--turn", "1", "--yes", "--cwd", str(ws))
    assert rewound.returncode == 1, rewound.stderr
    reason = "the checkpoint did not save how it was (a symbolic link to outside the workspace)"
    assert f"  keep    replaced  (not put back: {reason})" in rewound.stdout
    assert rewound.stderr.splitlines() == [
        f"acp-tui: {name}: not put back: {reason}" for name in ("deleted", "replaced", "repointed")
    ]
    assert (ws / "app.py").read_text() == 'def greet(name):\n    print("Hello " + name)\n'
    assert (ws / "replaced").read_text() == "the agent\n"
    assert not (ws / "deleted").exists()
    assert (ws / "repointed").readlink() == outside / "other.txt"
    assert {p.name: p.read_text() for p in outside.iterdir()} == {
        "target.txt": "not the workspace's\n",
        "other.txt": "nor this\n",
    }

    # Asked for that path alone, the rewind has nothing it can put back, and says so.
    args = ("rewind", "hostile", "--turn", "1", "--file", "deleted", "--yes", "--cwd", str(ws))
    alone = run_cli(tmp_path, *args)
    assert alone.returncode == 1
    assert alone.stdout == "Nothing can be put back as it was before turn 1.\n"
    assert alone.stderr == f"acp-tui: deleted: not put back: {reason}\n"


def test_reverting_one_file_from_the_shell_says_so(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    run = run_cli(tmp_path, "--cwd", str(ws), "--permission", "allow", "-p", "/edit app.py")
    assert run.returncode == 0, run.stderr
    session = run_cli(tmp_path, "changes", "--cwd", str(ws)).stdout.split()[1]
    args = ("rewind", session, "--turn", "1", "--file", "app.py", "--yes", "--cwd", str(ws))
    rewound = run_cli(tmp_path, *args)
    assert rewound.returncode == 0, rewound.stderr
    assert rewound.stdout.splitlines()[:3] == [
        "Reverting app.py to how it was before turn 1:",
        "  restore app.py",
        "Reverted app.py.",
    ]
    assert (ws / "app.py").read_text() == 'def greet(name):\n    print("Hello " + name)\n'


def test_changes_lists_the_users_edits_under_the_turn_they_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp_tui.checkpoints import SessionCheckpoints
    from acp_tui.cli.changes import open_store

    ws = workspace(tmp_path)
    run = run_cli(tmp_path, "--cwd", str(ws), "--permission", "allow", "-p", "/edit app.py")
    assert run.returncode == 0, run.stderr
    session = run_cli(tmp_path, "changes", "--cwd", str(ws)).stdout.split()[1]
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    checkpoints = SessionCheckpoints(open_store(ws), session)
    before = checkpoints.edit_begins()  # `e` in the changes view: the user's editor
    (ws / "old.txt").write_text("mine now\n")
    checkpoints.edit_ends(before)

    listed = run_cli(tmp_path, "changes", "--cwd", str(ws))
    assert listed.returncode == 0, listed.stderr
    turn, edit = listed.stdout.split("\nTurn 1 ")[1].splitlines()[1:3]
    assert turn == "  M  app.py  +1 -0"
    assert edit.startswith("  ✎  old.txt: edited by you, ")
