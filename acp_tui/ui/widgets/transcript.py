"""The transcript: the session's whole timeline as a virtual list.

The session state keeps the whole history; the transcript mounts only the blocks near the view
(the *window*), between two spacers that stand for everything above and below it. Every item
has a height: measured while its block is mounted, guessed from its text before
(`heights.estimate`). So the scrollbar spans the whole history, scrolling mounts blocks ahead of
the view and releases those far behind it, and a jump anywhere (search, Home, the scrollbar)
mounts the neighbourhood of where it lands. The user's folds are kept by item, so a block
mounted again looks as it was left. When a block above the view turns out taller or shorter
than guessed, the view is moved by as much in the same layout pass: what the user reads stays
put. Following is Textual's anchor: it stops when the user scrolls up and resumes at the
bottom (or with End).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable
from itertools import accumulate
from pathlib import Path
from typing import Any, ClassVar

from textual._styles_cache import StylesCache
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Region, Size
from textual.layout import DockArrangeResult
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from acp_tui.session.reducer import Change
from acp_tui.session.state import (
    Message,
    Notice,
    PlanState,
    SessionState,
    TerminalState,
    TimelineItem,
    ToolCallState,
)
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
    numbers: for a spacer standing for 100,000 lines, 100,000 ints made again at every resize
    (2 ms, and 8 MB kept). A spacer draws blank lines: an empty cache redraws them as surely."""

    def set_dirty(self, *regions: Region) -> None:
        self.clear()


class Transcript(VerticalScroll, can_focus=False):
    """Every message, tool call, plan and notice of the session, in order."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("end", "follow", "Follow", show=False),
        Binding("up,k", "focus_block(-1)", "Previous", show=False),
        Binding("down,j", "focus_block(1)", "Next", show=False),
        Binding("home", "first_block", "First", show=False),
    ]

    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        scrollbar-gutter: stable;
        scrollbar-size-vertical: 1;
        padding: 0 0 1 0;
    }
    Transcript > .transcript--welcome {
        margin: 1 2 0 2;
        padding: 1 2;
        border: round $foreground 15%;
        color: $text-muted;
    }
    """

    virtual_size = quiet_virtual_size()

    following: reactive[bool] = reactive(True)
    """Whether the view sticks to the end of the stream."""

    class FollowChanged(TextualMessage):
        def __init__(self, following: bool) -> None:
            super().__init__()
            self.following = following

    class FocusReleased(TextualMessage):
        """The focused block scrolled far away and was released: the focus needs a home."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state: SessionState | None = None
        self.root: Path | None = None
        self._above = Spacer()
        self._below = Spacer()
        self._window: list[Block] = []
        """The mounted blocks, in timeline order: the items from `_first` on."""
        self._first = 0
        self._blocks: dict[int, Block] = {}
        """The mounted blocks by `id()` of their item (items compare by identity)."""
        self._heights: list[int] = []
        """Each timeline item's height in lines, its gap above included: measured, or
        guessed at `_width`."""
        self._offsets: list[int] | None = None
        """Where each item starts (sums of `_heights`), until a height changes."""
        self._width = 0
        self._changed: dict[int, TimelineItem] = {}
        """Items outside the window that changed since their height was last guessed."""
        self._folds: dict[int, bool] = {}
        """The user's choice to open or close a block (by item), kept while it is released."""
        self._open_thoughts: list[Thought] = []
        self._spare: dict[Hashable, list[Block]] = {}
        """Released blocks by `_reuse_key`, hidden, to show other items of their kind."""
        self._update_scheduled = False
        self._arranged: DockArrangeResult | None = None
        self._placed: dict[Widget, int] = {}
        """Where each child was at the last layout (lines from the top of the content)."""
        self._follow_when_long = False
        """The view follows the stream, but waits for it to overflow before anchoring."""

    def compose(self) -> Any:
        yield self._above
        yield self._below

    def on_mount(self) -> None:
        self.anchor()

    def watch_virtual_size(self, size: Size) -> None:
        self._anchor_if_long(size)

    def _anchor_if_long(self, size: Size) -> None:
        # Textual 8 scrolls an anchored container to `content - viewport`, which is negative
        # while the content is shorter than the view (it then sits at the bottom, under a
        # blank screen). So the anchor is only held while there is something to scroll: the
        # content grew past the view, or the view shrank under it (a dialog opened below).
        fits = size.height <= self.scrollable_content_region.height
        if fits and self.is_anchored:
            self.anchor(False)
            self._follow_when_long = True
            if self.scroll_y != 0:
                self.set_reactive(Transcript.scroll_y, 0.0)
                self.set_reactive(Transcript.scroll_target_y, 0.0)
                self.refresh()
        elif not fits and self._follow_when_long and not self.is_anchored:
            self._follow_when_long = False
            self.anchor()
        self._update_following()

    def attach(self, state: SessionState, root: Path | None) -> None:
        """Show `state` (whatever it already holds, then its changes), instead of what is
        shown: only its last screens are mounted."""
        others = [child for child in self.children if child not in (self._above, self._below)]
        if others:
            self.remove_children(others)
        self._window, self._blocks, self._first = [], {}, 0
        self._heights, self._offsets, self._width = [], None, 0
        self._changed.clear()
        self._folds.clear()
        self._open_thoughts.clear()
        self._spare.clear()
        self._placed = {}
        self.state = state
        self.root = root
        self._sync_heights()
        count = len(state.timeline)
        if count:
            offsets = self._item_offsets()
            view = self._view_height()
            self._show_range(self._index_at(offsets[-1] - view * (1 + AHEAD)), count)
        else:
            self._set_spacers()

    def welcome(self, agent: str) -> None:
        """A word on how to start, above an empty session (it scrolls away with the rest)."""
        text = Content.assemble(
            ("Connected to ", ""),
            (agent, "bold $text-accent"),
            (".  Write below and press Enter.\n\n", ""),
            ("/", "bold $text-accent"),
            (" the agent's commands    ", ""),
            ("@", "bold $text-accent"),
            (" mention a file    ", ""),
            ("F2", "bold $text-accent"),
            (" mode and model    ", ""),
            ("F1", "bold $text-accent"),
            (" every key", ""),
        )
        self.mount(Static(text, classes="transcript--welcome"), before=0)

    # -- changes ------------------------------------------------------------------------------

    def show(self, change: Change) -> None:
        """Apply one session change to the blocks it concerns (or to the heights of those
        not mounted)."""
        item = change.item
        if change.kind == "plan_removed":
            self._plan_removed(item)
            return
        if change.kind == "terminal" and isinstance(item, TerminalState):
            for block in self._window:
                if isinstance(block, ToolCallCard) and item.id in block.terminal_ids:
                    block.terminal_changed(item.id)
            return
        if not isinstance(item, Message | ToolCallState | PlanState | Notice):
            return
        block = self._blocks.get(id(item))
        if block is not None:
            block.sync(change.delta)
            return
        state = self.state
        if state is None or not state.timeline:
            return
        timeline = state.timeline
        if timeline[-1] is item and len(self._heights) < len(timeline):
            self._settle_thoughts()  # something new came after them
            if self._first + len(self._window) == len(timeline) - 1 == len(self._heights):
                self._mount_last(item)
                return
        self._changed[id(item)] = item
        self._schedule_update()

    def _mount_last(self, item: TimelineItem) -> None:
        """A new item, and the window reaches the end: its block streams in at once."""
        block = self._block_for(item)
        self._heights.append(estimate(item, self._width))
        self._offsets = None
        self._window.append(block)
        self._blocks[id(item)] = block
        self._place(block, before=self._below)
        if isinstance(block, Thought):
            self._open_thoughts.append(block)
        self._schedule_update()  # blocks far above can go

    def _plan_removed(self, item: Any) -> None:
        block = self._blocks.pop(id(item), None)
        if block is not None:
            self._window.remove(block)
            block.remove()
        if self.state is not None and self._window:
            self._first = self.state.timeline.index(self._window[0].item)
        self._width = 0  # an item left the middle: every height is guessed again
        self._schedule_update()

    def turn_ended(self) -> None:
        self._settle_thoughts()
        for block in self._window:
            if isinstance(block, AgentMessage):
                block.flush()

    def _settle_thoughts(self) -> None:
        for thought in self._open_thoughts:
            thought.settle()
        self._open_thoughts.clear()

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

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Textual's arrangement, from which the mounted blocks' heights are measured and the
        view kept on what the user reads, before anything is drawn."""
        result = super().arrange(size, optimal)
        if optimal or result is self._arranged:
            return result
        self._arranged = result
        placed = {placement.widget: placement.region.y for placement in result.placements}
        self._keep_place(placed)
        self._measure(placed)
        self._placed = placed
        return result

    def _keep_place(self, placed: dict[Widget, int]) -> None:
        """If the block at the top of the view moved (blocks above it mounted, measured or
        released), scroll by as much: the same arrangement pass then draws it in place."""
        if not self._placed or (self.is_anchored and not self._anchor_released):
            return
        top = self.scroll_y
        anchor, was = None, 0
        for block in self._window:
            before = self._placed.get(block)
            if before is None:
                continue
            if before > top:
                break
            anchor, was = block, before
        now = placed.get(anchor) if anchor is not None else None
        if now is None or now == was:
            return
        scroll = max(0.0, self.scroll_y + now - was)
        self.set_reactive(Transcript.scroll_y, scroll)
        self.set_reactive(Transcript.scroll_target_y, scroll)
        self.vertical_scrollbar._reactive_position = scroll
        self.vertical_scrollbar.refresh()

    def _measure(self, placed: dict[Widget, int]) -> None:
        window, heights, first = self._window, self._heights, self._first
        for index, block in enumerate(window):
            top = placed.get(block)
            below = window[index + 1] if index + 1 < len(window) else self._below
            bottom = placed.get(below)
            if top is None or bottom is None or first + index >= len(heights):
                continue
            if heights[first + index] != bottom - top:
                heights[first + index] = bottom - top
                self._offsets = None

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

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._update_following()
        self._schedule_update()

    def on_resize(self) -> None:
        self._anchor_if_long(self.virtual_size)
        # Textual moves an anchored view's thumb (`_reactive_position`) without redrawing it.
        self.vertical_scrollbar.refresh()
        self._schedule_update()

    def _update_following(self) -> None:
        # Textual releases the anchor when the user scrolls, and restores it at the bottom.
        anchored = self.is_anchored and not self._anchor_released
        following = anchored or self._follow_when_long
        if following != self.following:
            self.following = following
            self.post_message(self.FollowChanged(following))

    def reveal(self, item: Any) -> Block | None:
        """Mount `item`'s block (and its neighbours) if it is not, scroll to it, focus it."""
        state = self.state
        if state is None:
            return None
        block = self._blocks.get(id(item))
        if block is None:
            try:
                index = state.timeline.index(item)
            except ValueError:
                return None
            self._jump_to(index)
            block = self._blocks.get(id(item))
        if block is not None:
            self.call_after_refresh(self._focus_block, block)
        return block

    def _jump_to(self, index: int) -> None:
        self._sync_heights()
        offsets = self._item_offsets()
        view = self._view_height()
        start = self._index_at(offsets[index] - view * AHEAD)
        end = self._index_at(offsets[index] + view * (1 + AHEAD)) + 1
        self._show_range(start, max(end, index + 1))
        self._placed = {}  # nothing shown before is where it was: no place to keep
        self.scroll_to(
            y=self._above.virtual_region.y + offsets[index], animate=False, immediate=True
        )

    def scroll_pages(self, pages: int) -> None:
        """Scroll by whole screens from where the last scroll is heading, so that a held
        key pages on before the page before is drawn (Textual's `scroll_page_down` starts
        from where the view is, and only after the next refresh). Never from behind the
        view: a place kept (`_keep_place`) while a page glides there leaves the target
        behind it, and a page from there moved a few lines (9 of 32, on a busy machine)."""
        height = self.scrollable_content_region.height
        target, shown = self.scroll_target_y, self.scroll_y
        start = max(target, shown) if pages > 0 else min(target, shown)
        self.scroll_to(y=start + pages * height, immediate=True)

    def _focus_block(self, block: Widget) -> None:
        if block.is_attached:
            block.focus(scroll_visible=False)
            self.scroll_to_widget(
                block, animate=False, top=block.outer_size.height > self.size.height
            )

    # -- actions ------------------------------------------------------------------------------

    def action_follow(self) -> None:
        if self.virtual_size.height <= self.scrollable_content_region.height:
            self._follow_when_long = True
        else:
            self.anchor()
            self.scroll_end(animate=False, immediate=True)
        self._update_following()
        self._schedule_update()

    def action_focus_block(self, step: int) -> None:
        state, window = self.state, self._window
        if state is None or not window:
            return
        focused = self.screen.focused
        if isinstance(focused, Block) and focused in window:
            index = self._first + window.index(focused) + step
        else:
            index = self._first + (len(window) - 1 if step < 0 else 0)
        if 0 <= index < len(state.timeline):
            self.reveal(state.timeline[index])

    def action_first_block(self) -> None:
        if self.state is not None and self.state.timeline:
            self.reveal(self.state.timeline[0])

    def focus_last(self) -> None:
        """Browse the blocks from the last one (mounted again if the view is far above)."""
        if self.state is not None and self.state.timeline:
            self.reveal(self.state.timeline[-1])


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
