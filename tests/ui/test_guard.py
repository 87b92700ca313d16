"""The guard in the TUI: a write or a command the agent did not ask permission for is asked in
the permission dialog, saying so, with what it would change; what the user allowed (once, or
for the session, through the agent's own request or the guard's) is not asked again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static

from acp_tui.session.change import Change
from acp_tui.session.session import Session
from acp_tui.ui.app import AcpApp
from acp_tui.ui.widgets.permission_panel import PermissionPanel
from acp_tui.ui.widgets.tool_call import ToolCallCard, ToolHead
from tests.agents.hostile import AGENTS
from tests.support.pilot import (
    demo_app,
    demo_workspace,
    send,
    wait_idle,
    wait_permission,
    wait_started,
)
from tests.support.ui import message_texts
from tests.ui.test_images import shown


@asynccontextmanager
async def never_asks(tmp_path: Path) -> AsyncIterator[tuple[AcpApp, Pilot[int], list[str]]]:
    """The app on an agent that does not ask; and the ids of the tool calls asked about."""
    app = demo_app(
        demo_workspace(tmp_path / "workspace"), tmp_path / "state", argv=AGENTS["never-asks"].argv()
    )
    asked: list[str] = []

    def listen(session: Session, change: Change) -> None:
        if change.kind == "permission":  # a request answered
            asked.append(change.delta.tool_call_id)

    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        assert app.session is not None
        app.session.listeners.append(listen)
        yield app, pilot, asked


def text_of(widget: Widget) -> str:
    """What `widget` shows: its lines of text, and its line-drawn parts."""
    heads = [f"{head.title.plain} {head.status.plain}" for head in widget.query(ToolHead)]
    texts = [str(part.render()) for part in widget.query(Static)]
    return "\n".join([*heads, *texts, shown(widget)])


def answered(app: AcpApp) -> str:
    return message_texts(app)[-1]


async def test_an_unasked_write_is_asked_with_its_diff_and_allowed_once(tmp_path: Path) -> None:
    async with never_asks(tmp_path) as (app, pilot, _):
        target = tmp_path / "workspace" / "notes.txt"
        target.write_text("old line\n")
        await send(app, pilot, "write notes.txt new line")
        await wait_permission(app, pilot)
        panel = app.chat.query_one(PermissionPanel)
        text = text_of(panel)
        assert "Write notes.txt" in text
        assert "The agent did not ask for permission to write this file; acp-tui asks you." in text
        assert "- old line" in text and "+ new line" in text
        await pilot.press("a")
        await wait_idle(app, pilot)
        assert target.read_text() == "new line"
        assert answered(app) == "write notes.txt: ok"
        [card] = app.chat.query(ToolCallCard)
        assert "Write notes.txt" in text_of(card) and "done" in text_of(card)

        # Allowed once: the next one is asked again.
        await send(app, pilot, "write notes.txt again")
        await wait_permission(app, pilot)
        await pilot.press("r")
        await wait_idle(app, pilot)
        assert target.read_text() == "new line"
        assert answered(app).startswith("write notes.txt: refused: the agent did not ask")


async def test_allowed_for_the_session_it_is_not_asked_again(tmp_path: Path) -> None:
    async with never_asks(tmp_path) as (app, pilot, asked):
        workspace = tmp_path / "workspace"
        await send(app, pilot, "write one.txt 1")
        await wait_permission(app, pilot)
        await pilot.press("A")  # allow for this session
        await wait_idle(app, pilot)
        await send(app, pilot, "write two.txt 2")
        await wait_idle(app, pilot)
        assert answered(app) == "write two.txt: ok"
        assert (workspace / "one.txt").read_text() == "1" and (workspace / "two.txt").exists()
        assert asked == ["acp-tui:write-1"]
        # Writes only: a command is still asked.
        await send(app, pilot, "run echo hi")
        await wait_permission(app, pilot)
        await pilot.press("a")
        await wait_idle(app, pilot)
        assert answered(app) == "run echo hi: ok, exit 0"
        card = list(app.chat.query(ToolCallCard))[-1]
        assert "echo hi" in text_of(card) and "exit 0" in text_of(card)


async def test_a_write_the_agent_asked_about_is_asked_once(tmp_path: Path) -> None:
    async with never_asks(tmp_path) as (app, pilot, asked):
        await send(app, pilot, "asked-write c.txt fine")
        await wait_permission(app, pilot)
        await pilot.press("a")  # the agent's own request: allow once
        await wait_idle(app, pilot)
        assert answered(app) == "asked-write c.txt: ok"
        assert asked == ["edit-1"]
        # Its "allow for this session" (Gemini's) covers the writes it makes after, unasked.
        await send(app, pilot, "asked-write d.txt fine")
        await wait_permission(app, pilot)
        await pilot.press("A")
        await wait_idle(app, pilot)
        await send(app, pilot, "write e.txt also")
        await wait_idle(app, pilot)
        assert answered(app) == "write e.txt: ok"
        assert asked == ["edit-1", "edit-2"]


@asynccontextmanager
async def odd_permissions(
    tmp_path: Path, permission: str = "ask"
) -> AsyncIterator[tuple[AcpApp, Pilot[int]]]:
    app = demo_app(
        demo_workspace(tmp_path / "workspace"),
        tmp_path / "state",
        argv=AGENTS["odd-permissions"].argv(),
        permission=permission,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        yield app, pilot


async def test_a_request_with_no_option_says_so_and_esc_answers_only_it(tmp_path: Path) -> None:
    async with odd_permissions(tmp_path) as (app, pilot):
        await send(app, pilot, "no-options")
        await wait_permission(app, pilot)
        text = text_of(app.chat.query_one(PermissionPanel))
        assert "The agent offered no choice.  esc answers it cancelled; the turn goes on" in text
        await pilot.press("enter")  # nothing to choose: nothing happens
        assert app.session is not None and app.session.pending_permissions
        await pilot.press("escape")
        await wait_idle(app, pilot)
        assert answered(app) == "no-options: cancelled"
        assert app.session.state.stop_reason == "end_turn"  # the turn was not cancelled


async def test_a_request_about_no_tool_call_is_asked_even_under_allow(tmp_path: Path) -> None:
    async with odd_permissions(tmp_path, "allow") as (app, pilot):
        await send(app, pilot, "no-call")
        await wait_permission(app, pilot)
        await pilot.press("a")
        await wait_idle(app, pilot)
        assert answered(app) == "no-call: ok"
