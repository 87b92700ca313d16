"""Streaming Markdown that stays fast however long the answer grows.

Appends are only buffered; at most once per frame the buffer is folded in. The text is kept as
*finished* pieces (whole top-level blocks that nothing appended later can change) and a live
*tail* (the last block). Finished pieces are rendered once per width; only the tail is parsed
and rendered again on each frame. A frame therefore costs the size of the tail, not of the
message, and a message of 20,000 chunks streams as smoothly as one of twenty. A long answer
stays one view however tall it grows: Textual's cost of a growing widget does not depend on its
height (`ui/textual_fixes.py`), and each widget more is a cost every frame (bench/README.md,
"Long answers (issue 29)").

When text comes faster than Rich renders it (a fast agent, a replay), a frame parses for
`PARSE_TIME`, a few KB at a time, and renders only the last screenful of the blocks it
finished: the others scroll past unseen and get an estimated height. Text further behind is
not even parsed: it is cut at `block_cuts` (a regex scan) into pieces of several blocks, each
parsed when rendered. An estimated piece is rendered when it is shown, or by the catch-up that
runs once no view has had text for `QUIET` seconds (`settled` waits for it; `shown` does not).

A finished piece remembers its height; its lines live in the shared `STRIPS` budget and are
rendered again when scrolled back to (see `strip_cache` for why). Non-text content (images,
resources) becomes a chip between the Markdown pieces.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import deque
from typing import TYPE_CHECKING, ClassVar

from rich.console import RenderableType
from textual.geometry import Region
from textual.strip import Strip
from textual.timer import Timer

from acp_tui.protocol.content import ContentBlock
from acp_tui.ui.render.chips import chip_text
from acp_tui.ui.render.markdown_cuts import block_cuts
from acp_tui.ui.render.strip_cache import STRIPS
from acp_tui.ui.widgets.markdown_pace import (
    FOLD_STEP,
    FOLD_TIME,
    FRAME,
    PARSE_TIME,
    QUIET,
    SKIM_PIECE,
    SKIM_TEXT,
    TAIL_PACE,
    TYPING,
    TYPING_PARSE_TIME,
    WHOLE_TEXT,
)
from acp_tui.ui.widgets.markdown_piece import Piece, estimate, estimate_again, extent
from acp_tui.ui.widgets.pending_text import PendingText
from acp_tui.ui.widgets.strips_view import StripsView, render_strips

if TYPE_CHECKING:
    from acp_tui.ui.render.markdown import Parsed


class MarkdownView(StripsView):
    """Markdown text that grows by `append`, shown through the Line API."""

    last_text = 0.0
    """When any view was last given text or took some in (`time.monotonic`): the catch-up
    waits for a pause of all of them. In a flood the text is all given at once and taken in
    over many frames."""
    last_key = 0.0
    """When the user last pressed a key (`time.monotonic`): see `TYPING_PARSE_TIME`."""
    behind: ClassVar[list[MarkdownView]] = []
    """Views with estimated blocks, in turn: the last one in (the likeliest to be scrolled
    back to) catches up, a frame's worth at a time, and the others check back now and then (a
    long conversation has many views: all of them waking every frame cost more than the
    catch-up)."""

    DEFAULT_CSS = """
    MarkdownView {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(
        self,
        text: str = "",
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._pieces: list[Piece] = []
        self._tops: list[int] = []
        """`top` of each piece, for bisecting a line number to its piece."""
        self._frozen_height = 0
        self._waiting: deque[Piece] = deque()
        """Finished blocks parsed but not yet rendered (they follow `_pieces`)."""
        self._estimated: list[int] = []
        """Indexes in `_pieces` of the estimated pieces, in order."""
        self._measured: dict[int, int] = {}
        """Estimated pieces the catch-up rendered, by index: their true heights, placed when the
        catch-up is done (or one of them is shown)."""
        self._moves: list[tuple[int, int]] = []
        """Heights placed since `take_moved`, in turn: the line after the piece as it was, and
        the lines it gained."""
        self._tail = ""
        self._tail_parsed: Parsed | None = None
        self._tail_lines: list[Strip] = []
        self._tail_stale = False
        """`_tail_lines` are not of `_tail` yet (see `TAIL_PACE`)."""
        self._tail_cost = 0.0
        self._tail_rendered = 0.0
        """When the tail was last rendered (`time.perf_counter`), and what it took."""
        self._pending = PendingText(text)
        self._uncut = 0
        """Up to where in the text (`PendingText.done`'s count) `_skim` found no cut."""
        self._width = -1
        """The width every height and cached line is for; -1: nothing measured yet."""
        self._timer: Timer | None = None
        self._last_flush = 0.0
        self._behind = False
        """In `behind`."""

    # -- content ------------------------------------------------------------------------------

    @property
    def source(self) -> str:
        """All the Markdown text given so far (chips excluded)."""
        pieces = (*self._pieces, *self._waiting)
        finished = "".join(p.markdown for p in pieces if p.markdown is not None)
        return finished + self._tail + self._pending.text()

    @property
    def shown(self) -> bool:
        """True when no appended text waits for a frame (a view not laid out yet, or hidden,
        waits for no frame: its first layout takes its text in, or starts to)."""
        return not (self._pending or self._waiting or self._tail_stale) or self._width < 0

    @property
    def settled(self) -> bool:
        """True when all the text is shown and every height is exact (no estimate is left)."""
        return self.shown and not (self._estimated and self._width >= 0)

    def append(self, text: str) -> None:
        """Add text to the end; it shows within a frame."""
        if not text:
            return
        self._pending.append(text)
        if self._width >= 0:  # a view not shown takes its text in at its first layout
            MarkdownView.last_text = time.monotonic()
        self._schedule()

    def add_chip(self, block: ContentBlock) -> None:
        """End the current Markdown and show a chip for `block` after it."""
        self._fold_pending()
        while self._waiting:
            self._add_piece(self._waiting.popleft())
        if self._tail.strip():
            self._add_piece(Piece(markdown=self._tail, parsed=self._tail_parsed))
        self._tail, self._tail_lines, self._tail_parsed = "", [], None
        self._tail_stale = False
        self._add_piece(Piece(chip=block))
        self._changed(layout=True)

    def clear(self) -> None:
        for piece in self._pieces:
            STRIPS.forget(piece)
        self._pieces, self._tops = [], []
        self._frozen_height = 0
        self._waiting.clear()
        self._estimated.clear()
        self._measured.clear()
        self._moves.clear()
        self._tail, self._tail_lines, self._tail_parsed = "", [], None
        self._tail_stale = False
        self._pending.clear()
        # Like a new view, it takes its next text in whole at its next layout: a block shown
        # again for another item is laid out once, not once empty and again a frame later.
        self._width = -1
        self.invalidate()

    def flush(self) -> None:
        """Take in what was appended (a frame's worth of it) and repaint what changed."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._last_flush = time.monotonic()
        if not (self._pending or self._waiting or self._estimated or self._tail_stale):
            return
        if self._width < 0:
            # Not measured yet: the layout its mount or `clear` asked for takes it all in (or,
            # hidden in a folded block, the one that shows it).
            return
        before = self._line_count()
        frozen_before = self._frozen_height
        tail, pieces = self._tail, len(self._pieces)
        if self._pending or self._waiting:
            MarkdownView.last_text = self._last_flush
        started = time.perf_counter()
        self._skim()
        typing = time.monotonic() < MarkdownView.last_key + TYPING
        deadline = time.perf_counter() + (TYPING_PARSE_TIME if typing else PARSE_TIME)
        while self._pending and time.perf_counter() < deadline:
            self._fold_pending(FOLD_STEP)
        if self._waiting:
            self._take_waiting()
        if self._may_catch_up():
            self._catch_up(started + FOLD_TIME)
        taken = tail != self._tail or pieces != len(self._pieces)
        self._tail_stale |= taken
        if not self.settled:
            self._schedule()
        due = self._tail_stale and (
            not self._tail.strip() or started >= self._tail_rendered + TAIL_PACE * self._tail_cost
        )
        if not (taken or due):
            return  # a frame that waits for a pause to catch up, or for a slow tail's turn
        if due:
            self._render_tail()
        if self._line_count() != before or self._frozen_height != frozen_before:
            self._changed(layout=True)
        else:
            region = Region(0, self._tail_top(), self.size.width, len(self._tail_lines))
            self._changed(region=region)

    # -- folding ------------------------------------------------------------------------------

    def _schedule(self) -> None:
        if self._timer is not None or not self.is_attached:
            return
        next_frame = self._last_flush + FRAME
        if not (self._pending or self._waiting or self._tail_stale):  # only the catch-up is left
            if _turn_to_catch_up() is self:
                next_frame = max(next_frame, MarkdownView.last_text + QUIET)
            else:
                next_frame = max(next_frame, time.monotonic() + QUIET)  # to check back
        wait = next_frame - time.monotonic()
        # Textual timers divide by their delay: never ask for zero.
        self._timer = self.set_timer(max(wait, 0.001), self.flush, name="markdown-flush")

    def _fold_pending(self, budget: int | None = None) -> None:
        """Move pending text (up to `budget` characters) into the tail, and the tail's
        finished blocks, parsed, into `_waiting`, each with its height estimated once the view
        is measured."""
        if not self._pending:
            return
        text = self._pending.take(budget)
        from acp_tui.ui.render.markdown import split_blocks  # markdown_it: after the first frame

        blocks = split_blocks(self._tail + text)
        live = blocks.pop() if blocks else None
        self._tail = live.text if live is not None else ""
        self._tail_parsed = live.parsed if live is not None else None
        for block in blocks:
            # One piece per block: blocks are then always one blank line apart, however the
            # text happened to be cut into chunks.
            piece = Piece(markdown=block.text, parsed=block.parsed)
            if self._width >= 0:
                piece.height = estimate(piece, self._width)
            self._waiting.append(piece)

    def _skim(self) -> None:
        """Cut the pending text above the last screenful's worth (unseen in a flood) into
        estimated pieces at `block_cuts`, parsed only when rendered: `SKIM_TEXT` characters
        at most."""
        keep = max(FOLD_STEP, self.app.size.height * self._width)
        skimmed = len(self._pending) - keep
        if skimmed < SKIM_PIECE:
            return
        window = min(skimmed, SKIM_TEXT)
        if self._pending.done + window <= self._uncut:
            return  # looked at already: one long block (an agent's 600 KB line)
        text = self._tail + self._pending.peek(window)
        cuts = block_cuts(text, len(self._tail), SKIM_PIECE)
        if not cuts:
            self._uncut = self._pending.done + window
        start = 0
        for cut in cuts:
            piece = Piece(markdown=text[start:cut], several=True)
            piece.height = estimate(piece, self._width)
            self._waiting.append(piece)
            start = cut
        if start:
            self._pending.take(start - len(self._tail))
            self._tail, self._tail_parsed = "", None

    def _add_piece(self, piece: Piece) -> None:
        previous = self._pieces[-1] if self._pieces else None
        self._pieces.append(piece)
        if self._width >= 0:
            self._render_piece(piece)
            self._place(piece, previous)

    def _place(self, piece: Piece, previous: Piece | None) -> None:
        piece.top = self._frozen_height + extent(piece, previous, piece.height) - piece.height
        self._tops.append(piece.top)
        self._frozen_height = piece.top + piece.height

    def _take_waiting(self) -> None:
        """Place the finished blocks parsed this frame. More than a screenful would scroll
        past unseen: render only the last screenful of them, and estimate the others."""
        screen = self.app.size.height
        keep = len(self._waiting)
        if sum(piece.height + 1 for piece in self._waiting) > screen:
            rendered, keep = 0, 0
            for piece in reversed(self._waiting):
                if rendered >= screen:
                    break
                rendered += len(self._render_piece(piece)) + 1
                keep += 1
        while self._waiting:
            piece = self._waiting.popleft()
            previous = self._pieces[-1] if self._pieces else None
            if len(self._waiting) >= keep:
                piece.estimated = True
                self._join_behind()
                piece.parsed = None  # parsed again if it is ever rendered: tokens weigh more
                self._estimated.append(len(self._pieces))
            elif piece.lines is None:
                self._render_piece(piece)
            self._pieces.append(piece)
            self._place(piece, previous)

    def _may_catch_up(self) -> bool:
        """After a pause in the text, and in turn (`behind`)."""
        return not self._pending and not text_showing() and _turn_to_catch_up() is self

    def _catch_up(self, deadline: float) -> None:
        """Render estimated pieces (the latest first: the likeliest to be scrolled to) until
        `deadline`; once none is left, place them all and let the next view `behind` take its
        turn. Placed each frame, they moved the view under the screen, drawn and written again
        whole for nothing (bench/README.md, "Long answers (issue 29)")."""
        while self._estimated and time.perf_counter() < deadline:
            self._measure(self._estimated.pop())
        if not self._estimated:
            self._place_measured()
            if (after := _turn_to_catch_up()) is not None:
                after.flush_soon()

    def _measure(self, index: int) -> None:
        """Render an estimated piece, its place left as it is until `_place_measured`."""
        piece = self._pieces[index]
        placed = piece.height
        self._measured[index] = len(self._render_piece(piece))
        piece.height = placed

    def _place_measured(self) -> None:
        if not self._measured:
            return
        gained = 0
        for index in sorted(self._measured):
            piece, height = self._pieces[index], self._measured[index]
            if height != piece.height:
                gained += self._note_move(index, piece.height, height, gained)
            piece.height, piece.estimated = height, False
        self._retop(min(self._measured))
        self._measured.clear()
        self._changed(layout=True)

    def _note_move(self, index: int, before: int, after: int, shift: int = 0) -> int:
        """Note for `take_moved` the lines piece `index` gains from `before` to `after` (gap
        included; `shift`: what the pieces before it gained, not placed yet), and return them."""
        piece = self._pieces[index]
        previous = self._pieces[index - 1] if index else None
        gained = extent(piece, previous, after) - extent(piece, previous, before)
        self._moves.append((piece.top + before + shift, gained))
        return gained

    @property
    def moved(self) -> bool:  # heights were placed since `take_moved` last took them
        return bool(self._moves)

    def take_moved(self, line: int) -> int:
        """Lines the heights placed since the last call added above `line` (as laid out before
        them), then forgotten: the transcript scrolls by them, so the text read stays put."""
        moved = 0
        for end, gained in self._moves:
            if end <= line:
                line += gained
                moved += gained
            elif end + gained <= line:  # the line was in what a block above it lost
                line = end + gained - 1
        self._moves.clear()
        return moved

    def flush_soon(self) -> None:
        """Flush at the next frame, whatever the timer waited for."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._schedule()

    def _make_exact(self, piece: Piece) -> None:
        piece.estimated = False
        self._render_piece(piece)

    def _retop(self, start: int) -> None:
        """Place the pieces from `start` on again (a height before them changed)."""
        del self._tops[start:]
        previous = self._pieces[start - 1] if start else None
        self._frozen_height = previous.top + previous.height if previous is not None else 0
        for piece in self._pieces[start:]:
            self._place(piece, previous)
            previous = piece

    # -- rendering ----------------------------------------------------------------------------

    def _renderable(self, markdown: str, parsed: Parsed | None = None) -> RenderableType:
        from acp_tui.ui.render.markdown import TranscriptMarkdown  # see _fold_pending

        palette = self.palette
        return TranscriptMarkdown(markdown, palette.code_theme, palette.code_background, parsed)

    def _render_piece(self, piece: Piece) -> list[Strip]:
        if piece.several:
            lines = self._render_blocks(piece.markdown or "")
        elif piece.chip is not None:
            lines = render_strips(self.palette, chip_text(piece.chip), self._width)
        else:
            renderable = self._renderable(piece.markdown or "", piece.parsed)
            piece.parsed = None  # rendering again (another width, or evicted) parses again
            lines = render_strips(self.palette, renderable, self._width)
        STRIPS.forget(piece)
        piece.lines, piece.height = lines, len(lines)
        STRIPS.touch(piece)
        return lines

    def _render_blocks(self, markdown: str) -> list[Strip]:
        """Several blocks, each rendered as a piece of its own, spaced as `_place` spaces them."""
        from acp_tui.ui.render.markdown import split_blocks  # see _fold_pending

        lines: list[Strip] = []
        for block in split_blocks(markdown):
            renderable = self._renderable(block.text, block.parsed)
            rendered = render_strips(self.palette, renderable, self._width)
            if rendered and lines:
                lines.append(Strip.blank(self._width))
            lines.extend(rendered)
        return lines

    def _render_tail(self) -> None:
        started = time.perf_counter()
        # The tail follows the waiting blocks: while they wait, so does it.
        if self._tail.strip() and not self._waiting:
            renderable = self._renderable(self._tail, self._tail_parsed)
            self._tail_lines = render_strips(self.palette, renderable, self._width)
        else:
            self._tail_lines = []
        self._tail_stale = False
        self._tail_rendered = time.perf_counter()
        self._tail_cost = self._tail_rendered - started

    def _tail_top(self) -> int:
        return self._frozen_height + (1 if self._frozen_height and self._tail_lines else 0)

    def _line_count(self) -> int:
        return self._tail_top() + len(self._tail_lines)

    def _changed(self, *, layout: bool = False, region: Region | None = None) -> None:
        if not self.is_attached:
            return
        if layout:
            self.refresh(layout=True)
        elif region is not None and region.height:
            self.refresh(region)

    def _ensure_width(self, width: int) -> None:
        width = max(1, width)
        if self._width < 0 and len(self._pending) > WHOLE_TEXT:
            self._schedule()  # a stream: taken in through `flush`, from the next frame
        elif self._width < 0:
            # First layout: take in what the widget was created with. Later text arrives
            # through `flush`, a frame's worth at a time.
            self._fold_pending()
            self._pieces.extend(self._waiting)
            self._waiting.clear()
        if width == self._width:
            return
        self._width = width
        self._estimated.clear()
        self._measured.clear()
        self._moves.clear()  # every height is new: the transcript measures the block again
        # From the last piece (the likeliest shown) for `FOLD_TIME`, the rest estimated: a layout
        # that narrowed a flood's views and widened them again had rendered every block twice.
        whole = sum(len(piece.markdown or "") for piece in self._pieces) <= WHOLE_TEXT
        deadline = time.perf_counter() + FOLD_TIME
        exact = len(self._pieces)
        while exact and (whole or time.perf_counter() < deadline):
            exact -= 1
            self._make_exact(self._pieces[exact])
        for index, piece in enumerate(self._pieces[:exact]):
            estimate_again(piece, width)
            self._estimated.append(index)
        if self._estimated:
            self._join_behind()
            self._schedule()
        self._retop(0)
        self._render_tail()
        self._lines_width = width

    def _join_behind(self) -> None:
        """Take a turn to catch up on estimated pieces (`behind`), if not in the queue yet."""
        if not self._behind:
            self._behind = True
            MarkdownView.behind.append(self)

    def _show_estimated(self, index: int) -> None:
        """An estimated piece comes into view: render it, and lay out again if its height was
        not the estimate (the next frame shows it in place); or place all the catch-up did."""
        piece = self._pieces[index]
        if index in self._measured:
            self._place_measured()
            if piece.lines is None:  # rendered, then let go for lines seen since
                self._render_piece(piece)
            return
        estimate = piece.height
        self._make_exact(piece)
        self._estimated.remove(index)
        if piece.height != estimate:
            self._note_move(index, estimate, piece.height)
            self._retop(index)
            self.refresh(layout=True)
        if not self._estimated:
            self._place_measured()  # the catch-up's last turn will not come: place its blocks

    def on_unmount(self) -> None:
        # Out of `behind` now, not when its turn would come: the list is the class's, and
        # would keep a removed view (and all its text) alive until then.
        if self._behind:
            MarkdownView.behind.remove(self)
            self._behind = False

    # -- StripsView ---------------------------------------------------------------------------

    def invalidate(self) -> None:
        self._width = -1
        super().invalidate()

    def lines_for(self, width: int) -> list[Strip]:
        self._ensure_width(width)
        return self._tail_lines

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        self._ensure_width(width)
        return self._line_count()

    def get_content_width(self, container: object, viewport: object) -> int:
        return getattr(container, "width", 80)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._ensure_width(width)
        base = self.base_style
        line: Strip | None = None
        if y < self._frozen_height:
            index = bisect_right(self._tops, y) - 1
            if index >= 0:
                piece = self._pieces[index]
                lines = piece.lines
                if piece.estimated:
                    self._show_estimated(index)
                    # Placed now, the blocks above it may have moved it: what is at y?
                    return self.render_line(y)
                if lines is None:
                    lines = self._render_piece(piece)
                else:
                    STRIPS.touch(piece)
                offset = y - piece.top
                if 0 <= offset < len(lines):
                    line = lines[offset]
        else:
            offset = y - self._tail_top()
            if 0 <= offset < len(self._tail_lines):
                line = self._tail_lines[offset]
        if line is None:
            return Strip.blank(width, base)
        return line.apply_style(base)


def key_pressed() -> None:
    """The user pressed a key: for `TYPING` seconds, frames parse for `TYPING_PARSE_TIME`."""
    MarkdownView.last_key = time.monotonic()


def text_showing() -> bool:
    """Whether a view was given text or took some in within `QUIET` seconds: an answer is still
    appearing (a flood shows for long after its turn ended)."""
    return time.monotonic() < MarkdownView.last_text + QUIET


def _turn_to_catch_up() -> MarkdownView | None:
    """The view whose turn it is to catch up (views gone, or with nothing left, leave)."""
    behind = MarkdownView.behind
    # A view not measured (hidden since the theme changed) measures every block exactly when
    # it is laid out again: until then it has nothing to catch up, and must not hold the turn.
    while behind:
        view = behind[-1]
        if view.is_attached and view._estimated and view._width >= 0:
            return view
        behind.pop()._behind = False
    return None
