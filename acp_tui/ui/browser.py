"""Opening a page for the user without handing the terminal to a text-mode browser.

`webbrowser.open` falls back to lynx or w3m when there is no graphical session, and those would
take over the terminal acp-tui draws on; so without one, nothing is opened and the caller
shows (and copies) the URL instead.
"""

from __future__ import annotations

import os
import sys
import webbrowser


def has_graphical_browser() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_in_browser(url: str) -> bool:
    """Open `url` in a graphical browser; False if there is none (or it failed)."""
    if not has_graphical_browser():
        return False

    try:
        return webbrowser.open(url)
    except webbrowser.Error:
        return False
