"""The line under a turn that says what it changed: `± 3 files changed +40 -12`, then the first
few files, coloured like the changes view (Enter on it opens that view)."""

from __future__ import annotations

import re

from textual.content import Content

from acp_tui.session.state import Notice

FILES_SHOWN = 4
LETTER_STYLES = {"A": "$text-success", "M": "$text-warning", "D": "$text-error"}
_COUNTS = re.compile(r"^(.*?)\s*\+(\d+) -(\d+)$")


def counted(text: str, style: str = "") -> list[tuple[str, str]]:
    """`text +N -M` with the counts in green and red."""
    match = _COUNTS.match(text)
    if match is None:
        return [(text, style)]
    head, added, removed = match.groups()
    return [
        (f"{head} ", style),
        (f"+{added}", "$text-success"),
        (" ", ""),
        (f"-{removed}", "$text-error"),
    ]


def changes_content(notice: Notice, expanded: bool) -> Content:
    """The notice of a turn's changes (severity `changes`)."""
    lines = [Content.assemble(("± ", "bold $text-accent"), *counted(notice.title, "bold"))]
    files = (notice.detail or "").splitlines()
    shown = files if expanded else files[:FILES_SHOWN]
    for line in shown:
        letter, _, rest = line.partition(" ")
        if letter in LETTER_STYLES:
            lines.append(
                Content.assemble(
                    ("  ", ""), (f"{letter} ", f"bold {LETTER_STYLES[letter]}"), *counted(rest)
                )
            )
        else:
            lines.append(Content.styled(f"  {line}", "$text-muted"))
    hint = "  enter: the changes view, to see each diff or undo"
    if len(files) > len(shown):
        hint = f"  … {len(files) - len(shown)} more · enter: the changes view"
    lines.append(Content.styled(hint, "$text-muted"))
    return Content("\n").join(lines)
