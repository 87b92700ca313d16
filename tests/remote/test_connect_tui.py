"""The TUI on a remote agent (acpremote's `expose` of the demo agent, over WebSocket), driven
with Pilot as a person would: a permission answered in the dialog lets the agent write the
client's own file, Escape cancels a turn, and a server killed mid-turn is said, reconnected to
(another server on the same port) and the conversation goes on in the same session."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp_tui.session.state import Notice
from acp_tui.ui.app import AcpApp
from acp_tui.ui.widgets.session_header import SessionHeader
from tests.remote.connect_support import Exposed, free_port, remote_app
from tests.support.pilot import send, wait_idle, wait_permission, wait_started, wait_until
from tests.support.ui import message_texts, started_app


def _app(tmp_path: Path, url: str) -> AcpApp:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    return remote_app(workspace, tmp_path / "state", url)


def _notices(app: AcpApp) -> list[str]:
    assert app.session is not None
    return [item.title for item in app.session.state.timeline if isinstance(item, Notice)]


def _says(app: AcpApp, text: str) -> bool:
    return any(text in message for message in message_texts(app))


async def test_the_tui_asks_writes_cancels_and_comes_back_after_a_drop(tmp_path: Path) -> None:
    port = free_port()
    server = Exposed(tmp_path, port)
    app = _app(tmp_path, server.url)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_started(app, pilot)
            assert app.session is not None
            first_session = app.session.id

            await send(app, pilot, "/edit notes.txt")
            await wait_permission(app, pilot)
            await pilot.press("a")
            await wait_idle(app, pilot)
            written = (tmp_path / "workspace" / "notes.txt").read_text()
            assert "Edited by the ACP demo agent" in written

            await send(app, pilot, "/slow 30")
            await wait_until(pilot, lambda: _says(app, "⏳ 1/30"))
            await pilot.press("escape")
            await wait_idle(app, pilot)
            assert not _says(app, "nobody cancelled me")

            await send(app, pilot, "/slow 30")
            await wait_until(pilot, lambda: _says(app, "⏳ 2/30"))
            server.kill()
            lost = f"the connection to {server.url} was lost"
            await wait_until(pilot, lambda: any(n.startswith(lost) for n in _notices(app)))
            assert any(n.startswith("Reconnecting: acp-tui connects") for n in _notices(app))
            header = app.chat.query_one(SessionHeader)
            # The header hears of it by a message of its own, which may come a frame later.
            await wait_until(pilot, lambda: header.status == "reconnecting")
            server = Exposed(tmp_path, port)
            reconnected = f"Reconnected to {server.url}: the session goes on"
            await wait_until(pilot, lambda: reconnected in _notices(app), timeout=30)
            await wait_idle(app, pilot)
            assert app.session.id == first_session
            assert header.status == "idle"
            assert _says(app, "⏳ 2/30")  # what came before the drop stays

            await send(app, pilot, "after the drop")
            await wait_idle(app, pilot)
            assert _says(app, "> after the drop")
            assert app.session.id == first_session
    finally:
        server.kill()


async def test_quitting_while_it_reconnects_leaves_at_once(tmp_path: Path) -> None:
    server = Exposed(tmp_path, free_port())
    app = _app(tmp_path, server.url)

    async def use_and_quit() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_started(app, pilot)
            server.kill()  # and no server comes back
            header = app.chat.query_one(SessionHeader)
            await wait_until(pilot, lambda: header.status == "reconnecting")
            await pilot.press("ctrl+q")

    try:
        # The reconnection would go on for two minutes: quitting stops it.
        await asyncio.wait_for(use_and_quit(), 30)
    finally:
        server.kill()


async def test_the_header_says_reconnecting_until_the_session_is_back(tmp_path: Path) -> None:
    # What the session does meanwhile (a turn the drop cut short ending, here a turn of the
    # demo agent) does not make the header say idle while acp-tui is still reconnecting.
    async with started_app(tmp_path) as (app, pilot):
        view, header = app.conversation, app.chat.query_one(SessionHeader)
        view.connection_lost("the connection to ws://127.0.0.1:1/acp was lost")
        assert header.status == "reconnecting"
        await send(app, pilot, "hello")
        await wait_until(pilot, lambda: app.session is not None and not app.session.busy)
        await pilot.pause()
        assert header.status == "reconnecting"
        assert app.session is not None
        view.session_shown(app.session)  # back
        assert header.status == "idle"
