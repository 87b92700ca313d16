"""The transcript: a block per timeline item, following the stream, bounded in size.

The session state keeps the whole history; the transcript mounts a window of it. New items
mount at the end; while the view follows the stream, blocks far above are released from the
DOM; scrolling to the top mounts the earlier ones again, from the state. Following is Textual's
anchor: it stops when the user scrolls up and resumes at the bottom (or with End).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Size
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
from acp_tui.ui.widgets.message import AgentMessage, UserMessage
from acp_tui.ui.widgets.notice import NoticeLine
from acp_tui.ui.widgets.plan_view import PlanView
from acp_tui.ui.widgets.thought import Thought
from acp_tui.ui.widgets.tool_call import ToolCallCard

MOUNTED_LIMIT = 150
"""Blocks kept in the DOM while following the stream; older ones are released."""
EARLIER_BATCH = 40
"""Blocks mounted again at a time when the user scrolls to the top."""


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

    following: reactive[bool] = reactive(True)
    """Whether the view sticks to the end of the stream."""

    class FollowChanged(TextualMessage):
        def __init__(self, following: bool) -> None:
            super().__init__()
            self.following = following

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state: SessionState | None = None
        self.root: Path | None = None
        self._blocks: dict[int, Block] = {}
        """Mounted blocks, by `id()` of their item (items compare by identity)."""
        self._open_thoughts: list[Thought] = []
        self._loading_earlier = False
        self._release_scheduled = False
        self._follow_when_long = False
        """The view follows the stream, but waits for it to overflow before anchoring."""

    def on_mount(self) -> None:
        self.anchor()

    def watch_virtual_size(self, size: Size) -> None:
        # Textual 8 scrolls an anchored container to `content - viewport`, which is negative
        # while the content is shorter than the view (it then sits at the bottom, under a
        # blank screen). So the anchor is only held while there is something to scroll.
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
        shown."""
        if self._blocks or self.children:
            self.remove_children()
            self._blocks.clear()
            self._open_thoughts.clear()
        self.state = state
        self.root = root
        start = max(0, len(state.timeline) - MOUNTED_LIMIT)
        blocks = [self._block_for(item) for item in state.timeline[start:]]
        for block in blocks:
            self._blocks[id(block.item)] = block
        if blocks:
            self.mount_all(blocks)

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
        """Apply one session change to the blocks it concerns."""
        item = change.item
        if change.kind == "plan_removed":
            block = self._blocks.pop(id(item), None) if item is not None else None
            if block is not None:
                block.remove()
            return
        if change.kind == "terminal" and isinstance(item, TerminalState):
            for block in self._blocks.values():
                if isinstance(block, ToolCallCard) and item.id in block.terminal_ids:
                    block.terminal_changed(item.id)
            return
        if not isinstance(item, Message | ToolCallState | PlanState | Notice):
            return
        block = self._blocks.get(id(item))
        if block is not None:
            block.sync(change.delta)
            return
        if self.state is None or not self.state.timeline or self.state.timeline[-1] is not item:
            return  # an item outside the mounted window: the state has it for later
        self._settle_thoughts()
        block = self._block_for(item)
        self._blocks[id(item)] = block
        self.mount(block)
        if isinstance(block, Thought):
            self._open_thoughts.append(block)
        self._release_old()

    def turn_ended(self) -> None:
        self._settle_thoughts()
        for block in self._blocks.values():
            if isinstance(block, AgentMessage):
                block.flush()

    def _settle_thoughts(self) -> None:
        for thought in self._open_thoughts:
            thought.settle()
        self._open_thoughts.clear()

    def _block_for(self, item: TimelineItem) -> Block:
        assert self.state is not None
        if isinstance(item, Message):
            if item.role == "user":
                return UserMessage(item)
            if item.role == "thought":
                return Thought(item)
            return AgentMessage(item)
        if isinstance(item, ToolCallState):
            return ToolCallCard(item, self.state, self.root)
        if isinstance(item, PlanState):
            return PlanView(item)
        return NoticeLine(item)

    # -- the window ---------------------------------------------------------------------------

    @property
    def blocks(self) -> list[Block]:
        return [child for child in self.children if isinstance(child, Block)]

    def block_for(self, item: Any) -> Block | None:
        return self._blocks.get(id(item))

    def _first_index(self) -> int:
        """Where the first mounted block's item is in the timeline."""
        blocks = self.blocks
        if not blocks or self.state is None:
            return 0
        try:
            return self.state.timeline.index(blocks[0].item)
        except ValueError:
            return 0

    def _release_old(self) -> None:
        """Release blocks far above, once the ones just added are mounted (a burst of items
        arrives in one go: the release is batched after it)."""
        if not self._release_scheduled:
            self._release_scheduled = True
            self.call_after_refresh(self._release_now)

    def _release_now(self) -> None:
        self._release_scheduled = False
        if not self.following:
            return
        blocks = self.blocks
        excess = len(blocks) - MOUNTED_LIMIT
        if excess <= 0:
            return
        for block in blocks[:excess]:
            self._blocks.pop(id(block.item), None)
        self.remove_children(blocks[:excess])

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._update_following()
        if new <= 0 and old > 0:
            self.load_earlier()

    def _update_following(self) -> None:
        # Textual releases the anchor when the user scrolls, and restores it at the bottom.
        anchored = self.is_anchored and not getattr(self, "_anchor_released", False)
        following = anchored or self._follow_when_long
        if following != self.following:
            self.following = following
            self.post_message(self.FollowChanged(following))
            if following:
                self._release_old()  # back at the end: what was loaded above can go again

    def load_earlier(self, count: int = EARLIER_BATCH) -> int:
        """Mount up to `count` blocks released from above, keeping the view where it is.
        Returns how many were mounted."""
        if self.state is None or self._loading_earlier:
            return 0
        first = self._first_index()
        if first <= 0:
            return 0
        start = max(0, first - count)
        items = self.state.timeline[start:first]
        blocks = [self._block_for(item) for item in items]
        for block in blocks:
            self._blocks[id(block.item)] = block
        anchor = self.blocks[0] if self.blocks else None
        self._loading_earlier = True
        offset_before = anchor.virtual_region.y if anchor is not None else 0

        def keep_place() -> None:
            self._loading_earlier = False
            if anchor is not None and anchor.is_attached:
                shift = anchor.virtual_region.y - offset_before
                self.scroll_to(y=self.scroll_y + shift, animate=False, immediate=True)

        self.mount_all(blocks, before=0)
        self.call_after_refresh(keep_place)
        return len(blocks)

    def reveal(self, item: Any) -> Block | None:
        """Mount `item`'s block if it was released, then scroll to it and focus it."""
        block = self._blocks.get(id(item))
        if block is None and self.state is not None and item in self.state.timeline:
            first = self._first_index()
            index = self.state.timeline.index(item)
            if index < first:
                self.load_earlier(first - index)
                block = self._blocks.get(id(item))
        if block is not None:
            self.call_after_refresh(self._focus_block, block)
        return block

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

    def action_focus_block(self, step: int) -> None:
        blocks = self.blocks
        if not blocks:
            return
        focused = self.screen.focused
        if isinstance(focused, Block) and focused in blocks:
            index = blocks.index(focused) + step
        else:
            index = len(blocks) - 1 if step < 0 else 0
        if index < 0:
            if self.load_earlier():
                self.call_after_refresh(self.action_focus_block, step)
            return
        if index >= len(blocks):
            return
        self._focus_block(blocks[index])

    def action_first_block(self) -> None:
        if self.state is not None and self.state.timeline:
            self.reveal(self.state.timeline[0])

    def last_block(self) -> Block | None:
        blocks = self.blocks
        return blocks[-1] if blocks else None
