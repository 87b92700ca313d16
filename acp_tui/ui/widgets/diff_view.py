"""A file diff inside a tool call: path, +/- counts, highlighted rows, folded when long."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.strip import Strip

from acp_tui.protocol.content import DiffChange, DiffPatch, ToolCallContent
from acp_tui.ui.render.diff import DiffRows, file_diff, patch_diff
from acp_tui.ui.widgets.strips_view import StripsView, render_strips

FOLDED_ROWS = 14
"""Rows shown before a long diff is folded (Enter on the tool call shows the rest)."""


def relative_path(path: str, root: Path | None) -> str:
    """`path` relative to the workspace when it is inside it, else as given."""
    if root is None:
        return path
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


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
            return file_diff(relative_path(item.path, self.root), old, item.new_text, theme)
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
