"""`terminal/*`: commands the agent runs through acp-tui, each a real process the user can see.

What the agent gets
    `terminal/create` starts `command` with `args` directly (the spec defines no shell), with
    one exception real agents rely on: a `command` with no `args` that is a whole shell line
    (`echo hi && touch x`: whitespace or shell syntax, and not an executable's path) runs as
    `$SHELL -c command` (`/bin/sh` without `SHELL`), as Zed runs it. `env` is laid over
    acp-tui's environment, in `cwd` (confined to the workspace like any path; default: the
    session's cwd), stdin from /dev/null and stderr merged into stdout as a terminal shows them.
    It answers with the terminal id at once. `output`, `wait_for_exit`, `kill` and `release`
    follow the spec; an unknown or released id (or one of another session) is `-32002`.

Output
    Read continuously as it comes, so a chatty command never blocks on a full pipe, and handed
    to `on_output` chunk by chunk for the live view. At most `outputByteLimit` bytes are kept
    (default `DEFAULT_OUTPUT_LIMIT`, and never more than `MAX_OUTPUT_LIMIT`, so memory stays
    bounded whatever the agent asks): older output is dropped from the start, at a UTF-8
    character boundary, and `truncated` says so. Bytes that are not UTF-8 are shown as U+FFFD.

Ending
    Each command leads its own process group (a new session: Ctrl+C in acp-tui's terminal does
    not reach it), and `kill`, `release` and `close_all` signal the whole group: SIGTERM, then
    SIGKILL after `kill_grace` seconds; they return once the command has exited. A group once
    seen empty is never signalled again: its id may belong to another process by then. Exit
    status is `exitCode`, or `signal` by name ("SIGKILL"). The event loop reaps every child: no
    zombies.

    If acp-tui itself dies without `close_all` (SIGKILL, a crash), a small watchdog process,
    started with the first terminal in its own session, notices: it holds the read end of a
    pipe whose write end only acp-tui has, sees end-of-file when acp-tui is gone, and kills
    every process group still registered. `PR_SET_PDEATHSIG` was not enough: it reaches only
    the direct child (not `make`'s compilers), fires when the *thread* that forked exits, and
    needs a `preexec_fn`, which is unsafe in a process with threads. Processes that leave
    their group on purpose (`setsid`, daemons) are beyond any of these; only a cgroup could
    hold them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from acp_tui.protocol.client_methods import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    EnvVariable,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalRequest,
    decode_params,
)
from acp_tui.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError
from acp_tui.workspace import Workspace

DEFAULT_OUTPUT_LIMIT = 1024 * 1024
"""Bytes of output kept when the agent sets no `outputByteLimit`."""

MAX_OUTPUT_LIMIT = 16 * 1024 * 1024
"""The most output kept per terminal, whatever `outputByteLimit` asks."""

KILL_GRACE = 2.0
"""Seconds between SIGTERM (a chance to clean up) and SIGKILL."""

DEATH_WAIT = 5.0
"""Seconds to wait for a SIGKILLed command to be reaped before giving up on it: a process in
uninterruptible sleep (a hung network file system) cannot die at once, and acp-tui must still
be able to quit."""

EXIT_DRAIN = 0.25
"""Seconds after the command exits during which its last output may still be in the pipe. A
background child that keeps the pipe open does not hold the exit status back longer."""

_CLOSING = "the session is closing; no new terminals"

OnOutput = Callable[[str, bytes], None]
"""(terminal id, bytes just read): for the live view of a tool call embedding the terminal."""

OnExit = Callable[[str, int | None, str | None], None]
"""(terminal id, exit code, signal name): once, when the command has exited."""
OnStart = Callable[[str, str, str], None]
"""(terminal id, the command line as a shell would show it, its working directory)."""

_REAPER_SCRIPT = """\
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
groups = set()
for line in sys.stdin.buffer:
    (groups.add if line[:1] == b"+" else groups.discard)(int(line[1:]))
def signal_all(number):
    alive = False
    for group in groups:
        try:
            os.killpg(group, number)
            alive = True
        except OSError:
            pass
    return alive
deadline = time.monotonic() + float(sys.argv[1])
alive = signal_all(signal.SIGTERM)
while alive and time.monotonic() < deadline:
    time.sleep(0.05)
    alive = signal_all(0)
signal_all(signal.SIGKILL)
"""
"""The watchdog: reads `+pgid`/`-pgid` lines on stdin; at end-of-file (acp-tui is gone, or
closed it), terminates the groups still listed. Kept tiny: it starts with `python -I -S`."""


class _Reaper:
    """The watchdog process that kills our terminals' process groups if acp-tui dies."""

    def __init__(self, grace: float) -> None:
        self._grace = grace
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        """Held while the watchdog starts: concurrent `terminal/create`s start one, and `stop`
        waits for one being started rather than miss it."""

    async def start(self) -> None:
        async with self._lock:
            if self._process is not None:
                return
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                "-S",
                "-c",
                _REAPER_SCRIPT,
                str(self._grace),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )

    def watch(self, pgid: int) -> None:
        self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        self._send(f"-{pgid}\n")

    def _send(self, line: str) -> None:
        process = self._process
        if process is not None and process.returncode is None and process.stdin is not None:
            process.stdin.write(line.encode())

    async def stop(self) -> None:
        """End the watchdog (every group it knew was forgotten first) and reap it."""
        async with self._lock:
            process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        await process.wait()


class _Output:
    """A terminal's output, bounded: the last `limit` bytes are kept (plus slack, so that
    trimming is amortised rather than a copy per chunk)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._buffer = bytearray()

    def append(self, data: bytes) -> None:
        self.total += len(data)
        self._buffer += data
        excess = len(self._buffer) - self.limit
        if excess > max(self.limit, 64 * 1024):
            del self._buffer[:excess]

    def text(self, *, final: bool) -> tuple[str, bool]:
        """The kept output as text, and whether older output was dropped. Until the command has
        exited, an incomplete character at the end waits for its last bytes."""
        data = self._buffer[len(self._buffer) - min(self.limit, len(self._buffer)) :]
        truncated = self.total > self.limit
        if truncated:
            data = data[_continuation_prefix(data) :]
        if not final:
            data = data[: len(data) - _incomplete_suffix(data)]
        return data.decode("utf-8", errors="replace"), truncated


def _continuation_prefix(data: bytearray) -> int:
    """How many bytes at the start continue a character cut off before them (at most 3)."""
    count = 0
    while count < min(3, len(data)) and data[count] & 0xC0 == 0x80:
        count += 1
    return count


def _incomplete_suffix(data: bytearray) -> int:
    """How many bytes at the end start a character whose last bytes have not arrived yet."""
    for back in range(1, min(4, len(data)) + 1):
        lead = data[-back]
        if lead & 0xC0 != 0x80:  # the last byte that starts a character
            return back if back < _character_length(lead) else 0
    return 0


def _character_length(lead: int) -> int:
    """The length of the UTF-8 sequence that `lead` starts."""
    if lead < 0x80 or lead >= 0xF8:  # ASCII, or a byte that never starts a character
        return 1
    if lead >= 0xF0:
        return 4
    return 3 if lead >= 0xE0 else 2


class _Terminal(asyncio.SubprocessProtocol):
    """One command: its process, its output, its exit. Also the protocol of its pipes."""

    def __init__(
        self,
        terminal_id: str,
        session_id: str,
        limit: int,
        on_output: OnOutput | None,
        on_finish: Callable[[_Terminal], None],
    ) -> None:
        self.id = terminal_id
        self.session_id = session_id
        self.output = _Output(limit)
        self.pid = 0
        self.transport: asyncio.SubprocessTransport | None = None
        self.exit_status: TerminalExitStatus | None = None
        self.leader_exited = asyncio.Event()
        """The command itself exited (its process group may live on)."""
        self.exited = asyncio.Event()
        """The exit status is final and the output has been read to the end (or `EXIT_DRAIN`
        passed)."""
        self.group_gone = False
        """The process group was seen empty: its id is free for the system to reuse by now, so
        it is never signalled again."""
        self._on_output = on_output
        self._on_finish = on_finish
        self._pipe_open = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport
        self.pid = transport.get_pid()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.output.append(data)
        if self._on_output is not None:
            self._on_output(self.id, data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._pipe_open = False
        if self.leader_exited.is_set():
            self._finish()

    def process_exited(self) -> None:
        assert self.transport is not None
        code = self.transport.get_returncode()
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"SIG{-code}"
            self.exit_status = TerminalExitStatus(exit_code=None, signal=name)
        else:
            self.exit_status = TerminalExitStatus(exit_code=code, signal=None)
        self.leader_exited.set()
        if self._pipe_open:
            asyncio.get_running_loop().call_later(EXIT_DRAIN, self._finish)
        else:
            self._finish()

    def _finish(self) -> None:
        if not self.exited.is_set():
            self.exited.set()
            self._on_finish(self)

    def signal_group(self, number: int) -> None:
        """Signal the whole group (0: only look), unless it is known to be gone. The group
        outlives its leader while any member lives."""
        if self.group_gone:
            return
        try:
            os.killpg(self.pid, number)
        except ProcessLookupError:
            self.group_gone = True
        except PermissionError:
            pass

    def group_alive(self) -> bool:
        self.signal_group(0)
        return not self.group_gone


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "fish"})


_SHELL_SYNTAX = re.compile(r"""[\s|&;<>()$`'"*?\[\]{}~#=!\\]""")


def shell_argv(command: str, args: Sequence[str]) -> list[str] | None:
    """`[$SHELL, "-c", command]` when the agent sent a shell line as `command` with no
    `args`; None when `command` names one executable."""
    if args or not _SHELL_SYNTAX.search(command) or os.access(command, os.X_OK):
        return None
    shell = os.environ.get("SHELL", "")
    if not (os.path.isabs(shell) and os.access(shell, os.X_OK)):
        shell = "/bin/sh"
    return [shell, "-c", command]


def command_line(argv: list[str]) -> str:
    """A command as the user would type it: the script of `sh -c SCRIPT`, else argv quoted."""
    if len(argv) == 3 and os.path.basename(argv[0]) in _SHELLS and argv[1] in ("-c", "-lc"):
        return argv[2]
    return shlex.join(argv)


class TerminalService:
    """Serves `terminal/*` for one session: starts, watches, and always ends its commands."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        on_start: OnStart | None = None,
        on_output: OnOutput | None = None,
        on_exit: OnExit | None = None,
        default_output_limit: int = DEFAULT_OUTPUT_LIMIT,
        max_output_limit: int = MAX_OUTPUT_LIMIT,
        kill_grace: float = KILL_GRACE,
    ) -> None:
        self.workspace = workspace
        self.default_output_limit = default_output_limit
        self.max_output_limit = max_output_limit
        self.kill_grace = kill_grace
        self._on_start = on_start
        self._on_output = on_output
        self._on_exit = on_exit
        self._terminals: dict[str, _Terminal] = {}
        self._ids = itertools.count(1)
        self._reaper = _Reaper(kill_grace)
        self._closed = False

    # -- terminal/create ----------------------------------------------------------------------

    async def create(self, params: msgspec.Raw) -> CreateTerminalResponse:
        request = decode_params(params, CreateTerminalRequest)
        if self._closed:
            raise RpcError(INTERNAL_ERROR, _CLOSING)
        shell = shell_argv(request.command, request.args)
        argv = shell or [request.command, *request.args]
        shown = request.command if shell else command_line(argv)
        if not request.command:
            raise RpcError(INVALID_PARAMS, "the command is empty")
        if any("\0" in arg for arg in argv):
            raise RpcError(INVALID_PARAMS, "the command or an argument contains a NUL byte")
        cwd = self.workspace.resolve_directory(request.cwd)
        env = _environment(cwd, request.env)
        limit = request.output_byte_limit
        limit = self.default_output_limit if limit is None else limit
        terminal = _Terminal(
            f"term-{next(self._ids)}",
            request.session_id,
            min(limit, self.max_output_limit),
            self._on_output,
            self._finished,
        )
        await self._reaper.start()
        try:
            await asyncio.get_running_loop().subprocess_exec(
                lambda: terminal,
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise RpcError(
                RESOURCE_NOT_FOUND,
                f"cannot run {request.command!r}: command not found",
                {"command": request.command, "reason": "not_found"},
            ) from exc
        except PermissionError as exc:
            raise RpcError(
                INVALID_PARAMS,
                f"cannot run {request.command!r}: permission denied",
                {"command": request.command, "reason": "permission_denied"},
            ) from exc
        except OSError as exc:
            raise RpcError(INTERNAL_ERROR, f"cannot run {request.command!r}: {exc}") from exc
        if self._closed:
            # `close_all` ran while the command was starting, and never saw it.
            await self._dispose([terminal])
            raise RpcError(INTERNAL_ERROR, _CLOSING)
        self._reaper.watch(terminal.pid)
        self._terminals[terminal.id] = terminal
        if self._on_start is not None:
            self._on_start(terminal.id, shown, str(cwd))
        return CreateTerminalResponse(terminal.id)

    def _finished(self, terminal: _Terminal) -> None:
        if not terminal.group_alive():
            self._reaper.forget(terminal.pid)
        if self._on_exit is not None and terminal.exit_status is not None:
            self._on_exit(terminal.id, terminal.exit_status.exit_code, terminal.exit_status.signal)

    # -- terminal/output, wait_for_exit, kill, release ----------------------------------------

    async def output(self, params: msgspec.Raw) -> TerminalOutputResponse:
        terminal = self._get(params)
        final = terminal.exited.is_set()
        text, truncated = terminal.output.text(final=final)
        if final and terminal.exit_status is not None:
            return TerminalOutputResponse(text, truncated, terminal.exit_status)
        return TerminalOutputResponse(text, truncated)

    async def wait_for_exit(self, params: msgspec.Raw) -> TerminalExitStatus:
        terminal = self._get(params)
        await terminal.exited.wait()
        assert terminal.exit_status is not None
        return terminal.exit_status

    async def kill(self, params: msgspec.Raw) -> dict[str, Any]:
        """End the command (and its group); the terminal stays readable until released."""
        await self._stop(self._get(params))
        return {}

    async def release(self, params: msgspec.Raw) -> dict[str, Any]:
        """End the command if it still runs and forget the terminal: its id is invalid after."""
        terminal = self._get(params)
        del self._terminals[terminal.id]
        await self._dispose([terminal])
        return {}

    async def close_all(self) -> None:
        """End every command and the watchdog: when the session ends or acp-tui quits."""
        self._closed = True
        terminals = list(self._terminals.values())
        self._terminals.clear()
        await self._dispose(terminals)
        await self._reaper.stop()

    def _get(self, params: msgspec.Raw) -> _Terminal:
        request = decode_params(params, TerminalRequest)
        terminal = self._terminals.get(request.terminal_id)
        if terminal is None or terminal.session_id != request.session_id:
            raise RpcError(
                RESOURCE_NOT_FOUND,
                f"unknown terminal {request.terminal_id!r}: never created in this session, "
                "or already released",
                {"terminalId": request.terminal_id, "reason": "unknown_terminal"},
            )
        return terminal

    async def _stop(self, terminal: _Terminal) -> None:
        """SIGTERM the group, SIGKILL what is left after the grace, wait for the exit."""
        if not terminal.leader_exited.is_set():
            terminal.signal_group(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(terminal.leader_exited.wait(), self.kill_grace)
        terminal.signal_group(signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(terminal.exited.wait(), DEATH_WAIT)

    async def _dispose(self, terminals: Sequence[_Terminal]) -> None:
        await asyncio.gather(*(self._stop(terminal) for terminal in terminals))
        for terminal in terminals:
            self._reaper.forget(terminal.pid)
            if terminal.transport is not None:
                terminal.transport.close()


def _environment(cwd: Path, variables: Sequence[EnvVariable]) -> dict[str, str]:
    """acp-tui's environment, with `PWD` telling the truth, and the agent's variables over it."""
    env = dict(os.environ, PWD=str(cwd))
    for variable in variables:
        if not variable.name or "=" in variable.name or "\0" in variable.name:
            raise RpcError(INVALID_PARAMS, f"invalid environment variable name {variable.name!r}")
        if "\0" in variable.value:
            raise RpcError(INVALID_PARAMS, f"the value of {variable.name} contains a NUL byte")
        env[variable.name] = variable.value
    return env
