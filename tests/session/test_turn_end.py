"""A turn's end closes the tool calls the agent left open: `rejected` when the user rejected
its permission request, else `cancelled`; in state (v1 and v2) and on the card."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from acp_tui.protocol.content import text_block
from acp_tui.protocol.jsonrpc import ConnectionClosed
from acp_tui.session import reducer
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission
from acp_tui.session.state import PermissionAnswer, SessionState
from acp_tui.ui.widgets.tool_call import ToolCallCard, ToolHead
from tests.support import TEST_AGENTS
from tests.support.pilot import send, wait_idle, wait_permission
from tests.support.ui import started_app

REJECTING_AGENT = TEST_AGENTS / "rejecting_agent.py"
VERSIONS = pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
Decide = Callable[[PendingPermission], Awaitable[None]]


def agent(version: int) -> list[str]:
    return [sys.executable, str(REJECTING_AGENT), *(["--v2"] if version >= 2 else [])]


def choose(option_id: str) -> Decide:
    async def decide(pending: PendingPermission) -> None:
        pending.select(option_id)

    return decide


async def turn_statuses(tmp_path: Path, version: int, decide: Decide, text: str) -> dict[str, str]:
    """Run one prompt turn on the rejecting agent; the tool calls' statuses after it."""
    options = ClientOptions(cwd=tmp_path, protocol_version=version)
    client = AgentClient(agent(version), options, decide_permission=decide)
    try:
        await client.start()
        assert client.info.protocol_version == version
        session = await client.new_session()
        with contextlib.suppress(ConnectionClosed):  # the agent that dies
            await session.prompt([text_block(text)])
        return {call.id: call.status for call in session.state.tool_calls.values()}
    finally:
        await client.close()


# -- the reducer ------------------------------------------------------------------------------


def test_closing_a_turn_closes_only_its_open_calls() -> None:
    state = SessionState(session_id="s")
    reducer.begin_turn(state, [text_block("one")])
    reducer.tool_call_for(state, "old").status = "in_progress"
    reducer.end_turn(state, "end_turn")
    reducer.begin_turn(state, [text_block("two")])
    for call_id, status in [
        ("asked", "pending"),
        ("run", "in_progress"),
        ("ok", "completed"),
        ("odd", "_paused"),  # a status from the future is the agent's to close, and kept
    ]:
        reducer.tool_call_for(state, call_id).status = status
    reducer.permission_answered(state, PermissionAnswer("asked", "no", "user", rejected=True))
    changes = reducer.close_tool_calls(state)
    statuses = {k: v.status for k, v in state.tool_calls.items()}
    assert statuses == {
        "old": "in_progress",
        "asked": "rejected",
        "run": "cancelled",
        "ok": "completed",
        "odd": "_paused",
    }
    assert [change.item.id for change in changes] == ["asked", "run"]
    assert all(change.kind == "tool_call_closed" for change in changes)


def test_a_cancel_shows_a_rejected_call_rejected() -> None:
    state = SessionState(session_id="s")
    reducer.begin_turn(state, [text_block("go")])
    reducer.tool_call_for(state, "asked")
    reducer.permission_answered(state, PermissionAnswer("asked", "no", "user", rejected=True))
    reducer.cancel_turn(state)
    assert state.tool_calls["asked"].status == "rejected"
    assert not state.tool_calls["asked"].open


# -- against an agent that leaves its calls open (as Codex does) -------------------------------


@VERSIONS
async def test_a_rejected_edit_is_closed_rejected_when_the_turn_ends(
    tmp_path: Path, version: int
) -> None:
    statuses = await turn_statuses(tmp_path, version, choose("abort"), "edit it")
    assert statuses == {"call-read": "cancelled", "call-edit": "rejected"}


@VERSIONS
async def test_a_turn_that_ends_normally_closes_what_is_left_open(
    tmp_path: Path, version: int
) -> None:
    statuses = await turn_statuses(tmp_path, version, choose("approved"), "edit it")
    assert statuses == {"call-read": "cancelled", "call-edit": "completed"}


async def test_a_turn_the_agent_died_in_closes_its_calls(tmp_path: Path) -> None:
    statuses = await turn_statuses(tmp_path, 1, choose("approved"), "die")
    assert statuses == {"call-run": "cancelled"}


# -- on screen --------------------------------------------------------------------------------


@VERSIONS
async def test_the_card_of_a_rejected_edit_says_rejected(tmp_path: Path, version: int) -> None:
    async with started_app(tmp_path, argv=agent(version), protocol_version=version) as (
        app,
        pilot,
    ):
        await send(app, pilot, "edit hello.txt")
        await wait_permission(app, pilot)
        await pilot.press("r")
        await wait_idle(app, pilot)
        cards = {card.item.id: card for card in app.chat.query(ToolCallCard)}
        edit, read = cards["call-edit"], cards["call-read"]
        assert edit.has_class("-rejected")
        assert "rejected" in edit.query_one(ToolHead).status.plain
        assert read.has_class("-cancelled")
        assert "cancelled" in read.query_one(ToolHead).status.plain
