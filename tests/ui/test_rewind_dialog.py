"""The rewind dialog says what it does: reverting a file is reverting that file, not rewinding
its turn; going on from before a turn (`c`) asks about the files changed since, as `R` does;
and the new session is called after what the user typed, not the summary put before it."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.containers import Vertical
from textual.widgets import Static

from acp_tui.records.recorder import Recorder
from acp_tui.session.state import Notice
from acp_tui.ui.screens.changes import ChangesScreen
from acp_tui.ui.screens.rewind import RewindScreen
from tests.support.pilot import send, wait_idle, wait_until
from tests.support.ui import started_app


def notices(app, severity: str) -> list[Notice]:  # type: ignore[no-untyped-def]
    assert app.session is not None
    return [
        item
        for item in app.session.state.timeline
        if isinstance(item, Notice) and item.severity == severity
    ]


def keys(dialog: RewindScreen) -> str:
    return str(dialog.query_one(".rewind--keys", Static).render())


async def rewind_dialog(app, pilot) -> RewindScreen:  # type: ignore[no-untyped-def]
    """The rewind dialog, once it shows its keys."""
    await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
    dialog = app.screen
    assert isinstance(dialog, RewindScreen)
    await wait_until(pilot, lambda: bool(dialog.query(".rewind--keys")))
    return dialog


async def open_changes(app, pilot) -> ChangesScreen:  # type: ignore[no-untyped-def]
    await pilot.press("f3")
    await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
    screen = app.screen
    assert isinstance(screen, ChangesScreen)
    await wait_until(pilot, lambda: screen.file is not None)
    return screen


async def test_reverting_one_file_says_so(tmp_path: Path) -> None:
    async with started_app(tmp_path, permission="allow") as (app, pilot):
        workspace = app.options.cwd
        original = (workspace / "app.py").read_text()
        await send(app, pilot, "/edit app.py")
        await wait_idle(app, pilot)
        notified: list[tuple[str, str]] = []
        real_notify = app.notify

        def notify(message: str, *, title: str = "", **kwargs: object) -> None:
            notified.append((title, message))
            real_notify(message, title=title, **kwargs)  # type: ignore[arg-type]

        app.notify = notify  # type: ignore[method-assign]
        screen = await open_changes(app, pilot)
        await pilot.press("u")
        dialog = await rewind_dialog(app, pilot)
        assert dialog.query_one(Vertical).border_title == "Revert app.py?"
        intro = str(dialog.query_one(".rewind--intro", Static).render())
        assert intro == "app.py goes back to how it was before turn 1:"
        assert keys(dialog) == "y / enter  revert     n / esc  cancel"
        await pilot.press("y")
        await wait_until(pilot, lambda: (workspace / "app.py").read_text() == original)
        await wait_until(pilot, lambda: bool(notices(app, "rewind")))
        [notice] = notices(app, "rewind")
        assert notice.title == "Reverted app.py"
        assert (notice.detail or "").startswith("As it was before turn 1.\n")
        assert ("Reverted app.py", "As it was before turn 1.") in notified
        await wait_until(pilot, lambda: app.screen is screen)


@pytest.mark.parametrize("key", ["k", "y"])
async def test_going_on_from_before_a_turn_asks_about_the_files_changed_since(
    tmp_path: Path, key: str
) -> None:
    """`c` with a file changed after the turn: keep it (k) or rewind it too (y), then go on
    in a new session."""
    async with started_app(tmp_path, permission="allow") as (app, pilot):
        workspace = app.options.cwd
        original = (workspace / "app.py").read_text()
        await send(app, pilot, "/edit app.py")
        await wait_idle(app, pilot)
        (workspace / "app.py").write_text("the user's own version\n")
        first = app.session
        await open_changes(app, pilot)
        await pilot.press("R")
        dialog = await rewind_dialog(app, pilot)
        assert [f.path for f in dialog.plan.conflicts] == ["app.py"]
        await pilot.press("c")
        await wait_until(pilot, lambda: dialog.going_on)
        assert keys(dialog) == (
            "Continue from before turn 1 in a new session. And the files changed after the "
            "turn?\ny / enter  rewind it too     k  keep it     esc  back"
        )
        # Esc goes back to the first question; c asks again.
        await pilot.press("escape")
        await wait_until(pilot, lambda: not dialog.going_on)
        assert app.screen is dialog and keys(dialog).startswith("y / enter  rewind all")
        await pilot.press("c", key)
        await wait_until(pilot, lambda: app.session is not first and app.screen is app.chat)
        expected = "the user's own version\n" if key == "k" else original
        assert (workspace / "app.py").read_text() == expected


async def test_the_new_session_is_called_after_what_the_user_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # records of its own
    async with started_app(tmp_path, permission="allow", record=True) as (app, pilot):
        await send(app, pilot, "/edit app.py")
        await wait_idle(app, pilot)
        first = app.session
        await open_changes(app, pilot)
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("c")
        await wait_until(pilot, lambda: app.session is not first and app.screen is app.chat)
        await send(app, pilot, "/edit notes.md")
        await wait_idle(app, pilot)
        # The demo agent read the command past the summary, and titled the session by it.
        assert (app.options.cwd / "notes.md").is_file()
        session = app.session
        assert session is not None and session.state.title == "Demo: edit"
        recorders = [r for r in session.listeners if isinstance(r, Recorder)]
        assert [r.title() for r in recorders] == ["Demo: edit"]
        # An agent that titles nothing, or only repeats the summary: the user's words.
        session.state.title = "[Context from acp-tui] This conversation continues…"
        recorders[0]._title = None
        assert recorders[0].title() == "/edit notes.md"
