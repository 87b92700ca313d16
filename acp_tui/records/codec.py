"""Transcript items to bytes and back: msgspec JSON of the `SessionState` items.

Each timeline item (message, tool call, plan, notice) and each terminal is one row; the
session-wide fields a record needs to show the conversation again (title, turn count, usage)
are one more blob. A message streamed as thousands of text chunks is stored in the few blocks
the reducer joined them into (`reducer.JOINED_TEXT`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from acp_tui.protocol.updates import Cost
from acp_tui.session.state import (
    Compaction,
    Message,
    Notice,
    PlanState,
    SessionState,
    TerminalState,
    TimelineItem,
    ToolCallState,
)

if TYPE_CHECKING:
    from acp_tui.records.store import ConversationRecord, RecordStore

Item = TimelineItem | TerminalState

KINDS: dict[type, str] = {
    Message: "message",
    ToolCallState: "tool_call",
    PlanState: "plan",
    Notice: "notice",
    TerminalState: "terminal",
}
TYPES: dict[str, type] = {kind: cls for cls, kind in KINDS.items()}

_encode = msgspec.json.Encoder().encode
_decoders = {kind: msgspec.json.Decoder(cls) for kind, cls in TYPES.items()}


class Meta(msgspec.Struct, rename="camel", omit_defaults=True):
    """The session-wide part of a record."""

    turn: int = 0
    local_ids: int = 0
    title: str | None = None
    updated_at: str | None = None
    usage_used: int | None = None
    usage_size: int | None = None
    cost: Cost | None = None
    current_mode: str | None = None
    stop_reason: str | None = None


_decode_meta = msgspec.json.Decoder(Meta)


def encode_item(item: Item) -> tuple[str, bytes]:
    """(kind, JSON) for one item. A message is written with its blocks as the state has them:
    streamed text is joined there already (`reducer.JOINED_TEXT`)."""
    return KINDS[item.__class__], _encode(item)


def decode_item(kind: str, data: bytes) -> Item | None:
    """The item a row holds; None for a kind or shape this version cannot read."""
    decoder = _decoders.get(kind)
    if decoder is None:
        return None
    try:
        return decoder.decode(data)
    except (msgspec.DecodeError, TypeError, ValueError):
        return None


def encode_meta(state: SessionState) -> bytes:
    return _encode(
        Meta(
            state.turn,
            state.local_ids,
            state.title,
            state.updated_at,
            state.usage_used,
            state.usage_size,
            state.cost,
            state.current_mode,
            state.stop_reason,
        )
    )


def copy_state(state: SessionState) -> SessionState:
    """What a record keeps of `state` (its items, title, turns and usage), as a new state of
    its own: a forked session's history, which goes on apart from the one it came from."""
    items = [*state.timeline, *state.terminals.values()]
    rows = [(seq, *encode_item(item)) for seq, item in enumerate(items, 1)]
    copy, _rows = restore_state(state.session_id, rows, encode_meta(state))
    return copy


def restore_state(
    session_id: str, rows: list[tuple[int, str, bytes]], meta: bytes | None
) -> tuple[SessionState, dict[int, int]]:
    """A `SessionState` showing a recorded conversation, from its rows in order; and the row
    number of each restored object, by `id()`, so a recorder can go on updating those rows."""
    state = SessionState(session_id=session_id)
    known: dict[int, int] = {}
    for seq, kind, data in rows:
        item = decode_item(kind, data)
        if item is None:
            continue
        known[id(item)] = seq
        if isinstance(item, TerminalState):
            state.terminals[item.id] = item
            continue
        state.timeline.append(item)
        if isinstance(item, Message):
            state.messages[item.id] = item
        elif isinstance(item, ToolCallState):
            state.tool_calls[item.id] = item
            if item.open:  # its turn is over: it ended, or acp-tui stopped in it
                item.status = "cancelled"
        elif isinstance(item, PlanState):
            state.plans[item.id] = item
        elif isinstance(item, Notice) and item.severity == "compaction" and item.key:
            state.compactions[item.key] = Compaction(item)
    if meta:
        try:
            saved = _decode_meta.decode(meta)
        except msgspec.DecodeError:
            saved = Meta()
        state.turn, state.local_ids = saved.turn, saved.local_ids
        state.title, state.updated_at = saved.title, saved.updated_at
        state.usage_used, state.usage_size, state.cost = (
            saved.usage_used,
            saved.usage_size,
            saved.cost,
        )
        state.current_mode, state.stop_reason = saved.current_mode, saved.stop_reason
    # Items of turns the agent numbered past the saved count (a crash mid-turn) still count.
    turns = [item.turn for item in state.timeline if isinstance(item, Message | ToolCallState)]
    state.turn = max([state.turn, *turns])
    return state, known


def recorded_state(store: RecordStore, record: ConversationRecord) -> SessionState:
    """A record as a `SessionState`, to show or export without any agent."""
    state, _known = restore_state(record.session_id, store.items(record.id), record.meta)
    return state
