"""acp-tui's local record of conversations: one SQLite database in the data directory.

`$XDG_DATA_HOME/acp-tui/history.sqlite3` (default `~/.local/share/acp-tui/`) holds a row per
conversation (the agent, its command, the workspace, the agent's session id and those it had
before, title, times) and a row per transcript item, rewritten as the item changes. WAL mode:
each save is one small transaction that survives acp-tui being killed, and several acp-tui
processes can share the file. It also remembers which sign-in method worked for each agent.

Saves are written on a thread of its own (`writer.Writer`), each as one statement that
SQLite runs without the GIL, and the same thread copies the write-ahead log into the database
(a checkpoint, with its fsync) when it runs out of saves. So a turn that writes megabytes
costs the event loop only the encoding of its items.

Nothing here may stop a session: a database that cannot be opened or written is reported
once (through `on_warning`) and the store goes quiet.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from acp_tui.paths import data_dir
from acp_tui.records.writer import ConversationGone, Save, Writer

DATABASE = "history.sqlite3"
SCHEMA_VERSION = 1
DRAIN_PATIENCE = 1.0
"""Seconds `RecordStore.drained` waits off the event loop for a writer that stays busy."""
PAGE_SIZE = 16384
"""For a new database: items are kilobytes of JSON each (a tool call with its diff), and
pages of 4 KB left most of them on overflow pages, which made a save much dearer
(bench/README.md, "Third pass: the record's writes")."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    command TEXT NOT NULL,
    workspace TEXT NOT NULL,
    session_id TEXT NOT NULL,
    title TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    protocol_version INTEGER NOT NULL DEFAULT 1,
    meta BLOB
);
CREATE INDEX IF NOT EXISTS conversations_by_agent
    ON conversations (agent, workspace, updated_at);
CREATE INDEX IF NOT EXISTS conversations_by_session ON conversations (session_id);
-- Databases made before PAGE_SIZE keep their 4 KB pages and a WITHOUT ROWID items table:
-- slower to write, read and written by the same statements.
CREATE TABLE IF NOT EXISTS items (
    conversation INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (conversation, seq)
);
-- The session ids a conversation had before (the agent could not reopen it: it went on in a
-- new session), so that each still names it.
CREATE TABLE IF NOT EXISTS earlier_sessions (
    conversation INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    PRIMARY KEY (conversation, session_id)
);
CREATE TABLE IF NOT EXISTS auth_choices (
    agent TEXT PRIMARY KEY,
    method_id TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
"""

_COLUMNS = (
    "id, agent, command, workspace, session_id, title, created_at, updated_at, "
    "protocol_version, meta"
)


def default_path() -> Path:
    return data_dir() / DATABASE


def now() -> str:
    """The current time, ISO 8601 in UTC to the millisecond (sorts as text)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str | None) -> datetime | None:
    """An ISO 8601 time (ours or an agent's `updatedAt`), as an aware datetime."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


class ConversationRecord(msgspec.Struct):
    """One recorded conversation (without its items)."""

    id: int
    agent: str
    command: list[str]
    workspace: str
    session_id: str
    title: str | None
    created_at: str
    updated_at: str
    protocol_version: int = 1
    meta: bytes | None = None

    @property
    def updated(self) -> datetime | None:
        return parse_time(self.updated_at)


class RecordStore:
    """The database, on one connection used from the event loop's thread, which saves go
    past: they are written on the writer's thread (see `Writer`), and every other use of the
    connection first waits for them (`settle`), so it finds what was saved before it."""

    def __init__(
        self, connection: sqlite3.Connection, path: Path, on_warning: Callable[[str], None]
    ) -> None:
        self.path = path
        self._db = connection
        self._warn = on_warning
        self._writer: Writer | None = None
        self.failed = False

    @classmethod
    def open(
        cls, path: Path | None = None, *, on_warning: Callable[[str], None] | None = None
    ) -> RecordStore | None:
        """Open (creating) the database at `path` (default: `default_path()`); None, after a
        warning, if that is not possible."""
        path = path or default_path()
        warn = on_warning or (lambda _message: None)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, timeout=5.0, isolation_level=None)
            connection.execute(f"PRAGMA page_size={PAGE_SIZE}")  # only a new database takes it
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA foreign_keys=ON")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                connection.close()
                warn(f"{path} was written by a newer acp-tui; conversations are not recorded")
                return None
            connection.executescript(_SCHEMA)
            connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except (OSError, sqlite3.Error) as error:
            warn(f"cannot keep a record of conversations in {path}: {error}")
            return None
        return cls(connection, path, warn)

    def close(self) -> None:
        """Write every save asked for, and close."""
        self.settle()
        if self._writer is not None:
            self._writer.stop()
            atexit.unregister(self._writer.stop)
            self._act_on(self._writer, gone_too=False)
            self._writer = None
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
        self.failed = True

    def settle(self) -> None:
        """Wait until the saves asked for are written, and act on those that failed: the
        store goes quiet after a warning, or a conversation deleted meanwhile is told to its
        recorder (`on_gone`)."""
        while self._writer is not None:
            self._writer.wait()
            if not self._writer.outcomes:
                return
            self._act_on(self._writer, gone_too=True)  # which may save again: wait for that too

    @property
    def busy(self) -> bool:
        """Whether saves asked for are still being written: a use of the loop's connection
        now (`settle`) would wait for them."""
        return self._writer is not None and self._writer.busy

    async def drained(self, patience: float = DRAIN_PATIENCE) -> None:
        """`settle`, the event loop going on meanwhile: the writer is waited for on a thread.
        A read right after a long history was handed over (Ctrl+O as it opens) would
        otherwise freeze the screen until all of it is written (for frames on end:
        bench/README.md, "Fourth pass: the record off the loop").
        While the loop goes on, saves may keep coming: after `patience` seconds, what is
        asked for by then is waited for on the loop."""
        writer = self._writer
        if writer is not None and writer.busy:
            await asyncio.to_thread(writer.wait, patience)
        self.settle()

    def _usable(self) -> bool:
        """Whether the loop's connection may be used now: the saves asked for are written
        (`settle`) and the store has not failed."""
        self.settle()
        return not self.failed

    def _act_on(self, writer: Writer, *, gone_too: bool) -> None:
        while writer.outcomes:  # an `on_gone` may save, and come back here
            job, error = writer.outcomes.popleft()
            if not isinstance(error, ConversationGone):
                self._failed(error)
            elif gone_too and job.on_gone is not None:
                job.on_gone(job.conversation)

    def _failed(self, error: Exception) -> None:
        if not self.failed:
            self._warn(f"stopped recording conversations in {self.path}: {error}")
        self.failed = True

    # -- conversations ------------------------------------------------------------------------

    def create(
        self,
        agent: str,
        command: list[str],
        workspace: str,
        session_id: str,
        protocol_version: int = 1,
    ) -> int | None:
        """A new conversation row; its id (None if the store failed)."""
        if not self._usable():
            return None
        stamp = now()
        try:
            cursor = self._db.execute(
                "INSERT INTO conversations (agent, command, workspace, session_id, created_at,"
                " updated_at, protocol_version) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (agent, json.dumps(command), workspace, session_id, stamp, stamp, protocol_version),
            )
        except sqlite3.Error as error:
            self._failed(error)
            return None
        return cursor.lastrowid

    def save(
        self,
        conversation: int,
        rows: Iterable[tuple[int, str, bytes]],
        *,
        removed: Iterable[int] = (),
        meta: bytes | None = None,
        title: str | None = None,
        session_id: str | None = None,
        drop_from: int | None = None,
        on_gone: Callable[[int], None] | None = None,
    ) -> bool:
        """Ask for changed items (`(seq, kind, data)` rows, upserted) to be written, `removed`
        ones dropped, and the conversation updated, in one transaction on the writer's thread;
        `drop_from`: every item from that seq on is dropped too (a history written afresh, in
        rows numbered from 1). False if the store has failed. If the conversation was
        deleted meanwhile (by another acp-tui), nothing is written and `on_gone` is called
        with its id, on this thread, by the next `settle` (which follows at once when an
        event loop runs here)."""
        if self.failed:
            return False
        if self._writer is None:
            try:
                # Only the writer checkpoints, after its saves, off this thread.
                self._db.execute("PRAGMA wal_autocheckpoint=0")
                self._writer = Writer(self.path, self.settle)
            except sqlite3.Error as error:
                self._failed(error)
                return False
            # Its thread dies with the interpreter: an exit that skips `close` (an error on
            # the way out) still writes what was asked.
            atexit.register(self._writer.stop)
        parts, index, start = [], [], 1
        for seq, kind, data in rows:
            parts.append(data)
            index.append((seq, kind, start, len(data)))
            start += len(data)
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self._writer.put(
            Save(
                conversation,
                b"".join(parts),
                msgspec.json.encode(index),
                msgspec.json.encode(list(removed)),
                meta,
                title,
                session_id,
                drop_from,
                now(),
                on_gone,
                loop,
            )
        )
        return True

    def get(self, conversation: int) -> ConversationRecord | None:
        rows = self._select("WHERE id = ?", (conversation,))
        return rows[0] if rows else None

    def conversations(
        self, *, agent: str | None = None, workspace: str | None = None, limit: int = 500
    ) -> list[ConversationRecord]:
        """Recorded conversations, the most recently updated first."""
        where, params = [], []
        if agent is not None:
            where.append("agent = ?")
            params.append(agent)
        if workspace is not None:
            where.append("workspace = ?")
            params.append(workspace)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        return self._select(f"{clause} ORDER BY updated_at DESC, id DESC LIMIT ?", (*params, limit))

    def find(
        self, session_id: str, *, agent: str | None = None, workspace: str | None = None
    ) -> ConversationRecord | None:
        """The latest conversation with this agent session id, else one that had it before
        (the agent could not reopen that session), else the one whose id (now or before)
        starts with it, if only one does; among those of `agent` in `workspace` when given."""
        candidates = self.conversations(agent=agent, workspace=workspace, limit=100_000)
        exact = [c for c in candidates if c.session_id == session_id]
        if exact:
            return exact[0]
        earlier = self.earlier_sessions()
        exact = [c for c in candidates if session_id in earlier.get(c.id, ())]
        if exact:
            return exact[0]
        prefixed: dict[str, ConversationRecord] = {}
        for c in candidates:
            if any(n.startswith(session_id) for n in (c.session_id, *earlier.get(c.id, ()))):
                prefixed.setdefault(c.session_id, c)
        return next(iter(prefixed.values())) if len(prefixed) == 1 else None

    def earlier_sessions(self) -> dict[int, list[str]]:
        """The session ids each conversation had before the one it has (the agent could not
        reopen it), by conversation."""
        if not self._usable():
            return {}
        try:
            rows = self._db.execute(
                "SELECT conversation, session_id FROM earlier_sessions ORDER BY rowid"
            ).fetchall()
        except sqlite3.Error as error:
            self._failed(error)
            return {}
        found: dict[int, list[str]] = {}
        for conversation, session_id in rows:
            found.setdefault(conversation, []).append(session_id)
        return found

    def items(self, conversation: int) -> list[tuple[int, str, bytes]]:
        if not self._usable():
            return []
        try:
            return self._db.execute(
                "SELECT seq, kind, data FROM items WHERE conversation = ? ORDER BY seq",
                (conversation,),
            ).fetchall()
        except sqlite3.Error as error:
            self._failed(error)
            return []

    def delete(self, conversation: int) -> None:
        if not self._usable():
            return
        try:
            self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation,))
        except sqlite3.Error as error:
            self._failed(error)

    def _select(self, clause: str, params: tuple[object, ...]) -> list[ConversationRecord]:
        if not self._usable():
            return []
        try:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM conversations {clause}", params
            ).fetchall()
        except sqlite3.Error as error:
            self._failed(error)
            return []
        return [
            ConversationRecord(
                row[0], row[1], json.loads(row[2]), row[3], row[4], *row[5:9], row[9]
            )
            for row in rows
        ]

    # -- sign-in choices ----------------------------------------------------------------------

    def remembered_auth(self, agent: str) -> str | None:
        """The sign-in method that last worked for this agent."""
        if not self._usable():
            return None
        try:
            row = self._db.execute(
                "SELECT method_id FROM auth_choices WHERE agent = ?", (agent,)
            ).fetchone()
        except sqlite3.Error as error:
            self._failed(error)
            return None
        return row[0] if row else None

    def forget_auth(self, agent: str) -> None:
        """After a sign-out: the next start asks again rather than signing straight back in."""
        if not self._usable():
            return
        try:
            self._db.execute("DELETE FROM auth_choices WHERE agent = ?", (agent,))
        except sqlite3.Error as error:
            self._failed(error)

    def remember_auth(self, agent: str, method_id: str) -> None:
        if not self._usable():
            return
        try:
            self._db.execute(
                "INSERT INTO auth_choices (agent, method_id, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT (agent) DO UPDATE"
                " SET method_id = excluded.method_id, updated_at = excluded.updated_at",
                (agent, method_id, now()),
            )
        except sqlite3.Error as error:
            self._failed(error)
