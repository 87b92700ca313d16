"""Keeps a conversation's record in step with its session, as it streams.

A `Recorder` is one of the session's listeners. On the hot path (every chunk) it only notes
which item changed; a timer writes the changed items `FLUSH_DELAY` seconds later, and the end
of a turn starts writing at once. So a streaming turn costs a dict insert per chunk, and
acp-tui killed mid-turn loses at most the last `FLUSH_DELAY` seconds. (A message of megabytes
takes a while to rewrite: then writes are spaced so that they take at most a tenth of the
time, and a little more may be lost.) Writing here is encoding the items, `SLICE` of them at a
time, the rest at the loop's next turn, so that thousands of them (a replayed history) cost
no frame; the store writes them on a thread of its own. Closing writes all that is left.

The conversation's row is created on the first write with something worth keeping (a prompt
sent, or a history replayed), so sessions opened and left untouched leave nothing behind.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import TYPE_CHECKING, Any

from acp_tui.records.codec import Item, encode_item, encode_meta
from acp_tui.records.store import ConversationRecord, RecordStore
from acp_tui.session.change import Change
from acp_tui.session.state import Message
from acp_tui.session.summary import CONTEXT_MARK, typed_text

if TYPE_CHECKING:
    from acp_tui.session.session import Session

FLUSH_DELAY = 0.2
WRITING_SHARE = 0.1
"""At most this share of the time goes to writing, however big the changed items are."""
SLICE = 0.004
"""A flush holds the event loop for about this long at most (seconds), and goes on at its next
turn: a history of thousands of items is written without the screen missing a frame."""
TITLE_LENGTH = 80
_NOTHING = object()


class Recorder:
    def __init__(
        self,
        store: RecordStore,
        session: Session,
        *,
        agent: str,
        command: list[str],
        record: ConversationRecord | None = None,
        known: dict[int, int] | None = None,
        rewrite: bool = False,
        delay: float = FLUSH_DELAY,
    ) -> None:
        """Record `session` as the conversation of `record` (a new one if None). `known` maps
        the `id()` of items restored from that record to their rows; every other item already
        in the session (a replayed history) is written on the first flush, after dropping the
        old rows when `rewrite` is set."""
        self.store = store
        self.session = session
        self.agent = agent
        self.command = command
        self.conversation = record.id if record is not None else None
        self.delay = delay
        self._pause = delay
        self._rows: dict[int, int] = dict(known or {})
        self._next_row = max(self._rows.values(), default=0) + 1
        self._dirty: dict[int, Item] = {}
        self._removed: list[int] = []
        self._rewrite = rewrite
        self._title: str | None = None
        self._written: tuple[bytes | None, str | None, str | None] | None = None
        """What the conversation's row holds (meta, title, session id), when known: a flush
        that would write nothing new is skipped, so a session only looked at keeps its place
        in the list."""
        if record is not None:
            self._written = (record.meta, record.title, record.session_id)
        self._timer: asyncio.Handle | None = None
        self._noted: Any = _NOTHING
        """The message the last change was to, while it waits in `_dirty` with its write timed:
        a change to it again (most changes: its next chunk) is noted already."""
        self._spent = 0.0
        """Seconds the flush under way (in slices) has taken so far."""
        self._loop = asyncio.get_running_loop()
        state = session.state
        for item in [*state.timeline, *state.terminals.values()]:
            if id(item) not in self._rows:
                self._dirty[id(item)] = item
        session.listeners.append(self)
        if self._dirty or rewrite:
            # A replayed history (tens of thousands of items: a tenth of a second and more)
            # is written once the screen has shown it, like any change.
            self._timer = self._loop.call_later(self._pause, self._on_timer)

    # -- the listener (hot path) ------------------------------------------------------------

    def __call__(self, session: Session, change: Change) -> None:
        item = change.item
        if item is self._noted:  # the message streaming in, noted and its write timed already
            return
        kind = change.kind
        if item is not None:
            if kind == "plan_removed":
                self._forget(item)
            # A call the turn's end (or a cancel) closed as cancelled is not written again: a
            # record reads an open call as cancelled. Hundreds of calls with their diffs were
            # otherwise rewritten at the end of a turn, for one word.
            elif kind != "tool_call_closed" or item.status != "cancelled":
                self._dirty[id(item)] = item
                if kind == "message":
                    self._noted = item
        if kind == "status" and session.state.status == "idle":
            self.flush()
        elif self._timer is None:
            self._timer = self._loop.call_later(self._pause, self._on_timer)

    def _forget(self, item: Any) -> None:
        self._noted = _NOTHING
        self._dirty.pop(id(item), None)
        row = self._rows.pop(id(item), None)
        if row is not None:
            self._removed.append(row)

    def _on_timer(self) -> None:
        self._timer = None
        self.flush()

    # -- writing ------------------------------------------------------------------------------

    def flush(self, *, whole: bool = False) -> None:
        """Write what changed since the last flush: what can be encoded in `SLICE`, unless
        `whole`, the rest at the loop's next turn."""
        self._noted = _NOTHING
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        store, state = self.store, self.session.state
        if store.failed:
            return
        if self.conversation is None:
            if not self._worth_keeping():
                return
            if store.busy and not whole:
                # Its row would be made on the loop, after the writer is done with another
                # conversation's saves (a long history just opened): a frozen screen meanwhile.
                self._timer = self._loop.call_later(self._pause, self._on_timer)
                return
            self.conversation = store.create(
                self.agent,
                self.command,
                str(self.session.client.options.cwd),
                self.session.id,
                self.session.version,
            )
            if self.conversation is None:
                return
        meta, title = encode_meta(state), self.title()
        written = (meta, title, self.session.id)
        if not (self._dirty or self._removed or self._rewrite) and written == self._written:
            return
        started = time.perf_counter()
        deadline = math.inf if whole else started + SLICE
        taken: list[int] = []
        rows = []
        for key, item in self._dirty.items():
            row = self._rows.get(key)
            if row is None:
                row = self._rows[key] = self._next_row
                self._next_row += 1
            kind, data = encode_item(item)
            rows.append((row, kind, data))
            taken.append(key)
            if time.perf_counter() > deadline:
                break
        last = len(taken) == len(self._dirty)
        saved = store.save(
            self.conversation,
            rows,
            removed=self._removed,
            meta=meta,
            title=title,
            session_id=self.session.id,
            # A history written afresh drops the old rows past it with its last slice, so
            # that until then the record holds the old one, then the new (same numbering).
            drop_from=self._next_row if self._rewrite and last else None,
            on_gone=self._gone,
        )
        self._spent += time.perf_counter() - started
        if not saved:
            return
        for key in taken:
            del self._dirty[key]
        self._removed.clear()
        if last:
            self._rewrite = False
        if self._dirty:
            self._timer = self._loop.call_soon(self._on_timer)
            return
        self._written = written
        self._pause = max(self.delay, self._spent / WRITING_SHARE - self._spent)
        self._spent = 0.0

    def _gone(self, conversation: int) -> None:
        """The conversation was deleted elsewhere (another acp-tui's session picker) while it
        goes on here: keep it all the same, as a new conversation, every item written again.
        (Each save to it that was already asked for says so too.)"""
        if conversation != self.conversation:
            return
        state = self.session.state
        self.conversation = None
        self._written = None
        self._rows.clear()
        self._next_row = 1
        self._removed.clear()
        self._rewrite = False
        self._dirty = {id(item): item for item in [*state.timeline, *state.terminals.values()]}
        # Closed (the store learns of it as it closes too): no later turn writes the rest.
        self.flush(whole=self not in self.session.listeners)

    def close(self) -> None:
        """Write what is left and stop listening."""
        self.flush(whole=True)
        if self in self.session.listeners:
            self.session.listeners.remove(self)

    def _worth_keeping(self) -> bool:
        state = self.session.state
        return state.turn > 0 or any(isinstance(item, Message) for item in state.timeline)

    def title(self) -> str | None:
        """The agent's title for the session, else the start of the first prompt as the user
        typed it (an agent's title that only repeats the summary acp-tui put before it, after
        a rewind, is no title)."""
        state = self.session.state
        if state.title and not state.title.startswith(CONTEXT_MARK):
            return state.title
        if self._title is None:
            first = next(
                (i for i in state.timeline if isinstance(i, Message) and i.role == "user"), None
            )
            text = " ".join(typed_text(first.text).split()) if first is not None else ""
            if text:
                cut = text[:TITLE_LENGTH]
                self._title = cut + "…" if len(text) > TITLE_LENGTH else cut
        return self._title
