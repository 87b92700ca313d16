"""Starts an agent command, owns its pipes, keeps its stderr, and sees to its death.

The agent runs in its own process group so that a Ctrl+C meant for acp-tui (which turns it into
`session/cancel`) does not kill the agent, and so that shutting down reaches whatever the agent
spawned too. Shutdown follows the ladder real agents need: close stdin, wait, SIGTERM, SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

STDERR_KEEP_BYTES = 256 * 1024
"""How much of the agent's stderr is kept for the user to read; the rest is counted, not kept,
so an agent that floods stderr can neither block on a full pipe nor fill our memory."""


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


class AgentProcess:
    def __init__(
        self,
        process: asyncio.subprocess.Process,
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
    ) -> AgentProcess:
        """Spawn `argv` in `cwd` with `env` laid over our environment."""
        if not argv:
            raise LaunchError("no agent command given")
        full_env = {**os.environ, **(env or {})}
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=full_env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise LaunchError(f"agent command not found: {argv[0]}") from exc
        except PermissionError as exc:
            raise LaunchError(f"agent command is not executable: {argv[0]}") from exc
        except OSError as exc:
            raise LaunchError(f"cannot start {shlex.join(argv)}: {exc}") from exc
        return cls(process, argv, on_stderr)

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
        while chunk := await stream.read(65536):
            self.stderr.add(chunk)
            if self._on_stderr is not None:
                self._on_stderr(chunk)
