"""The footer's keys: rebuilt when the keys on offer change, kept when they do not."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets._footer import FooterKey

from acp_tui.ui.widgets.key_footer import KeyFooter
from tests.support.pilot import send, wait_idle, wait_permission
from tests.support.ui import started_app


def offered(footer: KeyFooter) -> list[str]:
    return [key.description for key in footer.query(FooterKey)]


async def settled_keys(pilot: Pilot[int], footer: KeyFooter) -> list[FooterKey]:
    """The footer's key widgets once they stop changing: keys join as the app settles (the
    palette's, the agent's modes), later on a loaded machine."""
    keys = list(footer.query(FooterKey))
    for _ in range(50):
        await pilot.pause(0.2)
        now = list(footer.query(FooterKey))
        if now == keys:
            return keys
        keys = now
    raise TimeoutError("the footer kept changing")


async def test_the_footer_follows_the_keys_on_offer_and_keeps_them_otherwise(
    tmp_path: Path,
) -> None:
    async with started_app(tmp_path) as (app, pilot):
        footer = app.chat.query_one(KeyFooter)
        keys = await settled_keys(pilot, footer)
        assert "Quit" in offered(footer) and "Cancel" not in offered(footer)
        app.chat.refresh_bindings()  # nothing changed: the same key widgets stay
        await pilot.pause()
        assert list(footer.query(FooterKey)) == keys

        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)  # a turn runs, the dialog has the keys
        assert {"Cancel", "Choose"} <= set(offered(footer))
        await pilot.press("a")
        await wait_idle(app, pilot)
        assert "Cancel" not in offered(footer) and "Choose" not in offered(footer)
        assert offered(footer) == [key.description for key in keys]
