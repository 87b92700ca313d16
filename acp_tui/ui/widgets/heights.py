"""How tall a transcript block will be, guessed from its item before it is ever rendered.

The virtual transcript places the blocks it has not mounted by these guesses (its scrollbar
spans the whole history with them); a mounted block's measured height replaces the guess. A
guess only has to be close and cheap: it is made for every item of a long history at once.
"""

from __future__ import annotations

from collections.abc import Iterable

from acp_tui.protocol.content import ContentBlock, DiffPatch, ToolCallContent, block_text
from acp_tui.session.state import Message, Notice, PlanState, TimelineItem, ToolCallState
from acp_tui.ui.widgets.diff_view import FOLDED_ROWS
from acp_tui.ui.widgets.notice import DETAIL_LINES
from acp_tui.ui.widgets.terminal_view import FOLDED_LINES
from acp_tui.ui.widgets.tool_output import (
    is_output,
    item_text,
    raw_exit_code,
    raw_output_item,
    runs_command,
)

GAP = 1
"""The blank line above every block (its top margin)."""
BOX = 2
"""A bordered block's top and bottom border."""
TERMINAL_LINES = 3
"""A terminal's command, a line of output and how it ended: most commands say little (the
output itself lives in the session's terminals, out of an item's reach)."""


def wrapped_lines(lines: Iterable[str], width: int) -> int:
    """Screen lines these lines take when wrapped at `width` columns (long words broken; an
    empty line takes one)."""
    width = max(width, 1)
    return sum(max(1, -(-len(line) // width)) for line in lines)


def estimate(item: TimelineItem, width: int, expanded: bool = False) -> int:
    """The guessed height of `item`'s block (its gap above included) at `width` columns."""
    inner = width - 4  # padding, borders and the scrollbar, whatever the block
    if isinstance(item, Message):
        if item.role == "thought" and not expanded:
            return GAP + 1
        text = item.text.strip("\n")
        chips = sum(1 for block in item.content if block.type != "text")
        body = wrapped_lines(text.split("\n"), inner) if text else 0
        return GAP + body + chips + (1 if item.role == "thought" else 0)
    if isinstance(item, ToolCallState):
        return GAP + BOX + 1 + (1 if item.locations else 0) + _tool_body(item, inner, expanded)
    if isinstance(item, PlanState):
        lines = len(item.entries) or wrapped_lines((item.text or "").split("\n"), inner)
        return GAP + BOX + lines
    if isinstance(item, Notice):
        detail = (item.detail or "").rstrip()
        lines = wrapped_lines(detail.split("\n"), inner) if detail else 0
        if not expanded:
            lines = min(lines, DETAIL_LINES + 1)
        return GAP + 1 + lines
    return GAP + 1


def _tool_body(call: ToolCallState, width: int, expanded: bool) -> int:
    lines = 0
    outputs = 0
    after_output = False  # output in pieces is one block: no gap between them
    raw = raw_output_item(call)
    for content in call.content if raw is None else [*call.content, raw]:
        if content.type == "diff":
            rows = _diff_rows(content)
            lines += GAP + 1 + (rows if expanded else min(rows, FOLDED_ROWS + 1))
            after_output = False
        elif content.type == "terminal":
            lines += GAP + TERMINAL_LINES
            after_output = False
        elif is_output(call, content):
            lines += 0 if after_output and content is not raw else GAP
            outputs += 1
            shown = wrapped_lines((item_text(content) or "").rstrip("\n").split("\n"), width - 2)
            lines += shown if expanded else min(shown, FOLDED_LINES + 1)
            after_output = True
        elif isinstance(content.content, ContentBlock) and content.content.type == "text":
            lines += GAP + wrapped_lines(block_text(content.content).split("\n"), width)
            after_output = False
        else:
            lines += GAP + 1
            after_output = False
    if outputs and runs_command(call) and raw_exit_code(call.raw_output) is not None:
        lines += 1  # how the command ended, under its output
    return lines


def _diff_rows(content: ToolCallContent) -> int:
    """About the rows of a diff: a patch's lines, else the longer side and a hunk header."""
    if isinstance(content.patch, DiffPatch):
        return content.patch.text.count("\n")
    new, old = content.new_text, content.old_text
    new_lines = new.count("\n") + 1 if isinstance(new, str) else 0
    old_lines = old.count("\n") + 1 if isinstance(old, str) else 0
    return max(new_lines, old_lines, 1) + 1
