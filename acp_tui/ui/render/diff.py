"""Unified diffs for tool calls: rows of syntax-highlighted code on tinted backgrounds.

A v1 diff carries the whole old and new text of a file; the rows are computed here (hunks with
three lines of context) and highlighted with the file's lexer, old and new text each in one
pass so multi-line strings and comments colour correctly. A v2 diff carries a patch; its rows
are read from the patch text itself.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

from rich.text import Text

from acp_tui.ui.render.lexers import lexer_for_path

CONTEXT = 3
MAX_ROWS = 2000
"""Rows built for one diff; the rest is counted and summed up in a last row, so a 50 MB diff
costs what a 2,000-line one does (the card shows a diff, not the file)."""
MAX_HIGHLIGHT = 1 << 20
"""Characters past which a diff is shown without syntax colours: highlighting is the slowest
part, and past this size no one reads the colours."""


@dataclass(slots=True)
class DiffRows:
    """A diff ready to show: one `Text` per row, and how many lines it adds and removes."""

    path: str
    rows: list[Text] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    """Per row: `add`, `remove`, `same`, `hunk` or `meta` (backgrounds fill the width)."""
    added: int = 0
    removed: int = 0
    new_file: bool = False
    hidden: int = 0
    """Rows left out past `MAX_ROWS`."""

    @property
    def room(self) -> int:
        return max(0, MAX_ROWS - len(self.rows))

    def add(self, row: Text, kind: str) -> None:
        self.rows.append(row)
        self.kinds.append(kind)

    def finish(self) -> DiffRows:
        if self.hidden:
            self.add(Text(f"… {self.hidden:,} more lines not shown", "acp.faint"), "meta")
        return self


def _highlighted_lines(code: str, path: str, theme: str) -> list[Text] | None:
    """Each line of `code` in colour, or None where it will be shown plain."""
    lexer = lexer_for_path(path) if len(code) <= MAX_HIGHLIGHT else None
    if lexer is None or not code:
        return None
    from rich.syntax import Syntax  # on first use: see render.lexers

    syntax = Syntax(code, lexer, theme=theme)
    text = syntax.highlight(code)
    text.style = ""  # token colours only: the diff chooses the backgrounds
    text.rstrip()
    return text.split("\n", allow_blank=True)


def _line_source(lines: list[str], highlighted: list[Text] | None) -> Callable[[int], Text]:
    """Line i as `Text`: highlighted when that worked line for line, else made on demand."""
    # Highlighting may merge or drop a trailing empty line; plain lines are used then.
    if highlighted is not None and len(highlighted) == len(lines):
        return highlighted.__getitem__
    return lambda index: Text(lines[index])


def _row(sign: str, number: int | None, width: int, line: Text, kind: str) -> Text:
    gutter = f"{number:>{width}} " if number is not None else " " * (width + 1)
    row = Text(no_wrap=False)
    row.append(gutter, "acp.diff.gutter")
    if kind == "add":
        row.append(f"{sign} ", "acp.diff.add.sign")
    elif kind == "remove":
        row.append(f"{sign} ", "acp.diff.remove.sign")
    else:
        row.append("  ")
    body = line.copy()
    body.rstrip()
    if kind in ("add", "remove"):
        body.stylize(f"acp.diff.{kind}", 0, len(body))
        row.append_text(body)
        row.stylize(f"acp.diff.{kind}", len(gutter), len(row))
    else:
        row.append_text(body)
    return row


def snippet_start(file_text: str, old: str | None, new: str) -> int | None:
    """The line of the file (from 1) where a diff of a part of it starts: where its old text
    is (an edit not made yet), else its new text (made); None when neither is there once."""
    for snippet in (old, new):
        if not snippet:
            continue
        at = file_text.find(snippet)
        if at >= 0 and file_text.find(snippet, at + 1) < 0:
            return file_text.count("\n", 0, at) + 1
    return None


def file_diff(path: str, old: str | None, new: str, theme: str, first_line: int = 1) -> DiffRows:
    """The rows of a v1 diff (`oldText` None or empty: a new file, shown whole), its lines
    numbered from `first_line` (a diff of a part of the file: where that part starts)."""
    old_text = old or ""
    old_lines = old_text.splitlines()
    new_lines = new.splitlines()
    old_hl = _line_source(old_lines, _highlighted_lines(old_text, path, theme))
    new_hl = _line_source(new_lines, _highlighted_lines(new, path, theme))
    result = DiffRows(path=path, new_file=old is None or old == "")
    base = first_line - 1
    width = len(str(base + max(len(old_lines), len(new_lines), 1)))
    if old_lines:
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        groups = list(matcher.get_grouped_opcodes(CONTEXT))
    else:  # a new file: one insertion, no need to match anything
        groups = [[("insert", 0, 0, 0, len(new_lines))]] if new_lines else []
    for index, group in enumerate(groups):
        first, last = group[0], group[-1]
        if index or first[1] > 0:
            old_at, new_at = base + first[1] + 1, base + first[3] + 1
            header = f"@@ -{old_at},{last[2] - first[1]} +{new_at},{last[4] - first[3]} @@"
            result.add(Text(header, "acp.diff.hunk"), "hunk")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                shown = min(i2 - i1, result.room)
                for offset in range(shown):
                    result.add(
                        _row(" ", base + j1 + offset + 1, width, new_hl(j1 + offset), "same"),
                        "same",
                    )
                result.hidden += i2 - i1 - shown
                continue
            if tag in ("replace", "delete"):
                shown = min(i2 - i1, result.room)
                for i in range(i1, i1 + shown):
                    result.add(_row("-", base + i + 1, width, old_hl(i), "remove"), "remove")
                result.hidden += i2 - i1 - shown
                result.removed += i2 - i1
            if tag in ("replace", "insert"):
                shown = min(j2 - j1, result.room)
                for j in range(j1, j1 + shown):
                    result.add(_row("+", base + j + 1, width, new_hl(j), "add"), "add")
                result.hidden += j2 - j1 - shown
                result.added += j2 - j1
    return result.finish()


def patch_diff(path: str, patch: str) -> DiffRows:
    """The rows of a unified patch (v2 `patch`), coloured by each line's sign."""
    result = DiffRows(path=path)
    for line in patch.splitlines():
        if not result.room:
            result.hidden += 1
            if line.startswith("+") and not line.startswith("+++"):
                result.added += 1
            elif line.startswith("-") and not line.startswith("---"):
                result.removed += 1
            continue
        if line.startswith(("+++", "---", "diff ", "index ")):
            result.add(Text(line, "acp.faint"), "meta")
        elif line.startswith("@@"):
            result.add(Text(line, "acp.diff.hunk"), "hunk")
        elif line.startswith("+"):
            result.add(_row("+", None, 0, Text(line[1:]), "add"), "add")
            result.added += 1
        elif line.startswith("-"):
            result.add(_row("-", None, 0, Text(line[1:]), "remove"), "remove")
            result.removed += 1
        else:
            result.add(_row(" ", None, 0, Text(line[1:] if line else ""), "same"), "same")
    return result.finish()
