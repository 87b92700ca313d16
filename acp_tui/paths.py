"""Where acp-tui keeps things: the config directory (files the user edits, and rules saved for
them) and the data directory (conversation records, the demo agent's sessions)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def config_dir() -> Path:
    """acp-tui's config directory: `$XDG_CONFIG_HOME/acp-tui`, default `~/.config/acp-tui`."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "acp-tui"


def data_dir() -> Path:
    """acp-tui's data directory: `$XDG_DATA_HOME/acp-tui`, else the platform's usual place
    (`~/.local/share/acp-tui` on Linux)."""
    if xdg := os.environ.get("XDG_DATA_HOME"):
        base = Path(xdg)
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path.home() / ".local" / "share"
    return base / "acp-tui"
