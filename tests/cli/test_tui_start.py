"""One handshake and one session per conversation, whatever order the agent answers in.

The real `acp-tui` TUI runs on a pseudo-terminal with `--transcript`, and the transcript is
counted: the app once started the agent twice (two `initialize`, two `session/new`), and an
agent answering those out of order then showed one session while prompts went to the other.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support import TEST_AGENTS
from tests.support.pilot import demo_app, demo_workspace, send, wait_idle, wait_started
from tests.support.ui import message_texts

OUT_OF_ORDER = [
    sys.executable,
    str(TEST_AGENTS / "out_of_order_agent.py"),
]


def _messages(transcript: Path) -> list[dict[str, Any]]:
    if not transcript.exists():
        return []
    lines = transcript.read_text().splitlines()
    return [json.loads(line) for line in lines if line.endswith("}")]


def _sent(transcript: Path, method: str) -> list[dict[str, Any]]:
    return [
        entry["msg"]
        for entry in _messages(transcript)
        if entry["dir"] == "send" and entry["msg"].get("method") == method
    ]


def _answer_to(transcript: Path, request: dict[str, Any]) -> dict[str, Any] | None:
    for entry in _messages(transcript):
        message = entry["msg"]
        if (
            entry["dir"] == "recv"
            and message.get("id") == request["id"]
            and "method" not in message
        ):
            return message
    return None


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


@pytest.mark.parametrize("agent", [[], ["--", *OUT_OF_ORDER]], ids=["demo", "out-of-order"])
def test_a_tui_start_sends_one_initialize_and_one_session_new(
    tmp_path: Path, agent: list[str]
) -> None:
    transcript = tmp_path / "transcript.jsonl"
    argv = [sys.executable, "-m", "acp_tui", "--cwd", str(tmp_path)]
    argv += ["--transcript", str(transcript), *agent]
    env = {**os.environ, "ACP_TUI_DEMO_SPEED": "0", "TERM": "xterm-256color"}
    env["XDG_DATA_HOME"] = env["XDG_CONFIG_HOME"] = str(tmp_path / "home")
    master, slave = pty.openpty()
    process = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    threading.Thread(target=_drain, args=(master,), daemon=True).start()
    try:
        deadline = time.monotonic() + 30
        while not (news := _sent(transcript, "session/new")) or not _answer_to(transcript, news[0]):
            assert time.monotonic() < deadline, "the TUI never opened a session"
            time.sleep(0.1)
        time.sleep(1.0)  # a second start would have sent its own by now
        os.write(master, b"hello\r")
        while not (prompts := _sent(transcript, "session/prompt")) or not _answer_to(
            transcript, prompts[0]
        ):
            assert time.monotonic() < deadline, "the prompt never finished"
            time.sleep(0.1)
    finally:
        process.terminate()
        process.wait(timeout=20)
        os.close(master)
    assert len(_sent(transcript, "initialize")) == 1
    news = _sent(transcript, "session/new")
    assert len(news) == 1
    answer = _answer_to(transcript, news[0])
    assert answer is not None
    assert prompts[0]["params"]["sessionId"] == answer["result"]["sessionId"]


async def test_an_agent_answering_out_of_order_shows_the_prompted_session(
    tmp_path: Path,
) -> None:
    workspace = demo_workspace(tmp_path / "workspace")
    app = demo_app(workspace, tmp_path / "state", argv=OUT_OF_ORDER)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        await send(app, pilot, "hello there")
        await wait_idle(app, pilot)
        assert message_texts(app) == ["hello there", "echo: hello there"]
        assert app.session is not None
        assert [c.name for c in app.session.state.commands] == ["hello"]
