"""An agent's own bookkeeping in the workspace (fast-agent keeps its sessions and the locks it
holds while it runs in `.fast-agent/sessions/`) is no change of a turn, and no rewind puts it
back or deletes it under the running agent, not even from a checkpoint taken before the
folder was known; `agent_state` in the config replaces the list."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from acp_tui.checkpoints import CheckpointStore, SessionCheckpoints
from acp_tui.checkpoints.ignores import AGENT_STATE
from acp_tui.checkpoints.rewind import apply_rewind, plan_rewind, revert_hunks
from acp_tui.checkpoints.store import CheckpointError
from tests.support import TEST_AGENTS
from tests.support.cli import run_cli

DISK_AGENT = [sys.executable, str(TEST_AGENTS / "disk_agent.py")]
SESSION = ".fast-agent/sessions/2611-hi/history.json"
LOCK = ".fast-agent/sessions/.locks/2611-hi.owner.lock"


def as_fast_agent(*steps: str) -> str:
    """A turn of the disk agent that, as fast-agent does, writes its session and holds its
    lock in the workspace, besides `steps`."""
    return "\n".join([f"write {SESSION} turn", f"write {LOCK} pid", *steps])


def test_an_agents_state_is_no_change_of_its_turn_and_is_never_rewound(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("mine\n")
    run = run_cli(
        tmp_path,
        "--cwd",
        str(ws),
        "-p",
        as_fast_agent(),
        "-p",
        as_fast_agent("write app.py agent"),
        "--",
        *DISK_AGENT,
    )
    assert run.returncode == 0, run.stderr
    # "Say hi" changed nothing of the user's: no line for it.
    assert "turn 1:" not in run.stderr
    assert "turn 2: 1 file changed +1 -1" in run.stderr
    listed = run_cli(tmp_path, "changes", "--cwd", str(ws))
    files = [line for line in listed.stdout.splitlines() if line.startswith("  ")]
    assert files == ["  M  app.py  +1 -1"]

    rewound = run_cli(tmp_path, "rewind", "hostile", "--turn", "1", "--yes", "--cwd", str(ws))
    assert rewound.returncode == 0, rewound.stderr
    assert (ws / "app.py").read_text() == "mine\n"
    assert (ws / SESSION).read_text() == "turn" and (ws / LOCK).read_text() == "pid"
    assert ".fast-agent" not in rewound.stdout + rewound.stderr


def test_the_config_replaces_the_list(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    config = tmp_path / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('agent_state = ["cache/agent"]\n')
    steps = as_fast_agent("write cache/agent/state.json {}", "write notes.md mine")
    run = run_cli(tmp_path, "--cwd", str(ws), "-p", steps, "--", *DISK_AGENT)
    assert run.returncode == 0, run.stderr
    # .fast-agent is the user's business now; cache/agent the agent's.
    assert "turn 1: 3 files changed" in run.stderr
    listed = run_cli(tmp_path, "changes", "--cwd", str(ws))
    assert f"A  {SESSION}" in listed.stdout and "cache/agent" not in listed.stdout


def test_a_checkpoint_taken_before_the_folder_was_known_does_not_rewind_it(
    tmp_path: Path,
) -> None:
    """Checkpoints from before (an older acp-tui, another list) hold the agent's files:
    they leave the checkpoints from then on, and a rewind to one of then leaves them as they
    are, saying so."""
    ws = tmp_path / "ws"
    (ws / SESSION).parent.mkdir(parents=True)
    (ws / SESSION).write_text("before\n")
    (ws / "app.py").write_text("mine\n")
    old = SessionCheckpoints(CheckpointStore.open(ws, tmp_path / "store", agent_state=[]), "s")
    old.begin(1)
    (ws / SESSION).write_text("turn 1\n")
    (ws / "app.py").write_text("agent\n")
    old.end(1)
    assert {c.path for c in old.changes(old.turns()[0]).files} == {"app.py", SESSION}

    store = CheckpointStore.open(ws, tmp_path / "store")
    assert store.agent_state == AGENT_STATE
    checkpoints = SessionCheckpoints(store, "s")
    checkpoints.begin(2)
    (ws / SESSION).write_text("turn 2\n")
    checkpoints.end(2)
    assert checkpoints.changes(checkpoints.turns()[1]).files == []
    assert SESSION not in store.paths(checkpoints.turns()[1].after or "")

    plan = plan_rewind(checkpoints, 1)
    assert [f.path for f in plan.files] == ["app.py"]
    reason = "an agent's own state (.fast-agent/sessions/): left to the agent"
    assert plan.not_put_back == [(SESSION, reason)]
    result = apply_rewind(store, plan)
    assert result.restored == ["app.py"] and result.not_put_back == [(SESSION, reason)]
    assert (ws / SESSION).read_text() == "turn 2\n"
    assert (ws / "app.py").read_text() == "mine\n"
    with pytest.raises(CheckpointError, match=r"is an agent's own state \(\.fast-agent/"):
        revert_hunks(checkpoints, 1, {SESSION: [0]})
    assert (ws / SESSION).read_text() == "turn 2\n"
