"""An agent spawned before acp-tui has imported the rest of itself.

An agent takes a while to start (a Python one a tenth of a second, a Node one most of a
second), and so does acp-tui: `HeadStart` spawns the agent as soon as the command line is read,
so that both start up side by side; the first `AgentProcess.start` of that command takes it.
This module imports nothing of asyncio (a tenth of acp-tui's start-up), so that the agent
is spawned before that is imported.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


class HeadStart:
    """An agent spawned before acp-tui's event loop runs, for its first `AgentProcess.start`:
    the one of the same command, in the same directory, with the same environment, takes it.
    Any other start, or the end of acp-tui, kills it unused."""

    def __init__(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None) -> None:
        self._key = (list(argv), cwd, environment(env))
        self._popen: subprocess.Popen[bytes] | None = None
        if not argv:
            return
        # A command that cannot start: the start that takes it says what is wrong.
        with contextlib.suppress(OSError, ValueError):
            self._popen = spawn(argv, cwd, self._key[2])

    def take(
        self, argv: Sequence[str], cwd: Path, env: dict[str, str]
    ) -> subprocess.Popen[bytes] | None:
        """The agent, if it was spawned as asked here (once); else None, and it is killed."""
        popen, self._popen = self._popen, None
        if popen is not None and self._key != (list(argv), cwd, env):
            kill_unused(popen)
            return None
        return popen

    def discard(self) -> None:
        """Kill the agent if no start took it."""
        popen, self._popen = self._popen, None
        if popen is not None:
            kill_unused(popen)


def spawn(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """The agent's process, with pipes for its stdio, in a process group of its own."""
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def environment(env: Mapping[str, str] | None) -> dict[str, str]:
    """The agent's environment: ours with `env` laid over it."""
    return {**os.environ, **(env or {})}


def kill_unused(popen: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(popen.pid, signal.SIGKILL)
    popen.wait()
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        if pipe is not None:
            pipe.close()
