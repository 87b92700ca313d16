"""The footer's keys: rebuilt when the keys on offer change, kept when they do not."""

from __future__ import annotations

from pathlib import Path

from textual.widgets._footer import FooterKey

from acp_tui.ui.pilot import send, wait_idle, wait_permission, wait_until
from acp_tui.ui.widgets.key_footer import KeyFooter
from tests.support.ui import started_app


def offered(footer: KeyFooter) -> list[str]:
    return [key.description for key in footer.query(FooterKey)]


async def test_the_footer_follows_the_keys_on_offer_and_keeps_them_otherwise(
    tmp_path: Path,
) -> None:
    async with started_app(tmp_path) as (app, pilot):
        footer = app.chat.query_one(KeyFooter)
        # The command palette's key joins once the app has settled (later on a loaded machine).
        await wait_until(pilot, lambda: footer.query(".-command-palette"))
        keys = list(footer.query(FooterKey))
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
