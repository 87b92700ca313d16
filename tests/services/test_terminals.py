"""`terminal/*`: real processes, bounded output cut at character boundaries, exit statuses,
kill and release, and nothing left running after `close_all`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_tui.protocol.client_methods import TerminalExitStatus
from acp_tui.protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError
from acp_tui.services import terminals
from acp_tui.services.terminals import TerminalService, command_line
from acp_tui.workspace import Workspace
from tests.services.test_kill import gone


def params(**fields: Any) -> msgspec.Raw:
    return msgspec.Raw(json.dumps({"sessionId": "s", **fields}).encode())


class Events:
    def __init__(self) -> None:
        self.output: list[tuple[str, bytes]] = []
        self.exits: list[tuple[str, int | None, str | None]] = []


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture
async def service(tmp_path: Path, events: Events) -> AsyncIterator[TerminalService]:
    (tmp_path / "sub").mkdir()
    service = TerminalService(
        Workspace([tmp_path]),
        on_output=lambda terminal, data: events.output.append((terminal, data)),
        on_exit=lambda terminal, code, signal: events.exits.append((terminal, code, signal)),
        default_output_limit=10_000,
        kill_grace=0.3,
    )
    yield service
    await service.close_all()


async def run(service: TerminalService, *argv: str, **fields: Any) -> str:
    """Create a terminal for `argv`; its id."""
    created = await service.create(params(command=argv[0], args=list(argv[1:]), **fields))
    return created.terminal_id


def ids(terminal_id: str) -> msgspec.Raw:
    return params(terminalId=terminal_id)


async def finished(service: TerminalService, terminal_id: str) -> dict[str, Any]:
    """Wait for the exit; the `terminal/output` result as JSON data."""
    await asyncio.wait_for(service.wait_for_exit(ids(terminal_id)), 10)
    return msgspec.to_builtins(await service.output(ids(terminal_id)))


async def test_a_command_runs_in_the_workspace_with_the_agents_environment(
    service: TerminalService, tmp_path: Path, events: Events
) -> None:
    script = (
        "echo out; echo err >&2; echo $ACP_PROBE; echo ${HOME:+home-is-kept}; echo $PWD; exit 3"
    )
    terminal = await run(service, "sh", "-c", script, env=[{"name": "ACP_PROBE", "value": "v"}])
    exit_status = await asyncio.wait_for(service.wait_for_exit(ids(terminal)), 10)
    assert exit_status == TerminalExitStatus(exit_code=3, signal=None)
    assert await finished(service, terminal) == {
        "output": f"out\nerr\nv\nhome-is-kept\n{tmp_path}\n",
        "truncated": False,
        "exitStatus": {"exitCode": 3, "signal": None},
    }
    assert b"".join(data for _, data in events.output).decode().startswith("out\nerr\n")
    assert events.exits == [(terminal, 3, None)]


async def test_cwd_may_be_any_directory_of_the_workspace(
    service: TerminalService, tmp_path: Path
) -> None:
    terminal = await run(service, "pwd", cwd=str(tmp_path / "sub"))
    assert (await finished(service, terminal))["output"] == f"{tmp_path / 'sub'}\n"


async def test_output_has_no_exit_status_while_running(service: TerminalService) -> None:
    terminal = await run(service, "sh", "-c", "echo started; exec sleep 30")
    deadline = time.monotonic() + 5
    while (await service.output(ids(terminal))).output != "started\n":
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    assert msgspec.to_builtins(await service.output(ids(terminal))) == {
        "output": "started\n",
        "truncated": False,
    }


async def test_kill_ends_the_command_and_the_terminal_stays_readable(
    service: TerminalService, events: Events
) -> None:
    terminal = await run(service, "sh", "-c", "echo before; exec sleep 30")
    waiter = asyncio.ensure_future(service.wait_for_exit(ids(terminal)))
    await asyncio.sleep(0.1)
    assert await service.kill(ids(terminal)) == {}
    assert await asyncio.wait_for(waiter, 5) == TerminalExitStatus(signal="SIGTERM")
    result = await finished(service, terminal)
    assert result["output"] == "before\n"
    assert result["exitStatus"] == {"exitCode": None, "signal": "SIGTERM"}
    assert await service.kill(ids(terminal)) == {}  # killing again is harmless


async def test_a_command_ignoring_sigterm_gets_sigkill_after_the_grace(
    service: TerminalService,
) -> None:
    terminal = await run(service, "sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done")
    while not (await service.output(ids(terminal))).output:
        await asyncio.sleep(0.01)
    started = time.monotonic()
    await service.kill(ids(terminal))
    assert 0.3 <= time.monotonic() - started < 3
    assert (await finished(service, terminal))["exitStatus"]["signal"] == "SIGKILL"


async def test_kill_and_release_reach_the_whole_process_group(service: TerminalService) -> None:
    terminal = await run(service, "sh", "-c", "sleep 30 & echo $!; wait")
    while not (await service.output(ids(terminal))).output:
        await asyncio.sleep(0.01)
    child = int((await service.output(ids(terminal))).output)
    await service.release(ids(terminal))
    # The group was signalled; on a loaded machine its last member takes a moment to die.
    async with asyncio.timeout(10):
        while not gone(child):
            await asyncio.sleep(0.01)


async def test_release_makes_the_id_unknown(service: TerminalService) -> None:
    terminal = await run(service, "sleep", "30")
    waiter = asyncio.ensure_future(service.wait_for_exit(ids(terminal)))
    await asyncio.sleep(0.05)  # the wait is under way when the release comes
    assert await service.release(ids(terminal)) == {}
    assert (await asyncio.wait_for(waiter, 5)).signal == "SIGTERM"
    for method in (service.output, service.wait_for_exit, service.kill, service.release):
        with pytest.raises(RpcError) as caught:
            await method(ids(terminal))
        assert caught.value.code == RESOURCE_NOT_FOUND
        assert f"unknown terminal {terminal!r}" in caught.value.message


async def test_a_terminal_belongs_to_its_session(service: TerminalService) -> None:
    terminal = await run(service, "true")
    with pytest.raises(RpcError, match="unknown terminal"):
        await service.output(
            msgspec.Raw(json.dumps({"sessionId": "other", "terminalId": terminal}).encode())
        )


async def test_a_background_child_holding_the_pipe_does_not_delay_the_exit(
    service: TerminalService,
) -> None:
    terminal = await run(service, "sh", "-c", "sleep 30 & echo bg")
    started = time.monotonic()
    await asyncio.wait_for(service.wait_for_exit(ids(terminal)), 5)
    assert time.monotonic() - started < terminals.EXIT_DRAIN + 1


async def test_a_chatty_command_never_blocks_and_memory_stays_bounded(
    service: TerminalService,
) -> None:
    terminal = await run(
        service, sys.executable, "-c", "import sys; sys.stdout.write('y' * 30_000_000)"
    )
    result = await finished(service, terminal)
    assert result["exitStatus"] == {"exitCode": 0, "signal": None}
    assert result["truncated"] is True
    assert result["output"] == "y" * 10_000  # the default limit of this service
    assert len(service._terminals[terminal].output._buffer) <= 3 * 64 * 1024


@pytest.mark.parametrize(
    ("limit", "text", "expected", "truncated"),
    [
        (None, "short", "short", False),
        (5, "12345", "12345", False),
        (5, "123456", "23456", True),
        (0, "abc", "", True),
        # "é" is 2 bytes, "€" 3, "😀" 4: the cut never splits one
        (5, "aé€😀", "😀", True),
        (7, "aé€😀", "€😀", True),
        (9, "aé€😀", "é€😀", True),
        (100_000, "x" * 20_000, "x" * 16_000, True),  # capped by max_output_limit
    ],
)
async def test_output_byte_limit_truncates_from_the_start_at_a_character_boundary(
    tmp_path: Path, limit: int | None, text: str, expected: str, truncated: bool
) -> None:
    service = TerminalService(Workspace([tmp_path]), max_output_limit=16_000)
    script = f"import sys; sys.stdout.buffer.write({text.encode()!r})"
    try:
        terminal = await run(service, sys.executable, "-c", script, outputByteLimit=limit)
        result = await finished(service, terminal)
    finally:
        await service.close_all()
    assert (result["output"], result["truncated"]) == (expected, truncated)


@pytest.mark.parametrize(
    ("data", "final", "expected"),
    [
        (b"ok \xe2\x82", False, "ok "),  # the rest of "€" has not arrived yet
        (b"ok \xe2\x82", True, "ok \ufffd"),  # and never will
        (b"\xf0\x9f\x98\x80", False, "😀"),
        (b"bin \xff\xfe", False, "bin \ufffd\ufffd"),
    ],
)
def test_an_incomplete_last_character_waits_for_its_bytes(
    data: bytes, final: bool, expected: str
) -> None:
    output = terminals._Output(100)
    output.append(data)
    assert output.text(final=final) == (expected, False)


@pytest.mark.parametrize(
    ("fields", "code", "text"),
    [
        ({"command": "no-such-command-xyz"}, RESOURCE_NOT_FOUND, "command not found"),
        ({"command": ""}, INVALID_PARAMS, "the command is empty"),
        ({"command": "echo", "args": ["a\0b"]}, INVALID_PARAMS, "NUL byte"),
        ({"command": "true", "env": [{"name": "", "value": "x"}]}, INVALID_PARAMS, "name ''"),
        ({"command": "true", "env": [{"name": "A", "value": "\0"}]}, INVALID_PARAMS, "NUL"),
        ({"command": "true", "cwd": "/"}, INVALID_PARAMS, "outside this session's workspace"),
        ({"command": "true", "cwd": "sub"}, INVALID_PARAMS, "not an absolute path"),
        ({"args": ["x"]}, INVALID_PARAMS, "missing required field `command`"),
        # Run exactly as asked or not at all: never `rm` without its arguments, nor elsewhere.
        ({"command": "rm", "args": ["-rf", "build", 7]}, INVALID_PARAMS, "at `$.args[2]`"),
        ({"command": "true", "env": [{"name": "A"}]}, INVALID_PARAMS, "at `$.env[0]`"),
        ({"command": "true", "cwd": 5}, INVALID_PARAMS, "at `$.cwd`"),
    ],
)
async def test_commands_that_cannot_start(
    service: TerminalService, fields: dict[str, Any], code: int, text: str
) -> None:
    with pytest.raises(RpcError) as caught:
        await service.create(params(**fields))
    assert caught.value.code == code
    assert text in caught.value.message


async def test_a_file_that_is_not_executable(service: TerminalService, tmp_path: Path) -> None:
    (tmp_path / "script.sh").write_text("echo hi\n")
    with pytest.raises(RpcError) as caught:
        await service.create(params(command=str(tmp_path / "script.sh")))
    assert (caught.value.code, caught.value.data["reason"]) == (INVALID_PARAMS, "permission_denied")


async def test_close_all_ends_every_command_and_refuses_new_ones(tmp_path: Path) -> None:
    service = TerminalService(Workspace([tmp_path]), kill_grace=0.3)
    pids = []
    for script in ("echo $$; exec sleep 30", "trap '' TERM; echo $$; sleep 30 & echo $!; wait"):
        terminal = await run(service, "sh", "-c", script)
        while len((await service.output(ids(terminal))).output.split()) < script.count("echo"):
            await asyncio.sleep(0.01)
        pids += [int(pid) for pid in (await service.output(ids(terminal))).output.split()]
    await service.close_all()
    assert [pid for pid in pids if not gone(pid)] == []
    with pytest.raises(RpcError, match="closing"):
        await run(service, "true")


async def test_the_watchdog_is_started_once_and_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[asyncio.subprocess.Process] = []
    spawn = asyncio.create_subprocess_exec

    async def spawn_watchdog(*argv: Any, **options: Any) -> asyncio.subprocess.Process:
        started.append(await spawn(*argv, **options))
        return started[-1]

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spawn_watchdog)
    service = TerminalService(Workspace([tmp_path]))
    for terminal in await asyncio.gather(run(service, "true"), run(service, "true")):
        await finished(service, terminal)
    await finished(service, await run(service, "true"))
    [watchdog] = started
    assert watchdog is service._reaper._process and watchdog.returncode is None
    await service.close_all()
    assert watchdog.returncode == 0 and not os.path.exists(f"/proc/{watchdog.pid}")


def running(*argv: str) -> list[int]:
    """The live processes whose command line is `argv`."""
    wanted = "\0".join(argv) + "\0"
    pids = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and (entry / "cmdline").read_text() == wanted:
                pids.append(int(entry.name))
    return [pid for pid in pids if not gone(pid)]


@pytest.mark.parametrize("watchdog", ["starting", "running"])
async def test_a_command_starting_while_the_session_closes_is_ended_too(
    tmp_path: Path, watchdog: str
) -> None:
    service = TerminalService(Workspace([tmp_path]), kill_grace=0.3)
    if watchdog == "running":
        await finished(service, await run(service, "true"))
    argv = ("sleep", f"{60 + random.random():.9f}")  # a command line no other process has
    creating = asyncio.ensure_future(run(service, *argv))
    await asyncio.sleep(0)  # under way: starting the watchdog, or the command
    await service.close_all()
    with pytest.raises(RpcError, match="closing"):
        await creating
    assert running(*argv) == []
    assert service._reaper._process is None


async def test_a_group_seen_gone_is_never_signalled_again(
    service: TerminalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = await run(service, "true")
    await finished(service, terminal)
    signals: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "killpg", lambda pgid, number: signals.append((pgid, number)))
    await service.release(ids(terminal))  # by now, the group id may be another process's
    assert signals == []


@pytest.mark.parametrize(
    "argv,shown",
    [
        (["sh", "-c", "printf 'a %s' 1 && echo done"], "printf 'a %s' 1 && echo done"),
        (["/bin/bash", "-lc", "make test"], "make test"),
        (["pytest", "-k", "two words"], "pytest -k 'two words'"),
    ],
)
def test_commands_are_shown_as_typed(argv: list[str], shown: str) -> None:
    assert command_line(argv) == shown


async def test_a_shell_line_without_args_runs_through_the_users_shell(
    service: TerminalService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's older adapter and Kimi CLI send a whole shell line as `command`."""
    monkeypatch.setenv("SHELL", "/bin/bash")
    started: list[str] = []
    service._on_start = lambda terminal, command, cwd: started.append(command)
    line = f"echo hi && touch {tmp_path}/x.txt; echo $((6 * 7)) | sed s/4/four/"
    output = await finished(service, await run(service, line))
    assert output["output"] == "hi\nfour2\n"
    assert output["exitStatus"]["exitCode"] == 0
    assert (tmp_path / "x.txt").exists()
    assert started == [line]


@pytest.mark.parametrize(
    ("command", "args", "expected"),
    [
        ("echo hi && touch x", [], ["/bin/sh", "-c", "echo hi && touch x"]),
        ("ls -la", [], ["/bin/sh", "-c", "ls -la"]),
        ("cat *.py", [], ["/bin/sh", "-c", "cat *.py"]),
        ("ls", [], None),
        ("/usr/bin/env", [], None),
        # With args the agent gave an argv: run exactly that, never through a shell.
        ("echo hi && touch x", ["y"], None),
        ("git", ["status"], None),
    ],
)
def test_which_commands_are_shell_lines(
    command: str, args: list[str], expected: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELL", "/bin/sh")
    assert terminals.shell_argv(command, args) == expected


@pytest.mark.parametrize("shell", [None, "", "relative-shell", "/no/such/shell"])
def test_without_a_usable_shell_it_is_bin_sh(
    shell: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shell is None:
        monkeypatch.delenv("SHELL", raising=False)
    else:
        monkeypatch.setenv("SHELL", shell)
    assert terminals.shell_argv("a && b", []) == ["/bin/sh", "-c", "a && b"]


async def test_an_executable_whose_path_has_a_space_runs_directly(
    service: TerminalService, tmp_path: Path
) -> None:
    program = tmp_path / "my tools" / "say hi"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\necho direct\n")
    program.chmod(0o755)
    output = await finished(service, await run(service, str(program)))
    assert output["output"] == "direct\n"
