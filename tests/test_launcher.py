"""The agent process: started in the workspace, stderr kept bounded, always stopped."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from acp_tui.launcher import STDERR_KEEP_BYTES, AgentProcess, LaunchError

STUBBORN = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
sys.stdin.read()          # EOF arrives ...
while True:               # ... and it keeps going, deaf to SIGTERM too
    time.sleep(1)
"""


async def test_an_agent_deaf_to_eof_and_sigterm_is_killed(tmp_path: Path) -> None:
    agent = await AgentProcess.start([sys.executable, "-c", STUBBORN], tmp_path)
    assert await agent.stdout.readline() == b"ready\n"
    started = time.monotonic()
    code = await agent.close(grace=0.3)
    assert code == -9
    assert time.monotonic() - started < 5
    assert agent.exit_description() == "the agent was killed by SIGKILL"


async def test_the_agent_runs_in_the_workspace_with_our_environment(tmp_path: Path) -> None:
    script = "import os; print(os.getcwd(), os.environ['ACP_TUI_TEST'])"
    agent = await AgentProcess.start(
        [sys.executable, "-c", script], tmp_path, env={"ACP_TUI_TEST": "yes"}
    )
    line = await agent.stdout.readline()
    assert line.decode().split() == [str(tmp_path), "yes"]
    assert await agent.close() == 0


async def test_a_stderr_flood_never_blocks_the_agent_nor_fills_memory(tmp_path: Path) -> None:
    flood = "import sys\nfor _ in range(100): sys.stderr.write('x' * 1_000_000)\nprint('done')"
    agent = await AgentProcess.start([sys.executable, "-c", flood], tmp_path)
    assert await asyncio.wait_for(agent.stdout.readline(), 30) == b"done\n"
    await agent.wait()
    assert agent.stderr.total == 100_000_000
    assert len(agent.stderr.text()) <= STDERR_KEEP_BYTES


async def test_children_of_the_agent_are_stopped_with_it(tmp_path: Path) -> None:
    script = (
        "import subprocess, sys\n"
        "child = subprocess.Popen(['sleep', '60'])\n"
        "print(child.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    agent = await AgentProcess.start([sys.executable, "-c", script], tmp_path)
    child = int(await agent.stdout.readline())
    await agent.close(grace=0.5)
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        await asyncio.sleep(0.1)
    pytest.fail(f"the agent's child {child} outlived it")


async def test_a_missing_command_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="agent command not found: no-such-agent"):
        await AgentProcess.start(["no-such-agent"], tmp_path)
