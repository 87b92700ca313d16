"""A file's diff under review (the changes view): each hunk's header says the user's verdict,
and the hunk being looked at is pointed at."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.style import Style
from rich.text import Text

from acp_tui.checkpoints.hunks import Hunk
from acp_tui.conversation.review import Verdict
from acp_tui.protocol.content import ToolCallContent
from acp_tui.ui.render.diff import DiffRows
from acp_tui.ui.widgets.diff_view import DiffView

SIGNS: dict[Verdict, tuple[str, str]] = {
    "accepted": ("✓", "$text-success"),
    "rejected": ("✗", "$text-error"),
}
"""A verdict's sign, and its colour, where counted (the changes view's list of files)."""
MARKS: dict[Verdict, tuple[str, str]] = {
    "accepted": ("  ✓ accepted", "acp.success"),
    "rejected": ("  ✗ rejected: reverted when you send the review (s)", "acp.error"),
}


class ReviewDiff(DiffView):
    """The diff of one file of a turn, hunk by hunk, with the verdicts given so far."""

    def __init__(self, item: ToolCallContent, hunks: Sequence[Hunk]) -> None:
        super().__init__(item, None)
        self.hunks = list(hunks)
        self.verdicts: Mapping[int, Verdict] = {}
        self.current = 0
        self._plain: DiffRows | None = None

    def mark(self, verdicts: Mapping[int, Verdict], current: int) -> None:
        """Show these verdicts, the hunk `current` pointed at."""
        self.verdicts, self.current = dict(verdicts), current
        self._rows = None
        self.invalidate()

    def _compute(self) -> DiffRows:
        if self._plain is None:
            self._plain = super()._compute()
        plain = self._plain
        rows = DiffRows(plain.path, [], [], plain.added, plain.removed, plain.new_file)
        index = 0
        for at, (row, kind) in enumerate(zip(plain.rows, plain.kinds, strict=True)):
            if at == 0 and kind != "hunk" and self.hunks:
                # The first hunk at the top of a file has no header of its own: it gets one.
                rows.add(self._header(index, None), "hunk")
                index += 1
            if kind == "hunk":
                rows.add(self._header(index, row), "hunk")
                index += 1
            else:
                rows.add(row, kind)
        return rows

    def _header(self, index: int, row: Text | None) -> Text:
        if row is None and index < len(self.hunks):
            hunk = self.hunks[index]
            old, new = hunk.old_end - hunk.old_start, hunk.new_end - hunk.new_start
            # As git writes it: an empty side starts at the line before it (0 at the top).
            old_at, new_at = hunk.old_start + (old > 0), hunk.new_start + (new > 0)
            row = Text(f"@@ -{old_at},{old} +{new_at},{new} @@")
            row.stylize("acp.diff.hunk")
        bold = Style(bold=True)
        pointer = self.palette.style("acp.accent") + bold
        header = Text()
        header.append("▶ " if index == self.current else "  ", pointer)
        header.append_text(row or Text(""))
        verdict = self.verdicts.get(index)
        if verdict is not None:
            mark, style = MARKS[verdict]
            header.append(mark, self.palette.style(style) + bold)
        return header
