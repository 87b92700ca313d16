"""SIGTERM and SIGHUP to the real TUI: the agent is stopped and the transcript is complete;
closing its terminal (a pane) while it streams ends it, and all it started, every time."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import select
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`, read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (ProcessLookupError, FileNotFoundError):
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_ends_the_tui_like_quitting(tmp_path: Path, sig: signal.Signals) -> None:
    transcript = tmp_path / "transcript.jsonl"
    argv = [
        sys.executable,
        "-m",
        "acp_tui",
        "--cwd",
        str(tmp_path),
        "--transcript",
        str(transcript),
    ]
    env = {**os.environ, "ACP_TUI_DEMO_SPEED": "0", "TERM": "xterm-256color"}
    master, slave = pty.openpty()
    os.set_blocking(master, True)
    process = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    # The screen must be drained, or the app blocks writing to it.
    drain = threading.Thread(target=lambda: _drain(master), daemon=True)
    drain.start()
    try:
        deadline = time.monotonic() + 30
        while "session/new" not in _sent_methods(transcript):
            assert time.monotonic() < deadline, "the TUI never opened a session"
            time.sleep(0.1)
        time.sleep(0.5)  # the answer to session/new, then the agent is settled
        agents = children(process.pid)
        assert agents, "no agent process under the TUI"
        process.send_signal(sig)
        assert process.wait(timeout=20) == 128 + sig
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in agents) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in agents)
    lines = transcript.read_text().splitlines()
    assert all(json.loads(line)["dir"] in ("send", "recv") for line in lines)


def _sent_methods(transcript: Path) -> list[str]:
    if not transcript.exists():
        return []
    methods = []
    for line in transcript.read_text().splitlines():
        message = json.loads(line).get("msg") or {}
        methods.append(message.get("method", ""))
    return methods


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


# -- the pane closed while the agent streams -------------------------------------------------

HANGUPS = 12
AT_ONCE = 4
"""Runs hung up at the same time: enough to finish in seconds, few enough for two cores."""

EXIT_WITHIN = 15.0
"""Seconds a hung-up acp-tui may take to end: its watchdog gives up on the orderly shutdown
after 5, so anything near this is a hang, not a slow machine."""

CONTROLLING_TERMINAL = (
    "import fcntl, os, sys, termios; os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)
"""acp-tui as a pane runs it: leading a session whose controlling terminal is the pty, so
that closing the master sends it SIGHUP (and SIGCONT) from the kernel, as closing a pane does."""

COMMAND_AND_STREAM = f"""\
import sys
sys.path.insert(0, {str(Path(__file__).parents[1] / "agents" / "hostile")!r})
from _acp import SESSION_ID, Peer

peer = Peer()
peer.wait_for("session/prompt")
created = peer.request(
    "terminal/create",
    {{"sessionId": SESSION_ID, "command": "sh",
     "args": ["-c", "echo $$ > command.pid; exec sleep 60"]}},
)
peer.wait_for_answer(created)
while True:
    peer.say("and on " * 20)
"""
"""An agent that starts a long command in a terminal, then streams words without end."""


class HangupRun:
    """acp-tui in a pty of its own, on `agent_argv` (the demo agent when empty), in `workspace`."""

    def __init__(self, workspace: Path, agent_argv: list[str]) -> None:
        workspace.mkdir()
        self.workspace = workspace
        self.transcript = workspace / "transcript.jsonl"
        self._read_to = 0
        self._pending = b""
        argv = [
            *(sys.executable, "-c", CONTROLLING_TERMINAL, "-m", "acp_tui"),
            *("--cwd", str(workspace), "--transcript", str(self.transcript)),
            *("--no-checkpoints", "--permission", "allow"),
            *(["--", *agent_argv] if agent_argv else []),
        ]
        env = {
            **os.environ,
            "ACP_TUI_DEMO_SPEED": "0",
            "TERM": "xterm-256color",
            "XDG_DATA_HOME": str(workspace / "data"),
            "XDG_CONFIG_HOME": str(workspace / "config"),
        }
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env)
        os.close(slave)
        self._closing = threading.Event()
        # The screen must be drained, or the app blocks writing to it. The drain closes the
        # master itself: closed under a read in progress, it would stay open until that read
        # returned.
        self._drain = threading.Thread(target=self._drain_then_close, daemon=True)
        self._drain.start()

    def _drain_then_close(self) -> None:
        with contextlib.suppress(OSError):  # EIO: acp-tui is gone, and the pty with it
            while not self._closing.is_set():
                readable, _, _ = select.select([self.master], [], [], 0.05)
                if readable and not os.read(self.master, 1 << 16):
                    break
        os.close(self.master)

    def wait_for(self, found: Callable[[dict[str, Any]], bool], what: str) -> None:
        """Until acp-tui's transcript has a message `found` holds for."""
        _until(lambda: any(found(message) for message in self._new_messages()), what, self)

    def _new_messages(self) -> list[dict[str, Any]]:
        if not self.transcript.exists():
            return []
        with self.transcript.open("rb") as file:
            file.seek(self._read_to)
            data = self._pending + file.read()
        self._read_to += len(data) - len(self._pending)
        *lines, self._pending = data.split(b"\n")
        return [json.loads(line).get("msg") or {} for line in lines]

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def hang_up(self) -> None:
        """Close the pane: the master closes, with the app streaming into it."""
        self._closing.set()
        self._drain.join()

    def end(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.hang_up()


def _until(condition: Callable[[], bool], what: str, run: HangupRun) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert run.process.poll() is None, f"acp-tui ended before {what}"
        assert time.monotonic() < deadline, f"no {what} in a minute"
        time.sleep(0.02)


def _opened(message: dict[str, Any]) -> bool:
    return "sessionId" in (message.get("result") or {})


def _chunk(text: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a message is the agent's message chunk `text`."""

    def found(message: dict[str, Any]) -> bool:
        update = (message.get("params") or {}).get("update") or {}
        return update.get("sessionUpdate") == "agent_message_chunk" and (
            (update.get("content") or {}).get("text") == text
        )

    return found


def _hang_up_while_streaming(
    workspace: Path, agent_argv: list[str], prompt: str, streamed: str
) -> tuple[int | None, float, list[int]]:
    """Close the pane of acp-tui once the answer to `prompt` streams (its chunk `streamed` came):
    its exit status (None: it did not end), the seconds it took, and the processes it had
    that are still alive."""
    run = HangupRun(workspace, agent_argv)
    try:
        run.wait_for(_opened, "session")
        run.type(prompt + "\r")
        run.wait_for(_chunk(streamed), "streaming")
        processes = children(run.process.pid)
        command = workspace / "command.pid"
        if agent_argv:  # its command, which it started before it streamed
            _until(command.exists, "command", run)
            processes.append(int(command.read_text()))
        start = time.monotonic()
        run.hang_up()
        try:
            status: int | None = run.process.wait(timeout=EXIT_WITHIN)
        except subprocess.TimeoutExpired:
            status = None
        took = time.monotonic() - start
        deadline = time.monotonic() + 5
        while any(alive(pid) for pid in processes) and time.monotonic() < deadline:
            time.sleep(0.05)
        return status, took, [pid for pid in processes if alive(pid)]
    finally:
        run.end()


@pytest.mark.xdist_group("floods")  # one at a time: each keeps both cores busy
def test_closing_the_pane_while_it_streams_ends_acp_tui_every_time(tmp_path: Path) -> None:
    def one(number: int) -> tuple[int | None, float, list[int]]:
        return _hang_up_while_streaming(tmp_path / f"run-{number}", [], "long 200000", "5 ")

    with ThreadPoolExecutor(AT_ONCE) as pool:
        outcomes = list(pool.map(one, range(HANGUPS)))
    assert [status for status, _, _ in outcomes] == [128 + signal.SIGHUP] * HANGUPS, outcomes
    assert [left for _, _, left in outcomes] == [[]] * HANGUPS, "processes outlived acp-tui"
    for number in range(HANGUPS):  # the record kept what was streamed before the hangup
        prompt, *answer = _recorded_messages(tmp_path / f"run-{number}")
        assert prompt == ("user", "long 200000")
        assert any(role == "agent" and "1 2 3 4 5 " in text for role, text in answer)


@pytest.mark.xdist_group("floods")
def test_closing_the_pane_ends_the_agents_commands_too(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(COMMAND_AND_STREAM)
    status, _took, left = _hang_up_while_streaming(
        tmp_path / "run", [sys.executable, str(agent)], "go", "and on " * 20
    )
    assert status == 128 + signal.SIGHUP
    assert left == []


STUCK = """\
import subprocess, threading
from acp_tui.ui.hangup import SignalWatch

command = subprocess.Popen(["sleep", "60"], start_new_session=True)
SignalWatch(
    lambda status: print("asked to quit with", status, flush=True),
    hang_up=lambda: print("hung up", flush=True),
    record_busy=lambda: False,
    grace=0.5,
).start()
print(command.pid, flush=True)
threading.Event().wait()  # stuck on the loop's thread, as Textual's shutdown was
"""
"""A process whose shutdown never comes, with a command in a process group of its own."""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stuck_shutdown_is_ended_with_its_processes(sig: signal.Signals) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", STUCK], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert process.stdout is not None
        command = int(process.stdout.readline())
        process.send_signal(sig)
        assert process.wait(timeout=20) == 128 + sig
        said = process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert f"asked to quit with {128 + sig}" in said
    assert ("hung up" in said) == (sig == signal.SIGHUP)
    deadline = time.monotonic() + 5
    while alive(command) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(command)


def _recorded_messages(workspace: Path) -> list[tuple[str, str]]:
    """(role, text) of each message in the record of `workspace`'s one conversation."""
    database = workspace / "data" / "acp-tui" / "history.sqlite3"
    with contextlib.closing(sqlite3.connect(database)) as db:
        rows = db.execute("SELECT data FROM items WHERE kind = 'message' ORDER BY seq")
        messages = [json.loads(data) for (data,) in rows]
    return [
        (message["role"], "".join(part.get("text", "") for part in message["content"]))
        for message in messages
    ]
