"""`$/cancel_request` both ways: the agent withdrawing a request it sent (it gets -32800, a
permission dialog closes and says so), and acp-tui withdrawing requests it abandons."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_tui.protocol.content import text_block
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission
from acp_tui.session.state import Notice
from acp_tui.ui.app import AcpApp
from acp_tui.ui.widgets.permission_panel import PermissionPanel
from tests.support import TEST_AGENTS
from tests.support.pilot import (
    core,
    demo_app,
    demo_workspace,
    send,
    wait_idle,
    wait_started,
    wait_until,
)
from tests.support.schema import validate_transcript
from tests.transport.test_connection import Peer, Recorder, wait_for

RAW_AGENT = TEST_AGENTS / "raw_agent.py"


def line(message: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", **message})


class SlowHandler(Recorder):
    """Answers `slow` only when told to; remembers that its work was stopped."""

    def __init__(self) -> None:
        super().__init__()
        self.started = 0
        self.stopped = asyncio.Event()

    async def handle_request(self, method: str, params: msgspec.Raw) -> Any:
        if method != "slow":
            return await super().handle_request(method, params)
        self.started += 1
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.stopped.set()
            raise
        return {}


@pytest.mark.parametrize("request_id", [7, "req-7"])
async def test_the_agent_withdraws_its_request(tmp_path: Path, request_id: int | str) -> None:
    script = {
        "start": [
            line({"id": request_id, "method": "slow", "params": {}}),
            line({"id": "other", "method": "slow", "params": {}}),
        ],
        "on": {"go": [line({"method": "$/cancel_request", "params": {"requestId": request_id}})]},
    }
    peer = Peer(tmp_path, script)
    handler = peer.recorder = SlowHandler()
    async with peer:
        # Withdrawn only once at work on it (a task cancelled before it ran says nothing).
        await wait_for(lambda: handler.started == 2)
        await peer.connection.notify("go", {})
        await asyncio.wait_for(handler.stopped.wait(), 10)
        await wait_for(lambda: len(peer.received()) == 2)
        answers = [m for m in peer.received() if "id" in m]
    assert answers == [
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": -32800, "message": "Request cancelled"},
        }
    ]
    assert handler.problems == []


async def test_a_request_withdrawn_from_a_batch_is_answered_in_the_batchs_array(
    tmp_path: Path,
) -> None:
    """The batch's array waits for every request, and a withdrawn one is in it as -32800."""
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {}},
    ]
    script = {
        "start": [json.dumps(batch)],
        "on": {"go": [line({"method": "$/cancel_request", "params": {"requestId": 1}})]},
    }
    peer = Peer(tmp_path, script)
    handler = peer.recorder = SlowHandler()
    async with peer:
        await wait_for(lambda: handler.started == 1 and ("ping", {}) in handler.requests)
        assert peer.received() == []  # the ping is served, the batch is not
        await peer.connection.notify("go", {})
        await asyncio.wait_for(handler.stopped.wait(), 10)
        await wait_for(lambda: len(peer.received()) == 2)
        [answers] = [m for m in peer.received() if isinstance(m, list)]
    assert sorted(answers, key=lambda answer: answer["id"]) == [
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32800, "message": "Request cancelled"}},
        {"jsonrpc": "2.0", "id": 2, "result": {"pong": True}},
    ]


async def test_an_abandoned_request_is_withdrawn_and_its_late_answer_dropped(
    tmp_path: Path,
) -> None:
    # The agent answers the withdrawal as the spec says: -32800 for the withdrawn id (0).
    cancelled = line({"id": 0, "error": {"code": -32800, "message": "cancelled"}})
    script = {"on": {"hang": [], "$/cancel_request": [cancelled]}}
    peer = Peer(tmp_path, script)
    async with peer:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(peer.connection.request("hang", {}), 0.3)
        await wait_for(lambda: len(peer.received()) == 2)
        # The late answer is read (the transcript is written as each read is handled).
        await wait_for(lambda: b"-32800" in peer.transcript_path.read_bytes())
        received = peer.received()
    assert received[1] == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": 0},
    }
    assert peer.recorder.problems == []


def _permission_script() -> dict[str, Any]:
    """An agent that asks permission for a call it never announced, then withdraws it."""
    tool_call = {"toolCallId": "t1", "title": "rm -rf build", "kind": "delete"}
    options = [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}]
    ask = {"sessionId": "s1", "toolCall": tool_call, "options": options}
    return {
        "on": {
            "initialize": [line({"id": "$ID", "result": {"protocolVersion": 1}})],
            "session/new": [line({"id": "$ID", "result": {"sessionId": "s1"}})],
            "session/prompt": [
                line({"id": "ask-1", "method": "session/request_permission", "params": ask})
            ],
            "_withdraw": [
                line({"method": "$/cancel_request", "params": {"requestId": "ask-1"}}),
                line({"id": 2, "result": {"stopReason": "end_turn"}}),
            ],
        }
    }


async def test_a_withdrawn_permission_request_is_gone_and_said_so(tmp_path: Path) -> None:
    (tmp_path / "script.json").write_text(json.dumps(_permission_script()))
    received = tmp_path / "received.jsonl"
    asked: list[PendingPermission] = []

    async def decide(pending: PendingPermission) -> None:
        asked.append(pending)

    argv = [sys.executable, str(RAW_AGENT), str(tmp_path / "script.json"), str(received)]
    options = ClientOptions(cwd=tmp_path, transcript=tmp_path / "t.jsonl")
    client = AgentClient(argv, options, decide_permission=decide)
    await client.start()
    try:
        session = await client.new_session()
        turn = asyncio.ensure_future(session.prompt([text_block("clean up")]))
        await wait_for(lambda: session.pending_permissions)
        await client.notify("_withdraw", {})
        assert await asyncio.wait_for(turn, 10) == "end_turn"
        await wait_for(lambda: '"ask-1"' in received.read_text())
    finally:
        await client.close()
    assert asked and asked[0].done and session.pending_permissions == []
    notices = [item.title for item in session.state.timeline if isinstance(item, Notice)]
    assert notices == ["The agent withdrew its request: rm -rf build"]
    answers = [json.loads(raw) for raw in received.read_text().splitlines()]
    assert {
        "jsonrpc": "2.0",
        "id": "ask-1",
        "error": {"code": -32800, "message": "Request cancelled"},
    } in answers
    validate_transcript(tmp_path / "t.jsonl", version=1, sender="client")


async def test_the_dialog_closes_when_the_agent_withdraws(tmp_path: Path) -> None:
    (tmp_path / "script.json").write_text(json.dumps(_permission_script()))
    argv = [sys.executable, str(RAW_AGENT), str(tmp_path / "script.json"), str(tmp_path / "r")]
    app: AcpApp = demo_app(demo_workspace(tmp_path / "ws"), tmp_path / "state", argv=argv)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        await send(app, pilot, "clean up")
        await wait_until(pilot, lambda: app.chat.query(PermissionPanel))  # mounted when asked
        panel = app.chat.query_one(PermissionPanel)
        await wait_until(pilot, lambda: panel.queue)
        assert core(app).client is not None
        await core(app).client.notify("_withdraw", {})
        await wait_idle(app, pilot)
        assert panel.queue == [] and not panel.display
        assert app.session is not None
        titles = [i.title for i in app.session.state.timeline if isinstance(i, Notice)]
        assert titles == ["The agent withdrew its request: rm -rf build"]
