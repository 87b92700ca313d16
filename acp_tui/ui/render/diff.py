"""Unified diffs for tool calls: rows of syntax-highlighted code on tinted backgrounds.

A v1 diff carries the whole old and new text of a file; the rows are computed here (hunks with
three lines of context) and highlighted with the file's lexer, old and new text each in one
pass so multi-line strings and comments colour correctly. A v2 diff carries a patch; its rows
are read from the patch text itself.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from rich.text import Text

from acp_tui.ui.render.markdown import lexer_for_path

CONTEXT = 3


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

    def add(self, row: Text, kind: str) -> None:
        self.rows.append(row)
        self.kinds.append(kind)


def _highlighted_lines(code: str, path: str, theme: str) -> list[Text]:
    lexer = lexer_for_path(path)
    if lexer is None or not code:
        return [Text(line) for line in code.splitlines()]
    from rich.syntax import Syntax  # on first use: see render.markdown

    syntax = Syntax(code, lexer, theme=theme)
    text = syntax.highlight(code)
    text.style = ""  # token colours only: the diff chooses the backgrounds
    text.rstrip()
    return text.split("\n", allow_blank=True)


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


def file_diff(path: str, old: str | None, new: str, theme: str) -> DiffRows:
    """The rows of a v1 diff (`oldText` None or empty: a new file, shown whole)."""
    old_text = old or ""
    old_lines = old_text.splitlines()
    new_lines = new.splitlines()
    old_hl = _highlighted_lines(old_text, path, theme)
    new_hl = _highlighted_lines(new, path, theme)
    # Highlighting may merge or drop a trailing empty line; fall back to plain lines then.
    if len(old_hl) != len(old_lines):
        old_hl = [Text(line) for line in old_lines]
    if len(new_hl) != len(new_lines):
        new_hl = [Text(line) for line in new_lines]
    result = DiffRows(path=path, new_file=old is None or old == "")
    width = len(str(max(len(old_lines), len(new_lines), 1)))
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for index, group in enumerate(matcher.get_grouped_opcodes(CONTEXT)):
        first, last = group[0], group[-1]
        if index or first[1] > 0:
            header = (
                f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@"
            )
            result.add(Text(header, "acp.diff.hunk"), "hunk")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for offset in range(i2 - i1):
                    result.add(
                        _row(" ", j1 + offset + 1, width, new_hl[j1 + offset], "same"), "same"
                    )
                continue
            if tag in ("replace", "delete"):
                for i in range(i1, i2):
                    result.add(_row("-", i + 1, width, old_hl[i], "remove"), "remove")
                result.removed += i2 - i1
            if tag in ("replace", "insert"):
                for j in range(j1, j2):
                    result.add(_row("+", j + 1, width, new_hl[j], "add"), "add")
                result.added += j2 - j1
    return result


def patch_diff(path: str, patch: str) -> DiffRows:
    """The rows of a unified patch (v2 `patch`), coloured by each line's sign."""
    result = DiffRows(path=path)
    for line in patch.splitlines():
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
    return result
