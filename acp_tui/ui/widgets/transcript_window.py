"""The transcript's window: which of the timeline's blocks are mounted, and how tall every
item is.

The blocks near the view are mounted between two spacers that stand for the rest; each
item's height is measured while its block is mounted, and guessed (`heights.estimate`)
while it is not. `TranscriptWindow` keeps those books for `Transcript` (its module tells the
whole design); released blocks are kept, hidden, to show other items of their kind.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable
from itertools import accumulate
from typing import Any

from textual._styles_cache import StylesCache
from textual.geometry import Region
from textual.widget import Widget

from acp_tui.session.state import Message, PlanState, TimelineItem, ToolCallState
from acp_tui.ui.widgets.block import Block
from acp_tui.ui.widgets.heights import estimate
from acp_tui.ui.widgets.message import AgentMessage, UserMessage
from acp_tui.ui.widgets.notice import NoticeLine
from acp_tui.ui.widgets.plan_view import PlanView
from acp_tui.ui.widgets.quiet_size import quiet_virtual_size
from acp_tui.ui.widgets.thought import Thought
from acp_tui.ui.widgets.tool_call import ToolCallCard, content_views

AHEAD = 1.0
"""Screens of blocks kept mounted beyond the view, above and below: scrolling finds them
ready."""
BATCH = 2.0
"""Screens of blocks mounted at once when fewer than `AHEAD` are ready: mounting lays the
screen out again, so it is done for several pages at a time; the pages between only scroll
(Textual's fast path: no layout)."""
BEHIND = 5.0
"""Screens beyond the view past which blocks are released (down to `AHEAD + BATCH`, so that
scrolling back and forth does not mount and release the same blocks). Blocks are also
released down to that when blocks are mounted on the other side: in the same layout."""
SPARE = 8
"""Released blocks of each kind kept (hidden) for reuse. A block made anew costs its
composition and styling, and a released one is garbage that only a full collection frees: a
stall, and memory that grows until then."""


class Spacer(Widget):
    """Stands for the blocks not mounted above (or below) the window: their total height."""

    virtual_size = quiet_virtual_size()

    DEFAULT_CSS = """
    Spacer {
        width: 1fr;
        height: 0;
    }
    """

    cells = 0

    def __init__(self) -> None:
        super().__init__()
        self._styles_cache = _BlankLines()

    def set_cells(self, cells: int) -> None:
        if cells != self.cells:
            self.cells = cells
            self.styles.height = cells


class _BlankLines(StylesCache):
    """A spacer's cache of drawn lines. Textual notes which lines are dirty in a set of line
    numbers: for a spacer standing for 100,000 lines, 100,000 ints made again at every resize,
    and kept (bench/README.md, "Scrolling, third pass: Textual's garbage and Textual's timer").
    A spacer draws blank lines: an empty cache redraws them as surely."""

    def set_dirty(self, *regions: Region) -> None:
        self.clear()


class TranscriptWindow:
    """The window of a `Transcript`, which mixes this in ahead of Textual's `VerticalScroll`
    (whose methods it calls): the blocks mounted and released, the spacers, and every
    item's height. Its state is made in `Transcript.__init__`."""

    def _block_for(self, item: TimelineItem) -> Block:
        """A block showing `item`: a spare one of its kind if there is one, else a new one."""
        state = self.state
        assert state is not None
        kind = _kind_of(item)
        spare = self._spare.get(_reuse_key(item, kind))
        block: Block
        if spare:
            block = spare.pop()
            block.rebind(item)
            block.display = True
        elif kind is ToolCallCard:
            block = ToolCallCard(item, state, self.root)  # type: ignore[arg-type]
        else:
            block = kind(item)
        if kind is Thought:
            # Open while it streams; folded once something came after it.
            block.expanded = state.timeline[-1] is item and state.status != "idle"
        expanded = self._folds.get(id(item))
        if expanded is not None:
            block.folded_by_user = True
            block.expanded = expanded
        return block

    # -- heights ------------------------------------------------------------------------------

    def _view_height(self) -> int:
        return self.scrollable_content_region.height or self.app.size.height

    def _sync_heights(self) -> None:
        """Guess the heights of new items and of changed ones outside the window (all of
        them again when the width changed)."""
        assert self.state is not None
        timeline = self.state.timeline
        width = self.scrollable_content_region.width or self.app.size.width
        folds = self._folds
        if width != self._width:
            self._width = width
            self._heights = [estimate(item, width, folds.get(id(item), False)) for item in timeline]
            self._offsets = None
            self._changed.clear()
            return
        heights = self._heights
        known = len(heights)
        if known < len(timeline):
            heights.extend(
                estimate(item, width, folds.get(id(item), False)) for item in timeline[known:]
            )
            self._offsets = None
        for key, item in self._changed.items():
            if key in self._blocks:
                continue
            # What changes off screen is mostly the last item (a stream the view left): no scan.
            if timeline and timeline[-1] is item:
                index = len(timeline) - 1
            else:
                try:
                    index = timeline.index(item)
                except ValueError:
                    continue
            if index >= known:
                continue  # estimated just now
            height = estimate(item, width, folds.get(key, False))
            if heights[index] != height:
                heights[index] = height
                self._offsets = None
        self._changed.clear()

    def _item_offsets(self) -> list[int]:
        """Where each item starts, and (last) where the history ends, in lines."""
        if self._offsets is None:
            self._offsets = list(accumulate(self._heights, initial=0))
        return self._offsets

    def _index_at(self, y: float) -> int:
        """The item at `y` lines from the top of the history (clamped to the history)."""
        offsets = self._item_offsets()
        index = bisect_right(offsets, y) - 1
        return max(0, min(index, len(offsets) - 2))

    # -- the window ---------------------------------------------------------------------------

    @property
    def blocks(self) -> list[Block]:
        """The mounted blocks, in order."""
        return list(self._window)

    def block_for(self, item: Any) -> Block | None:
        return self._blocks.get(id(item))

    def _schedule_update(self) -> None:
        if not self._update_scheduled:
            self._update_scheduled = True
            self.call_after_refresh(self._update_window)

    def _update_window(self) -> None:
        """Mount the blocks near the view that are not, release those far from it."""
        self._update_scheduled = False
        state = self.state
        if state is None or not self.is_attached:
            return
        self._sync_heights()
        count = len(state.timeline)
        if not count:
            return
        offsets = self._item_offsets()
        view = self._view_height()
        if self.is_anchored and not self._anchor_released:
            top = offsets[-1] - view
        else:
            # Where the spacer was laid out (below the welcome, if any): asking Textual would
            # lay the whole screen out again once the spacer is out of view.
            top = self.scroll_y - self._placed.get(self._above, 0)
        bottom = top + view
        want_first = self._index_at(top - view * AHEAD)
        want_end = self._index_at(bottom + view * AHEAD) + 1
        first, end = self._first, self._first + len(self._window)
        if not self._window or end <= want_first or first >= want_end:
            self._show_range(want_first, want_end)
            return
        short = end < want_end or first > want_first
        too_far = first < self._index_at(top - view * BEHIND) or end > (
            self._index_at(bottom + view * BEHIND) + 1
        )
        if not short and not too_far:
            return  # the view only scrolls: no layout
        keep_first = self._index_at(top - view * (AHEAD + BATCH))
        keep_end = self._index_at(bottom + view * (AHEAD + BATCH)) + 1
        if end < want_end:
            self._mount(end, keep_end)
        elif end > keep_end:
            self._release(self._window[keep_end - first :])
        if first > want_first:
            self._mount(keep_first, first)
        elif first < keep_first:
            self._release(self._window[: keep_first - first])
            self._first = keep_first
        self._set_spacers()

    def _mount(self, start: int, end: int) -> None:
        """Mount the blocks of items `start` to `end`, just above or just below the window."""
        assert self.state is not None
        blocks = [self._block_for(item) for item in self.state.timeline[start:end]]
        for block in blocks:
            self._blocks[id(block.item)] = block
        if start < self._first:
            self._window[:0] = blocks
            self._first = start
            for block in reversed(blocks):
                self._place(block, after=self._above)
        else:
            self._window.extend(blocks)
            for block in blocks:
                self._place(block, before=self._below)

    def _place(
        self, block: Block, *, before: Widget | None = None, after: Widget | None = None
    ) -> None:
        """Mount a new block, or move a reused one, next to `before` or `after`."""
        if block.parent is self:
            self.move_child(block, before=before, after=after)
        else:
            self.mount(block, before=before, after=after)

    def _release(self, blocks: list[Block]) -> None:
        """Unmount `blocks` (from one end of the window), keeping what the user chose."""
        focused = self.screen.focused
        for block in blocks:
            self._blocks.pop(id(block.item), None)
            self._placed.pop(block, None)  # shown again, it is another item elsewhere
            if block.folded_by_user:
                self._folds[id(block.item)] = block.expanded
            if focused is not None and (focused is block or block in focused.ancestors):
                # Textual would focus (and scroll to) a neighbour: the screen chooses instead.
                self.screen.set_focus(None)
                self.post_message(self.FocusReleased())
            # Hidden, the block leaves the layout in the same pass as the spacer takes its
            # height (removing takes a while).
            block.display = False
        released = set(blocks)
        self._window = [block for block in self._window if block not in released]
        self._open_thoughts = [t for t in self._open_thoughts if t not in released]
        excess: list[Block] = []
        for block in blocks:
            spare = self._spare.setdefault(_reuse_key(block.item, type(block)), [])
            if len(spare) < SPARE and block.composed:
                spare.append(block)
            else:
                excess.append(block)
        if excess:
            self.remove_children(excess)

    def _show_range(self, start: int, end: int) -> None:
        """Mount items `start` to `end` instead of the window (a jump)."""
        if self._window:
            self._release(list(self._window))
        self._first = start
        self._mount(start, end)
        self._set_spacers()

    def _set_spacers(self) -> None:
        offsets = self._item_offsets()
        self._above.set_cells(offsets[self._first])
        self._below.set_cells(offsets[-1] - offsets[self._first + len(self._window)])


def _reuse_key(item: TimelineItem, kind: type[Block]) -> Hashable:
    """What a released block must have shown to show `item` (a `kind` block) again as it is:
    its kind, and for a tool call the widgets of its content (reshaping a card mounts and
    removes widgets: a layout more, for every card scrolled into reach)."""
    return (kind, content_views(item)) if isinstance(item, ToolCallState) else kind


def _kind_of(item: TimelineItem) -> type[Block]:
    """The block class that shows `item`."""
    if isinstance(item, Message):
        return {"user": UserMessage, "thought": Thought}.get(item.role, AgentMessage)
    if isinstance(item, ToolCallState):
        return ToolCallCard
    if isinstance(item, PlanState):
        return PlanView
    return NoticeLine
