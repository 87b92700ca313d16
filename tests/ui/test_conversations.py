"""Several conversations at once: each with its own agent process, switched with keys, and
a session bar saying which works, which waits for you and which is idle."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from acp_tui.config import AgentConfig
from acp_tui.conversation import opening
from acp_tui.conversation.opening import SessionEntry
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.services.permissions import Rule
from acp_tui.session.state import Message
from acp_tui.ui.app import AcpApp
from acp_tui.ui.command_palette import app_commands
from acp_tui.ui.conversation import ConversationView
from acp_tui.ui.screens import SessionsScreen
from acp_tui.ui.screens.help import KEYS
from acp_tui.ui.widgets.permission_panel import PermissionPanel
from acp_tui.ui.widgets.session_bar import SessionBar
from tests.support.pilot import (
    core,
    demo_app,
    demo_workspace,
    new_conversation,
    send,
    wait_idle,
    wait_permission,
    wait_started,
    wait_until,
)


@asynccontextmanager
async def two_conversations(tmp_path: Path) -> AsyncIterator[tuple[AcpApp, Pilot[int]]]:
    """The app with a second conversation opened (Ctrl+N) and shown."""
    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        await new_conversation(app, pilot)  # Ctrl+N, Enter: the same agent
        yield app, pilot


def _texts(conversation: ConversationView) -> list[str]:
    assert conversation.session is not None
    return [i.text for i in conversation.session.state.timeline if isinstance(i, Message)]


def _bar(app: AcpApp) -> str:
    return str(app.chat.query_one(SessionBar).render())


def _pid(conversation: ConversationView) -> int:
    assert core(conversation).client is not None and core(conversation).client.process is not None
    return core(conversation).client.process.process.pid


async def test_two_conversations_each_with_its_own_agent(tmp_path: Path) -> None:
    async with two_conversations(tmp_path) as (app, pilot):
        first, second = app.conversations
        assert app.conversation is second and app.chat is second.chat
        assert _pid(first) != _pid(second)
        assert first.session is not None and second.session is not None
        assert first.session.id != second.session.id

        await send(app, pilot, "only in the second")
        await wait_idle(app, pilot)
        assert "only in the second" in _texts(second)
        assert "only in the second" not in _texts(first)

        await pilot.press("ctrl+pageup")
        await pilot.pause()
        assert app.conversation is first and app.screen is first.chat
        await send(app, pilot, "only in the first")
        await wait_idle(app, pilot)
        assert "only in the first" not in _texts(second)
        await pilot.press("alt+2")
        await pilot.pause()
        assert app.conversation is second
        await pilot.press("ctrl+pagedown")  # round the list
        await pilot.pause()
        assert app.conversation is first
        # Alt+digit arrives through tmux as another character; Alt+arrows come as they are,
        # and the bar says so.
        assert _bar(app).rstrip().endswith("alt+← → switch")
        await pilot.press("alt+left")  # round the list the other way
        await pilot.pause()
        assert app.conversation is second
        await pilot.press("alt+right")
        await pilot.pause()
        assert app.conversation is first


async def test_the_session_bar_shows_each_state(tmp_path: Path) -> None:
    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        assert not app.chat.query_one(SessionBar).display  # one conversation: no bar
        await new_conversation(app, pilot)
        await wait_until(pilot, lambda: _bar(app).count("○ idle") == 2)
        assert app.chat.query_one(SessionBar).display
        assert _bar(app).startswith("1 ")

        core(app.conversations[0]).client.process.process.kill()  # type: ignore[union-attr]
        await wait_until(pilot, lambda: "✗ failed" in _bar(app))  # news, until seen
        assert "○ idle" in _bar(app)
        await pilot.press("alt+1")
        await wait_until(pilot, lambda: "✗ stopped" in _bar(app))


async def test_a_background_permission_request_waits_for_you(tmp_path: Path) -> None:
    async with two_conversations(tmp_path) as (app, pilot):
        first, second = app.conversations
        await pilot.press("alt+1")
        await pilot.pause()
        await send(app, pilot, "/edit app.py")
        await pilot.press("alt+2")  # away before the agent asks
        await pilot.pause()
        assert app.conversation is second
        chat = first.chat
        assert chat is not None
        await wait_until(pilot, lambda: chat.query(PermissionPanel))  # mounted when first asked
        panel = chat.query_one(PermissionPanel)
        await wait_until(pilot, lambda: panel.queue)
        await wait_until(pilot, lambda: "◆ permission" in _bar(app))
        assert first.need == "permission" and second.need is None
        assert app.conversation is second  # the request did not take the screen

        await pilot.press("alt+1")
        await wait_permission(app, pilot)
        await pilot.press("a")
        await wait_idle(app, pilot)
        assert "Edited by the ACP demo agent" in (tmp_path / "workspace" / "app.py").read_text()
        await wait_until(pilot, lambda: "◆" not in _bar(app))


async def test_an_agents_own_rules_never_answer_for_another_agent(tmp_path: Path) -> None:
    """`[[agents.A.rule]]` allows everything for A; B, picked beside it, is still asked."""
    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state")
    app.conversation.agent.rules = [Rule("*", "allow")]
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        first = app.conversation
        other = AgentConfig("other", list(first.agent.command))
        app.new_conversation(other)
        await wait_until(pilot, lambda: len(app.conversations) == 2)
        await wait_started(app, pilot)
        second = app.conversation
        assert second.agent is other

        await send(app, pilot, "/edit b.py")
        await wait_permission(app, pilot)  # asked: A's rule is not B's
        assert second.chat is not None and second.chat.query_one(PermissionPanel).queue
        await pilot.press("r")
        await wait_idle(app, pilot)

        await pilot.press("alt+1")
        await send(app, pilot, "/edit a.py")
        await wait_idle(app, pilot)  # answered by A's own rule, nobody asked
        assert first.chat is not None and not first.chat.query(PermissionPanel)  # never opened
        assert (tmp_path / "workspace" / "a.py").exists()
        assert not (tmp_path / "workspace" / "b.py").exists()  # rejected when asked


async def test_sessions_are_listed_and_filed_under_the_agent_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+O in B, then Alt+1 while the sessions are listed or opened: still B's name."""
    named: list[tuple[str, str]] = []
    spying = False  # once both conversations started

    def showing_the_first(call: str, function: Any) -> Any:
        async def spy(client: Any, store: Any, agent: str, *args: Any, **kwargs: Any) -> Any:
            if spying:
                app.action_show_conversation(1)  # the user looks elsewhere during the await
                await asyncio.sleep(0)
                named.append((call, agent))
            return await function(client, store, agent, *args, **kwargs)

        return spy

    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state", record=True)
    monkeypatch.setattr(opening, "list_sessions", showing_the_first("list", opening.list_sessions))
    monkeypatch.setattr(
        opening, "open_conversation", showing_the_first("open", opening.open_conversation)
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        first = app.conversation
        app.new_conversation(AgentConfig("other", list(first.agent.command)))
        await wait_until(pilot, lambda: len(app.conversations) == 2)
        await wait_started(app, pilot)
        second = app.conversation
        assert second.session is not None
        spying = True
        app.action_sessions()
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        assert named == [("list", "other")]
        await pilot.press("escape")
        app.action_show_conversation(2)
        assert core(second).client is not None
        close_session = core(second).client.close_session

        async def close_looking_elsewhere(session: Any) -> None:
            app.action_show_conversation(1)
            await close_session(session)

        monkeypatch.setattr(core(second).client, "close_session", close_looking_elsewhere)
        entry = SessionEntry(second.session.id, None, None, str(tmp_path / "workspace"))
        with contextlib.suppress(RpcError):  # the demo (--no-persist) cannot reopen it
            await app.switch_session(entry, second)
        assert named[1] == ("open", "other")


async def test_closing_a_conversation_stops_its_agent(tmp_path: Path) -> None:
    async with two_conversations(tmp_path) as (app, pilot):
        first, second = app.conversations
        assert core(second).client is not None and core(second).client.process is not None
        process = core(second).client.process
        titles = [command.title for command in app_commands(app)]
        assert "New conversation" in titles and "Close the conversation" in titles
        await pilot.press("ctrl+w")
        await wait_until(pilot, lambda: process.returncode is not None)
        assert app.conversations == [first] and app.conversation is first
        assert app.screen is first.chat
        assert core(first).client is not None and core(first).client.process is not None
        assert core(first).client.process.returncode is None
        assert not first.chat.query_one(SessionBar).display
        assert app.check_action("close_conversation", ()) is False
        await send(app, pilot, "still here")
        await wait_idle(app, pilot)
        assert "still here" in _texts(first)


async def test_quitting_stops_every_agent(tmp_path: Path) -> None:
    async with two_conversations(tmp_path) as (app, _pilot):
        processes = [core(c).client.process for c in app.conversations]  # type: ignore[union-attr]
        await app.action_quit()
        await asyncio.sleep(0)
        assert all(p is not None and p.returncode is not None for p in processes)


def test_the_keys_are_listed() -> None:
    keys = dict(KEYS)["Conversations"]
    assert ("ctrl+n", "new conversation: pick its agent") in keys
    assert any("ctrl+w" in key for key, _ in keys)


@pytest.mark.parametrize(("width", "narrow"), [(120, False), (80, True)])
async def test_the_keys_fit_the_terminal(tmp_path: Path, width: int, narrow: bool) -> None:
    """Two columns side by side when there is room, one below that: a description always
    has room beside its key."""
    from acp_tui.ui.screens.help import HelpScreen

    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state")
    async with app.run_test(size=(width, 40)) as pilot:
        await wait_started(app, pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        assert app.screen.has_class("-narrow") is narrow
        rooms = [what.size.width for what in app.screen.query(".help--what")]
        assert min(rooms) >= 31, rooms
