"""What a tool call's card shows is what happened: command output exactly as the program
wrote it, a card measured again whenever its body changes, diffs numbered from the file, one
status per card, and protocol words only where they mean something."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_tui.protocol.updates import decode_session_notification
from acp_tui.ui.widgets.message import AgentMessage
from acp_tui.ui.widgets.tool_call import ToolCallCard
from tests.support.pilot import wait_until
from tests.support.ui import started_app

Run = Callable[..., Any]


def decoded(update: dict[str, Any]) -> Any:
    """One `sessionUpdate` as the connection decodes it off the wire."""
    params = msgspec.json.encode({"sessionId": "s", "update": update})
    return decode_session_notification(params)[1]


@pytest.fixture
def run(tmp_path: Path) -> Run:
    """`async with run() as (app, pilot)`: the app on a fresh demo agent and workspace."""
    return functools.partial(started_app, tmp_path)


# -- a card measured again when its body changes ------------------------------------------------


async def until(condition: Callable[[], object], timeout: float = 5) -> None:
    """Until `condition()` holds, without Pilot's pause: that waits for every widget to go
    idle (and lays the screen out)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_a_body_mounted_while_the_cards_layout_is_pending_is_shown(run: Run) -> None:
    """Qwen Code's shell card lost its body: the card was laid out (header only) before its
    own idle handler ran, and the body mounted meanwhile asked for a layout that Textual took
    for the one already pending, so the card's cached height was used again. Here the card
    is held busy (as while it composes) across exactly that: its first refresh, a layout the
    rest of the transcript brings, and its body's mount."""
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        call = {"sessionUpdate": "tool_call", "toolCallId": "q1", "title": "Shell: ls"}
        session.apply(decoded({**call, "kind": "execute", "status": "pending"}))
        await wait_until(pilot, lambda: app.chat.query(ToolCallCard))
        card = app.chat.query_one(ToolCallCard)
        await wait_until(pilot, lambda: card.region.height == 3)  # borders and its head

        entered, gate = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            entered.set()
            await gate.wait()

        card.call_later(hold)
        try:
            await until(entered.is_set)
            card.refresh(layout=True)  # the card's first refresh: its idle handler cannot run
            chunk = {"type": "text", "text": "Next."}
            session.apply(decoded({"sessionUpdate": "agent_message_chunk", "content": chunk}))
            messages = app.chat.query(AgentMessage)
            await until(lambda: any(m.region.height for m in messages.nodes))
            assert card.region.height == 3  # laid out meanwhile, with its head alone

            output = {"type": "content", "content": {"type": "text", "text": "a\nb\nc"}}
            update = {"sessionUpdate": "tool_call_update", "toolCallId": "q1"}
            session.apply(decoded({**update, "status": "completed", "content": [output]}))
        finally:
            gate.set()

        def body_inside() -> bool:
            body = card.children[-1]
            inside = card.region.contains_region(body.region)
            return body is not card.children[0] and body.region.height > 0 and inside

        await wait_until(pilot, body_inside, timeout=5)
