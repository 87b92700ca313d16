"""A file diff inside a tool call: path, +/- counts, highlighted rows, folded when long."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rich.text import Text
from textual.strip import Strip

from acp_tui.protocol.content import DiffChange, DiffPatch, ToolCallContent
from acp_tui.ui.render.diff import DiffRows, file_diff, patch_diff, snippet_start
from acp_tui.ui.widgets.strips_view import StripsView, render_strips

FOLDED_ROWS = 14
"""Rows shown before a long diff is folded (Enter on the tool call shows the rest)."""
MAX_PLACED = 4 * 1024 * 1024
"""Files read to number a diff of a part of them from their own lines: at most this big."""


def relative_path(path: str, root: Path | None) -> str:
    """`path` relative to the workspace when it is inside it, else as given."""
    if root is None:
        return path
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


def workspace_text(path: str, root: Path | None) -> str | None:
    """The text of a regular file inside the workspace, small and UTF-8; else None."""
    if root is None:
        return None
    resolved = Path(os.path.realpath(root / path))  # an absolute `path` stays as it is
    try:
        resolved.relative_to(os.path.realpath(root))
        if not stat.S_ISREG((info := resolved.stat()).st_mode) or info.st_size > MAX_PLACED:
            return None
        return resolved.read_text(encoding="utf-8")
    except (OSError, ValueError):  # outside, gone, unreadable, not UTF-8
        return None


def first_line(path: str, old: str | None, new: str, root: Path | None) -> int:
    """Where a diff starts in its file: agents send an edit's snippet (Claude Code's
    `old_string`, `new_string`), numbered from 1 unless the file places it."""
    if not old:
        return 1  # a new file
    text = workspace_text(path, root)
    start = snippet_start(text, old, new) if text is not None else None
    return start or 1


def change_line(change: DiffChange, root: Path | None) -> str:
    """A v2 change without a patch: `move old.py → new.py`, `add logo.png (binary)`."""
    path = relative_path(change.path, root)
    if isinstance(change.old_path, str):
        path = f"{relative_path(change.old_path, root)} → {path}"
    kind = f" ({change.file_type})" if isinstance(change.file_type, str) else ""
    return f"{change.operation} {path}{kind}"


class DiffView(StripsView):
    """One `diff` item of a tool call's content."""

    DEFAULT_CSS = """
    DiffView {
        width: 1fr;
        height: auto;
        margin: 1 0 0 0;
    }
    """

    def __init__(self, item: ToolCallContent, root: Path | None) -> None:
        super().__init__()
        self.root = root
        self.expanded = False
        self._item = item
        self._rows: DiffRows | None = None

    def sync(self, item: ToolCallContent) -> None:
        if item is not self._item:
            self._item = item
            self._rows = None
            self.invalidate()

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self.invalidate()

    @property
    def rows(self) -> DiffRows:
        if self._rows is None:
            self._rows = self._compute()
        return self._rows

    def _compute(self) -> DiffRows:
        item = self._item
        theme = self.palette.code_theme
        if isinstance(item.new_text, str) and isinstance(item.path, str):
            old = item.old_text if isinstance(item.old_text, str) else None
            start = first_line(item.path, old, item.new_text, self.root)
            return file_diff(relative_path(item.path, self.root), old, item.new_text, theme, start)
        patch = item.patch
        changes = item.changes if isinstance(item.changes, list) else []
        path = ", ".join(relative_path(c.path, self.root) for c in changes) or "patch"
        if isinstance(patch, DiffPatch):
            return patch_diff(path, patch.text)
        rows = DiffRows(path=path)
        for change in changes:
            rows.rows.append(Text(change_line(change, self.root)))
        return rows

    def summary(self) -> Text:
        rows = self.rows
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append(rows.path, "bold")
        header.append("  ")
        if rows.new_file:
            header.append("new file  ", "acp.muted")
        header.append(f"+{rows.added}", "acp.success")
        header.append(" ")
        header.append(f"-{rows.removed}", "acp.error")
        return header

    def build_lines(self, width: int) -> list[Strip]:
        palette = self.palette
        rows = self.rows
        count = len(rows.rows) if self.expanded else min(len(rows.rows), FOLDED_ROWS)
        lines = render_strips(palette, self.summary(), width)
        fills = {kind: palette.style(f"acp.diff.{kind}") for kind in ("add", "remove", "hunk")}
        for row, kind in zip(rows.rows[:count], rows.kinds[:count], strict=False):
            strips = render_strips(palette, row, width) or [Strip([])]
            fill = fills.get(kind)
            if fill is not None:
                # Added and removed lines are tinted to the edge, like an editor's diff.
                strips = [strip.extend_cell_length(width, fill) for strip in strips]
            lines.extend(strips)
        hidden = len(rows.rows) - count
        if hidden > 0:
            more = Text(f"  … {hidden} more lines  (enter to expand)", "acp.muted")
            lines.extend(render_strips(palette, more, width))
        return lines

    def text(self) -> str:
        return "\n".join(row.plain for row in self.rows.rows)
