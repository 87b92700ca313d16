"""Starts an agent command, owns its pipes, keeps its stderr, and sees to its death.

The agent runs in its own process group so that a Ctrl+C meant for acp-tui (which turns it into
`session/cancel`) does not kill the agent, and so that shutting down reaches whatever the agent
spawned too. Shutdown follows the ladder real agents need: close stdin, wait, SIGTERM, SIGKILL.

An agent spawned ahead (`acp_tui.transport.head_start.HeadStart`) is taken by the first
`AgentProcess.start` of its command.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shlex
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from acp_tui.text import shorten
from acp_tui.transport.head_start import HeadStart, environment, kill_unused, spawn

STDERR_KEEP_BYTES = 256 * 1024
"""How much of the agent's stderr is kept for the user to read; the rest is counted, not kept,
so an agent that floods stderr can neither block on a full pipe nor fill our memory."""


PIPE_READ = 64 * 1024
"""Bytes asked of the agent's stdout and stderr a read: what a pipe holds."""


class LaunchError(Exception):
    """The agent command could not be started."""


class StderrTail:
    """The last `STDERR_KEEP_BYTES` of a stream, and how much went by in all."""

    def __init__(self, keep: int = STDERR_KEEP_BYTES) -> None:
        self._keep = keep
        self._chunks: deque[bytes] = deque()
        self._kept = 0
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self._chunks.append(chunk)
        self._kept += len(chunk)
        while self._kept - len(self._chunks[0]) >= self._keep:
            self._kept -= len(self._chunks.popleft())

    def text(self, limit: int | None = None) -> str:
        data = b"".join(self._chunks)[-(limit or self._keep) :]
        return data.decode("utf-8", errors="replace")

    def last_lines(self, count: int = 10) -> str:
        return "\n".join(self.text(16 * 1024).rstrip().splitlines()[-count:])


class _Adopted:
    """The agent's process (spawned by `HeadStart` or by `AgentProcess.start`), with streams
    and a `wait` as `asyncio.subprocess.Process` has: `wait` returns once the process has
    exited and its output pipes are closed (a child of the agent may hold them: the shutdown
    ladder then signals its group). A thread reaps it, as asyncio's child watchers only know
    the processes asyncio spawned."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
        pipes_closed: list[asyncio.Future[None]],
    ) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin: asyncio.StreamWriter | None = stdin
        self.stdout: asyncio.StreamReader | None = stdout
        self.stderr: asyncio.StreamReader | None = stderr
        loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = loop.create_future()
        self._ended = asyncio.gather(self._exited, *pipes_closed)
        threading.Thread(target=self._reap, args=(loop,), name="agent reaper", daemon=True).start()

    @classmethod
    async def adopt(cls, popen: subprocess.Popen[bytes]) -> _Adopted:
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        loop = asyncio.get_running_loop()
        readers, closed = [], []
        for pipe in (popen.stdout, popen.stderr):
            reader, lost = asyncio.StreamReader(), loop.create_future()
            await loop.connect_read_pipe(functools.partial(_ReadPipe, reader, lost), pipe)
            readers.append(reader)
            closed.append(lost)
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), popen.stdin
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        return cls(popen, writer, readers[0], readers[1], closed)

    def _reap(self, loop: asyncio.AbstractEventLoop) -> None:
        code = self._popen.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: no one waits any more
            loop.call_soon_threadsafe(_resolve, self._exited, code)

    @property
    def returncode(self) -> int | None:
        return self._exited.result() if self._exited.done() else None

    async def wait(self) -> int:
        await asyncio.shield(self._ended)
        return self._exited.result()

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            self._popen.send_signal(sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class _ReadPipe(asyncio.StreamReaderProtocol):
    """A pipe from the agent into `reader`; `lost` is done once it is closed."""

    def __init__(self, reader: asyncio.StreamReader, lost: asyncio.Future[None]) -> None:
        super().__init__(reader)
        self._lost = lost

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        # asyncio reads a pipe 256 KB at a time; a pipe holds 64 KB, and a buffer over 128 KB
        # is mapped and unmapped by malloc on every read, which makes each read dearer
        # (bench/README.md, "Sixth pass: the tail, the pipe, start-up's dataclasses"). (An
        # attribute of asyncio's pipe transport.)
        if hasattr(transport, "max_size"):
            transport.max_size = PIPE_READ

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        _resolve(self._lost, None)


def _resolve(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def not_found(program: str, cwd: Path, env: Mapping[str, str]) -> str:
    """Why `program` could not be started, saying where it was looked for: the path it names
    (a relative one from `cwd`, as the system takes it), else every directory of PATH."""
    if os.sep not in program:
        path = env.get("PATH", os.defpath)
        return f"agent command not found: {program} (looked in PATH: {shorten(path, 400)})"
    where = os.path.join(cwd, program)
    if os.path.isfile(where):  # there: what is missing is the interpreter its `#!` names
        try:
            with open(where, "rb") as script:
                first = script.readline(200).decode(errors="replace").strip()
        except OSError:
            first = ""
        interpreter = f" ({first[2:].strip()})" if first.startswith("#!") else ""
        return f"cannot start {where}: its interpreter{interpreter} was not found"
    return f"agent command not found: {where}"


class AgentProcess:
    def __init__(
        self,
        process: _Adopted,
        argv: Sequence[str],
        on_stderr: Callable[[bytes], None] | None,
    ) -> None:
        self.process = process
        self.argv = list(argv)
        self.stderr = StderrTail()
        self._on_stderr = on_stderr
        self._stderr_task = asyncio.get_running_loop().create_task(self._drain_stderr())

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
        head_start: HeadStart | None = None,
    ) -> AgentProcess:
        """Spawn `argv` in `cwd` with `env` laid over our environment (or take the agent
        `head_start` spawned so)."""
        if not argv:
            raise LaunchError("no agent command given")
        full_env = environment(env)
        popen = head_start.take(argv, cwd, full_env) if head_start is not None else None
        if popen is None:
            try:
                popen = spawn(argv, cwd, full_env)
            except FileNotFoundError as exc:
                if not cwd.is_dir():  # Popen says the same of a missing directory
                    raise LaunchError(f"the workspace is not a directory: {cwd}") from exc
                raise LaunchError(not_found(argv[0], cwd, full_env)) from exc
            except PermissionError as exc:
                program = os.path.join(cwd, argv[0]) if os.sep in argv[0] else argv[0]
                raise LaunchError(f"agent command is not executable: {program}") from exc
            except (OSError, ValueError) as exc:  # ValueError: a NUL byte, a name with '='
                raise LaunchError(f"cannot start {shlex.join(argv)}: {exc}") from exc
        try:
            adopted = await _Adopted.adopt(popen)
        except BaseException:  # cancelled (acp-tui quit as it started): no one else will
            kill_unused(popen)
            raise
        return cls(adopted, argv, on_stderr)

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.process.stdout is not None
        return self.process.stdout

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def exit_description(self) -> str:
        """How the agent ended, in one line, with the last of its stderr."""
        code = self.process.returncode
        if code is None:
            what = "closed its output but is still running"
        elif code < 0:
            try:
                what = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                what = f"was killed by signal {-code}"
        else:
            what = f"exited with code {code}"
        tail = " | ".join(line.strip() for line in self.stderr.last_lines(3).splitlines())
        if len(tail) > 300:
            tail = "…" + tail[-300:]
        return f"the agent {what}" + (f" (stderr: {tail})" if tail else "")

    async def wait(self) -> int:
        code = await self.process.wait()
        # stderr may still hold the agent's last words; read them before anyone asks.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        return code

    async def close(self, grace: float = 2.0) -> int:
        """Close stdin and give the agent `grace` seconds to leave; then terminate, then kill."""
        if self.process.returncode is None:
            with contextlib.suppress(ConnectionError, RuntimeError):
                self.stdin.close()
            for sig in (None, signal.SIGTERM, signal.SIGKILL):
                if sig is not None:
                    self._signal_group(sig)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.process.wait(), grace)
                    break
        else:
            # The agent is gone, but whatever it started in its group may not be.
            self._signal_group(signal.SIGKILL)
        return await self.wait()

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    async def _drain_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while chunk := await stream.read(PIPE_READ):
            self.stderr.add(chunk)
            if self._on_stderr is not None:
                self._on_stderr(chunk)
