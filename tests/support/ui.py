"""The TUI on a fresh demo agent and workspace, for Pilot tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from acp_tui.session.state import Message
from acp_tui.ui.app import AcpApp
from tests.support.pilot import demo_app, demo_workspace, wait_started


@asynccontextmanager
async def started_app(
    tmp_path: Path, *, size: tuple[int, int] = (120, 40), **kwargs: Any
) -> AsyncIterator[tuple[AcpApp, Pilot[int]]]:
    """`async with started_app(tmp_path) as (app, pilot)`: the app, its agent ready."""
    workspace = demo_workspace(tmp_path / "workspace")
    app = demo_app(workspace, tmp_path / "state", **kwargs)
    async with app.run_test(size=size) as pilot:
        await wait_started(app, pilot)
        yield app, pilot


def message_texts(app: AcpApp) -> list[str]:
    """The text of every message in the shown session, in order."""
    assert app.session is not None
    return [item.text for item in app.session.state.timeline if isinstance(item, Message)]
