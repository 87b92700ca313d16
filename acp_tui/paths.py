"""Where acp-tui keeps things: the config directory (files the user edits, and rules saved for
them), the data directory (conversation records, the demo agent's sessions) and the cache
directory (the agent registry and the agents installed from it); and `within`, the one test of
whether a resolved path stays inside a folder."""

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
    return _platform_dir("XDG_DATA_HOME", "Application Support", ".local/share")


def cache_dir() -> Path:
    """acp-tui's cache directory (what can be fetched again: the agent registry, agents it
    installed): `$XDG_CACHE_HOME/acp-tui`, else the platform's usual place (`~/.cache/acp-tui`
    on Linux)."""
    return _platform_dir("XDG_CACHE_HOME", "Caches", ".cache")


def _platform_dir(variable: str, darwin: str, other: str) -> Path:
    """`$variable/acp-tui`, else under `%LOCALAPPDATA%` on Windows, `~/Library/<darwin>` on
    macOS, `~/<other>` elsewhere."""
    if xdg := os.environ.get(variable):
        base = Path(xdg)
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / darwin
    else:
        base = Path.home() / other
    return base / "acp-tui"


def within(root: str, path: str) -> bool:
    """Whether `path` is `root` or below it (both resolved, `root` without a trailing slash:
    a plain prefix test would take `/work2` for a path in `/work`)."""
    return path == root or path.startswith(root + os.sep)
