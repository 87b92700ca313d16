"""acp-tui's local record of conversations: one SQLite database in the data directory.

`$XDG_DATA_HOME/acp-tui/history.sqlite3` (default `~/.local/share/acp-tui/`) holds a row per
conversation (the agent, its command, the workspace, the agent's session id, title, times)
and a row per transcript item, rewritten as the item changes. WAL mode: each save is one
small transaction that survives acp-tui being killed, and several acp-tui processes can
share the file. It also remembers which sign-in method worked for each agent.

A save appends to the write-ahead log; copying the log into the database (a checkpoint, with
its fsync) is left to a thread of its own, where it runs without holding the GIL. So a turn
that writes megabytes costs the event loop only its inserts.

Nothing here may stop a session: a database that cannot be opened or written is reported
once (through `on_warning`) and the store goes quiet.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from acp_tui.paths import data_dir

DATABASE = "history.sqlite3"
SCHEMA_VERSION = 1
PAGE_SIZE = 16384
"""For a new database: items are kilobytes of JSON each (a tool call with its diff), and
pages of 4 KB left most of them on overflow pages, at twice the cost of a save."""

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


class ConversationGone(LookupError):
    """The conversation's row is gone: another acp-tui process deleted it while this one
    recorded it."""


@dataclass(slots=True)
class ConversationRecord:
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


class _Checkpointer:
    """Checkpoints the database's write-ahead log on a thread of its own, when asked."""

    def __init__(self, path: Path) -> None:
        # A connection of its own, used only by the thread once it starts.
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._asked = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="record checkpoints", daemon=True)
        self._thread.start()

    def ask(self) -> None:
        self._asked.set()

    def _run(self) -> None:
        with contextlib.closing(self._db):
            while True:
                self._asked.wait()
                self._asked.clear()
                if self._stopping:
                    return
                # PASSIVE: copies what it can without waiting for readers or the next save.
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def stop(self) -> None:
        """Finish the checkpoint under way, if any, and close."""
        self._stopping = True
        self._asked.set()
        self._thread.join()


class RecordStore:
    """The database, on one connection used from the event loop's thread (and a second one
    that only checkpoints, on its own thread)."""

    def __init__(
        self, connection: sqlite3.Connection, path: Path, on_warning: Callable[[str], None]
    ) -> None:
        self.path = path
        self._db = connection
        self._warn = on_warning
        self._checkpointer: _Checkpointer | None = None
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
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        if not self.failed:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self.failed = True

    def _checkpoint(self) -> None:
        """After a save: checkpoint on the checkpointer's thread (started by the first save,
        as most uses of the store never save). If it cannot connect, SQLite goes on
        checkpointing on this thread, as it does by default."""
        if self._checkpointer is None:
            try:
                self._checkpointer = _Checkpointer(self.path)
            except sqlite3.Error:
                return
            self._db.execute("PRAGMA wal_autocheckpoint=0")
        self._checkpointer.ask()

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
        if self.failed:
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
        clear: bool = False,
    ) -> bool:
        """Write changed items (`(seq, kind, data)` rows, upserted), drop `removed` ones, and
        update the conversation, in one transaction. `clear` first drops every item. Raises
        ConversationGone, writing nothing, when the conversation was deleted meanwhile."""
        if self.failed:
            return False
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if clear:
                    db.execute("DELETE FROM items WHERE conversation = ?", (conversation,))
                db.executemany(
                    "INSERT INTO items (conversation, seq, kind, data) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (conversation, seq) DO UPDATE"
                    " SET kind = excluded.kind, data = excluded.data",
                    [(conversation, seq, kind, data) for seq, kind, data in rows],
                )
                db.executemany(
                    "DELETE FROM items WHERE conversation = ? AND seq = ?",
                    [(conversation, seq) for seq in removed],
                )
                updated = db.execute(
                    "UPDATE conversations SET updated_at = ?, meta = coalesce(?, meta),"
                    " title = coalesce(?, title), session_id = coalesce(?, session_id)"
                    " WHERE id = ?",
                    (now(), meta, title, session_id, conversation),
                )
                if updated.rowcount == 0:  # no items to fail on: the update finds no row
                    raise ConversationGone(conversation)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self._checkpoint()
        except sqlite3.IntegrityError as error:
            if self.get(conversation) is None:
                raise ConversationGone(conversation) from error
            self._failed(error)
            return False
        except sqlite3.Error as error:
            self._failed(error)
            return False
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
        """The latest conversation with this agent session id (or, failing that, the one
        whose id starts with it, if only one does), among those of `agent` in `workspace`
        when given."""
        candidates = self.conversations(agent=agent, workspace=workspace, limit=100_000)
        exact = [c for c in candidates if c.session_id == session_id]
        if exact:
            return exact[0]
        prefixed = {c.session_id: c for c in candidates if c.session_id.startswith(session_id)}
        if len(prefixed) == 1:
            return next(iter(prefixed.values()))
        return None

    def items(self, conversation: int) -> list[tuple[int, str, bytes]]:
        if self.failed:
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
        if self.failed:
            return
        try:
            self._db.execute("DELETE FROM conversations WHERE id = ?", (conversation,))
        except sqlite3.Error as error:
            self._failed(error)

    def _select(self, clause: str, params: tuple[object, ...]) -> list[ConversationRecord]:
        if self.failed:
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
        if self.failed:
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
        if self.failed:
            return
        try:
            self._db.execute("DELETE FROM auth_choices WHERE agent = ?", (agent,))
        except sqlite3.Error as error:
            self._failed(error)

    def remember_auth(self, agent: str, method_id: str) -> None:
        if self.failed:
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
