"""The user's own editor, opened on a file at a line (`e` in the changes view): which editor,
and how to tell it the line, since editors disagree."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping

PLUS_LINE = frozenset(
    {"vi", "vim", "nvim", "gvim", "view", "nano", "pico", "emacs", "emacsclient", "micro"}
    | {"hx", "helix", "kak", "joe", "jed", "mg", "ne", "mcedit", "ex", "gedit"}
)
"""Editors that take `+LINE` before the file."""

COLON_LINE = {"code": "-g", "code-insiders": "-g", "codium": "-g", "cursor": "-g", "windsurf": "-g"}
COLON_LINE |= {"subl": "", "zed": ""}
"""Editors that take `FILE:LINE` (after this option, if any)."""

WAITS = {"code": "--wait", "code-insiders": "--wait", "codium": "--wait", "cursor": "--wait"}
WAITS |= {"windsurf": "--wait", "subl": "--wait", "zed": "--wait"}
"""Editors with a window of their own, and how to make them wait until the file is closed:
without it they return at once, and the edit would be over before it began."""

FALLBACKS = ("nano", "vi")


def editor_argv(path: str, line: int, environ: Mapping[str, str] | None = None) -> list[str]:
    """The command that opens `path` at `line` (1-based) in the user's editor: `$VISUAL`,
    else `$EDITOR` (either may hold options: `code -w`), else nano or vi, whichever is
    here."""
    environ = os.environ if environ is None else environ
    chosen = environ.get("VISUAL", "").strip() or environ.get("EDITOR", "").strip()
    try:
        command = shlex.split(chosen)
    except ValueError:  # an unclosed quote: taken as one program's name
        command = [chosen]
    if not command:
        here = (name for name in FALLBACKS if shutil.which(name, path=environ.get("PATH")))
        command = [next(here, FALLBACKS[-1])]
    name = os.path.basename(command[0]).removesuffix(".exe")
    if name in PLUS_LINE:
        return [*command, f"+{line}", path]
    if name in COLON_LINE:
        wait = WAITS.get(name)
        if wait is not None and wait not in command and "-w" not in command:
            command.append(wait)
        option = COLON_LINE[name]
        return [*command, *([option] if option else []), f"{path}:{line}"]
    return [*command, path]


__all__ = ["editor_argv"]
