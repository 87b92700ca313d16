"""The live protocol check: the agent's messages checked against the negotiated version's
schema in a worker process; a violation shows in the inspector and the status line, and the
conversation is shown as if nothing happened."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_tui.check.live import LiveCheck
from acp_tui.check.validator import Validator
from acp_tui.ui.widgets.inspector import Inspector
from acp_tui.ui.widgets.usage_bar import UsageBar
from tests.agents.hostile import HERE
from tests.support.pilot import send, wait_idle, wait_until
from tests.support.ui import message_texts, started_app

Run = Callable[..., Any]


def wire(tag: bytes, message: dict[str, Any]) -> tuple[bytes, bytes]:
    return tag, json.dumps({"jsonrpc": "2.0", **message}).encode()


def test_the_validator_learns_the_version_and_pairs_answers() -> None:
    validator = Validator()
    offer = {"id": 0, "method": "initialize", "params": {"protocolVersion": 2}}
    assert validator.take(*wire(b"S", offer)) == []
    # A v1-shaped answer to a v2 offer, claiming v1: checked as v1, and fine.
    answer = {"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}
    assert validator.take(*wire(b"R", answer)) == []
    assert validator.version == 1
    good = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    update = {"method": "session/update", "params": {"sessionId": "s", "update": good}}
    assert validator.take(*wire(b"R", update)) == []
    bad = {**update, "params": {"sessionId": "s", "update": {**good, "content": 7}}}
    [problem] = validator.take(*wire(b"R", bad))
    assert problem.startswith("ACP v1 agent session/update: $.params.update.content")
    # Our own lines and lines that are not JSON are never the agent's violations.
    assert validator.take(b"R", b"not json") == []
    assert validator.take(*wire(b"R", {"id": 99, "result": {}})) == []  # answers nothing of ours


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return functools.partial(started_app, tmp_path)


async def test_a_violation_is_shown_in_the_inspector_and_counted(run: Run) -> None:
    argv = [sys.executable, str(HERE / "flawed.py"), "bad-update"]
    async with run(argv=argv) as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        usage = app.chat.query_one(UsageBar)
        await wait_until(pilot, lambda: usage.violations > 0, timeout=30)
        assert usage.violations == 1
        assert "⚠ 1 protocol violation (F12)" in str(usage.render())
        inspector = app.chat.query_one(Inspector)
        [(_, text)] = [entry for entry in inspector._lines if entry[0] == "violation"]
        assert text.startswith("ACP v1 agent session/update: $.params.update.status")
        # The conversation is shown as the agent sent it.
        assert message_texts(app)[-1] == "Hello"


async def test_a_well_behaved_agent_shows_no_violation(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "tools")
        await wait_idle(app, pilot)
        await pilot.pause(0.5)
        assert app.chat.query_one(UsageBar).violations == 0
        live = app.conversation.live_check
        await wait_until(pilot, lambda: live is not None and live._process is not None)
        assert live is not None and live._process is not None  # it did check


async def test_a_flood_past_the_backlog_goes_unchecked_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("acp_tui.check.live.MAX_BACKLOG", 100)
    told: list[str] = []
    live = LiveCheck(lambda problem: None, on_behind=told.append)
    try:
        live.feed("recv", b"x" * 150 + b"\n")  # queued: the backlog was empty
        live.feed("recv", b"y\nz\n")
        live.feed("recv", b"w\n")
    finally:
        await live.close()
    assert live.unchecked == 3
    assert told == [
        "the live protocol check fell behind a flood of messages: lines past a 0 MB backlog "
        "go unchecked"
    ]


@pytest.mark.parametrize("output_format", ["text", "jsonl"])
async def test_headless_says_each_violation_when_asked(tmp_path: Path, output_format: str) -> None:
    """`--live-check`: a short run (over before the validator would have started) is checked
    to its last message; the run itself is unchanged."""
    argv = [
        sys.executable, "-m", "acp_tui", "--cwd", str(tmp_path), "--no-record", "--live-check",
        "--output-format", output_format, "-p", "hi",
        "--", sys.executable, str(HERE / "flawed.py"), "bad-update",
    ]  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err
    said = "$.params.update.status: 'done' is not valid"
    if output_format == "text":
        assert out.decode() == "Hello\n"
        [line] = [x for x in err.decode().splitlines() if "protocol violation" in x]
        assert said in line
    else:
        events = [json.loads(line) for line in out.decode().splitlines()]
        [violation] = [e for e in events if e["type"] == "violation"]
        assert said in violation["problem"]
