"""The agent process: started in the workspace, stderr kept bounded, always stopped; the same
when it was spawned ahead, as acp-tui started (`HeadStart`)."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from acp_tui.transport import launcher
from acp_tui.transport.head_start import HeadStart
from acp_tui.transport.launcher import STDERR_KEEP_BYTES, AgentProcess, LaunchError

Start = Callable[..., Awaitable[AgentProcess]]


@pytest.fixture(params=["now", "ahead"])
def start(request: pytest.FixtureRequest) -> Start:
    """`AgentProcess.start`; or, "ahead", a `HeadStart` of the same command, then the start
    that takes it (the process is the one spawned ahead)."""
    if request.param == "now":
        return AgentProcess.start

    async def ahead(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> AgentProcess:
        head_start = HeadStart(argv, cwd, env)
        spawned = head_start._popen
        agent = await AgentProcess.start(argv, cwd, env=env, head_start=head_start)
        if spawned is not None:
            assert agent.process.pid == spawned.pid
        assert head_start._popen is None  # taken
        return agent

    return ahead


STUBBORN = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
sys.stdin.read()          # EOF arrives ...
while True:               # ... and it keeps going, deaf to SIGTERM too
    time.sleep(1)
"""


async def test_an_agent_deaf_to_eof_and_sigterm_is_killed(tmp_path: Path, start: Start) -> None:
    agent = await start([sys.executable, "-c", STUBBORN], tmp_path)
    assert await agent.stdout.readline() == b"ready\n"
    started = time.monotonic()
    code = await agent.close(grace=0.3)
    assert code == -9
    assert time.monotonic() - started < 5
    assert agent.exit_description() == "the agent was killed by SIGKILL"


async def test_the_agent_runs_in_the_workspace_with_our_environment(
    tmp_path: Path, start: Start
) -> None:
    script = "import os; print(os.getcwd(), os.environ['ACP_TUI_TEST'])"
    agent = await start([sys.executable, "-c", script], tmp_path, env={"ACP_TUI_TEST": "yes"})
    line = await agent.stdout.readline()
    assert line.decode().split() == [str(tmp_path), "yes"]
    assert await agent.close() == 0


async def test_a_stderr_flood_never_blocks_the_agent_nor_fills_memory(
    tmp_path: Path, start: Start
) -> None:
    flood = "import sys\nfor _ in range(100): sys.stderr.write('x' * 1_000_000)\nprint('done')"
    agent = await start([sys.executable, "-c", flood], tmp_path)
    assert await asyncio.wait_for(agent.stdout.readline(), 30) == b"done\n"
    await agent.wait()
    assert agent.stderr.total == 100_000_000
    assert len(agent.stderr.text()) <= STDERR_KEEP_BYTES


async def test_children_of_the_agent_are_stopped_with_it(tmp_path: Path, start: Start) -> None:
    script = (
        "import subprocess, sys\n"
        "child = subprocess.Popen(['sleep', '60'])\n"
        "print(child.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    agent = await start([sys.executable, "-c", script], tmp_path)
    child = int(await agent.stdout.readline())
    await agent.close(grace=0.5)
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        await asyncio.sleep(0.1)
    pytest.fail(f"the agent's child {child} outlived it")


async def test_a_missing_command_is_a_clear_error(tmp_path: Path, start: Start) -> None:
    with pytest.raises(LaunchError, match="agent command not found: no-such-agent"):
        await start(["no-such-agent"], tmp_path)


async def test_a_missing_workspace_is_not_called_a_missing_command(
    tmp_path: Path, start: Start
) -> None:
    with pytest.raises(LaunchError, match=r"the workspace is not a directory: .*nope"):
        await start([sys.executable, "-c", "pass"], tmp_path / "nope")


async def test_an_agent_that_exits_early_says_how(tmp_path: Path, start: Start) -> None:
    agent = await start([sys.executable, "-c", "import sys; sys.exit('no key'); "], tmp_path)
    assert await asyncio.wait_for(agent.wait(), 30) == 1
    assert agent.exit_description() == "the agent exited with code 1 (stderr: no key)"


async def test_an_agent_spawned_ahead_that_exited_before_it_was_taken_says_how(
    tmp_path: Path,
) -> None:
    argv = [sys.executable, "-c", "import sys; sys.exit('no key'); "]
    head_start = HeadStart(argv, tmp_path, None)
    assert head_start._popen is not None
    head_start._popen.wait()  # gone before acp-tui's loop takes it
    agent = await AgentProcess.start(argv, tmp_path, head_start=head_start)
    assert await asyncio.wait_for(agent.wait(), 30) == 1
    assert agent.exit_description() == "the agent exited with code 1 (stderr: no key)"


async def test_an_agent_spawned_ahead_is_killed_if_taking_it_is_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    head_start = HeadStart(argv, tmp_path, None)
    spawned = head_start._popen
    assert spawned is not None

    async def cancelled(_popen: object) -> None:
        raise asyncio.CancelledError

    monkeypatch.setattr(launcher._Adopted, "adopt", cancelled)
    with pytest.raises(asyncio.CancelledError):
        await AgentProcess.start(argv, tmp_path, head_start=head_start)
    assert spawned.returncode == -9


async def test_a_head_start_of_another_command_is_killed_unused(tmp_path: Path) -> None:
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    head_start = HeadStart(sleeper, tmp_path, None)
    spawned = head_start._popen
    assert spawned is not None
    script = "import os; print(os.getcwd())"
    agent = await AgentProcess.start(
        [sys.executable, "-c", script], tmp_path, head_start=head_start
    )
    assert spawned.returncode == -9 and agent.process.pid != spawned.pid
    assert await agent.stdout.readline() == f"{tmp_path}\n".encode()
    await agent.close()
    # Another environment is another start too.
    other = HeadStart(sleeper, tmp_path, {"ACP_TUI_TEST": "1"})
    other_spawned = other._popen
    assert other_spawned is not None
    agent = await AgentProcess.start(sleeper, tmp_path, head_start=other)
    assert other_spawned.returncode == -9 and agent.process.pid != other_spawned.pid
    assert await agent.close(grace=0.1) == -15


def test_a_head_start_no_start_takes_is_killed(tmp_path: Path) -> None:
    head_start = HeadStart([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path, None)
    spawned = head_start._popen
    assert spawned is not None and spawned.poll() is None
    head_start.discard()
    assert spawned.returncode == -9
    head_start.discard()  # once is enough


@pytest.mark.parametrize("argv", [["bad\0agent"], ["agent"]])
async def test_a_command_that_cannot_be_spawned_is_a_clear_error(
    tmp_path: Path, start: Start, argv: list[str]
) -> None:
    """A NUL in the command, or an environment variable named with `=` (from a config)."""
    env = None if "\0" in argv[0] else {"A=B": "1"}
    with pytest.raises(LaunchError, match="cannot start"):
        await start(argv, tmp_path, env)
