"""What one ACP session looks like to the user: plain data, changed only by the reducer.

The timeline keeps every message, tool call, plan and notice in the order they first appeared;
the dicts beside it find them by their protocol ids. Nothing here is pruned: a renderer may
release what is off screen, the state keeps the whole history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from acp_tui.protocol.content import ContentBlock, ToolCallContent, ToolCallLocation, block_text
from acp_tui.protocol.updates import AvailableCommand, ConfigOption, Cost, PlanEntry, TurnUsage

Role = Literal["user", "agent", "thought"]
TurnStatus = Literal["idle", "running", "requires_action", "cancelling"]
OPEN_TOOL_STATUSES = frozenset({"pending", "in_progress"})
"""What a turn's end closes; a status from the future (or a made-up one) is kept as it came."""


class _Item(msgspec.Struct, eq=False, gc=False):
    """A timeline item or terminal: compared by identity, and untracked by the cycle collector
    (a flood of updates makes tens of thousands: tracking them was half of what the flood paid
    the collector). Safe, as none can be part of a reference cycle: each holds only protocol
    data (itself untracked) and plain values, never an item or the state."""


class Message(_Item):
    id: str
    role: Role
    turn: int
    content: list[ContentBlock] = msgspec.field(default_factory=list)
    revision: int = 0
    """Bumped when content is replaced rather than appended to, so a renderer that drew the
    first N blocks knows those N are no longer what is there."""

    @property
    def text(self) -> str:
        return "".join(block_text(block) for block in self.content)


@dataclass(slots=True)
class Read:
    """How much of a message's content a reader (the answer and thought views) has taken: its
    blocks, and the characters of the last one's text, which grows while text streams (the
    reducer joins streamed text onto the text block before it)."""

    blocks: int = 0
    chars: int = 0

    def added(self, content: list[ContentBlock]) -> tuple[str, list[ContentBlock]]:
        """Since the last call: the text added to the last block taken, and the blocks after
        it. (Content replaced, not appended to, is read afresh: a new `Read`.)"""
        grown = block_text(content[self.blocks - 1])[self.chars :] if self.blocks else ""
        new = content[self.blocks :]
        self.blocks = len(content)
        self.chars = len(block_text(content[-1])) if content else 0
        return grown, new


class ToolCallState(_Item):
    id: str
    turn: int
    title: str = ""
    kind: str = "other"
    status: str = "pending"
    content: list[ToolCallContent] = msgspec.field(default_factory=list)
    locations: list[ToolCallLocation] = msgspec.field(default_factory=list)
    raw_input: Any = None
    raw_output: Any = None
    name: str | None = None
    meta: dict[str, Any] | None = None

    @property
    def open(self) -> bool:
        return self.status in OPEN_TOOL_STATUSES


class PlanState(_Item):
    id: str
    type: str = "items"
    entries: list[PlanEntry] = msgspec.field(default_factory=list)
    text: str | None = None
    """For plan types other than `items` (markdown, file, the future): what to show instead."""


class TerminalState(_Item):
    """A terminal shown in a tool call: one acp-tui runs (v1) or one the agent reports (v2)."""

    id: str
    command: str | None = None
    cwd: str | None = None
    output: bytearray = msgspec.field(default_factory=bytearray)
    truncated: bool = False
    exit_code: int | None = None
    signal: str | None = None
    exited: bool = False


class Notice(_Item):
    """Something to tell the user in the transcript: an error, a stop reason, an unknown update."""

    severity: str
    title: str
    detail: str | None = None
    turn: int = 0
    key: str | None = None
    """The agent's id for what it stands for, when it has one (a compaction's)."""


class PermissionAnswer(msgspec.Struct, frozen=True):
    """How a permission request was answered: what a `permission` change carries."""

    tool_call_id: str | None
    option_id: str | None
    """The option chosen; None: the request was answered `cancelled`."""
    by: Literal["user", "policy", "turn"]
    """Who answered: the user, a rule or the `--permission` mode, or the turn's end (a cancel)."""
    reason: str | None = None
    """Why, when the policy answered (the rule, or the mode)."""
    rejected: bool = False
    """The option chosen is a rejection."""


class Mode(msgspec.Struct):
    id: str
    name: str
    description: str | None = None


TimelineItem = Message | ToolCallState | PlanState | Notice


class Compaction(msgspec.Struct):
    """A context compaction of the agent's: shown as `notice`; its last `error` kept, as the
    protocol patches it (an update that omits it keeps it)."""

    notice: Notice
    error: str | None = None


# A dataclass, not a Struct as the other records of start-up are: setting a Struct's
# attribute is slower, and the reducer sets this one's on every update (bench/README.md,
# "Sixth pass: the tail, the pipe, start-up's dataclasses").
@dataclass(slots=True, eq=False)
class SessionState:
    session_id: str = ""
    timeline: list[TimelineItem] = field(default_factory=list)
    messages: dict[str, Message] = field(default_factory=dict)
    tool_calls: dict[str, ToolCallState] = field(default_factory=dict)
    plans: dict[str, PlanState] = field(default_factory=dict)
    compactions: dict[str, Compaction] = field(default_factory=dict)
    """The agent's context compactions, by `compactionId`."""
    terminals: dict[str, TerminalState] = field(default_factory=dict)
    commands: list[AvailableCommand] = field(default_factory=list)
    modes: list[Mode] = field(default_factory=list)
    current_mode: str | None = None
    config_options: list[ConfigOption] = field(default_factory=list)
    title: str | None = None
    updated_at: str | None = None
    usage_used: int | None = None
    usage_size: int | None = None
    cost: Cost | None = None
    turn_usage: TurnUsage | None = None
    """The tokens the turn took, from its end (when the agent says: an unstable field) until
    the next one starts."""
    status: TurnStatus = "idle"
    stop_reason: str | None = None
    turn: int = 0
    """How many prompts were sent; items remember the turn they arrived in."""
    last_message: Message | None = None
    """The message a v1 chunk without `messageId` continues, while its kind does not change."""
    sent_prompt: Message | None = None
    """The prompt shown as sent this turn, until the agent reports it under its own id."""
    rejected_tool_calls: set[str] = field(default_factory=set)
    """Tool calls whose permission request the user answered with a reject option: if the
    agent leaves one open when the turn ends, it is shown rejected rather than cancelled."""
    local_ids: int = 0
    joining: ContentBlock | None = None
    """The text block the reducer made by joining streamed chunks (the last of its message):
    the next chunk's text is added to it in place. No change hands it out: a chunk's change
    holds the chunk, and a change that shows a message whole ends the joining."""

    def new_local_id(self, prefix: str) -> str:
        """An id for something the agent did not name (v1 chunks without `messageId`)."""
        self.local_ids += 1
        return f"{prefix}-{self.local_ids}"
