"""SIGTERM and SIGHUP to the real TUI: the agent is stopped and the transcript is complete."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

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
