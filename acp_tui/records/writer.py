"""The record's writer: saves written on a thread of its own, in the order they were asked.

Each save is one transaction: the items upserted (or dropped), the conversation's row brought
up to date, and a session id it had before kept (the agent could not reopen the session: it
went on in a new one), so that the old id still names the conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path

import msgspec

CHECKPOINT_EVERY = 4 << 20
"""Bytes of saves after which the writer checkpoints even if more saves are waiting."""


class ConversationGone(LookupError):
    """The conversation's row is gone: another acp-tui process deleted it while this one
    recorded it."""


class Save(msgspec.Struct):
    """One save, ready for the writer: the rows' data one after another in `blob`, and for each
    row `[seq, kind, start, length]` (`start` from 1, as SQL's `substr` counts) in `index`."""

    conversation: int
    blob: bytes
    index: bytes
    removed: bytes
    meta: bytes | None
    title: str | None
    session_id: str | None
    drop_from: int | None
    stamp: str
    on_gone: Callable[[int], None] | None
    loop: asyncio.AbstractEventLoop | None


_UPSERT_ITEMS = (
    "INSERT INTO items (conversation, seq, kind, data)"
    " SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'),"
    " substr(?2, json_extract(value, '$[2]'), json_extract(value, '$[3]'))"
    " FROM json_each(?3) WHERE true"  # `WHERE` tells SQLite's parser the upsert from a join
    " ON CONFLICT (conversation, seq) DO UPDATE SET kind = excluded.kind, data = excluded.data"
)
_DELETE_ITEMS = (
    "DELETE FROM items WHERE conversation = ? AND seq IN (SELECT value FROM json_each(?))"
)
_KEEP_EARLIER_SESSION = (
    "INSERT OR IGNORE INTO earlier_sessions (conversation, session_id)"
    " SELECT id, session_id FROM conversations WHERE id = ?1 AND session_id != ?2"
)


class Writer:
    """Writes saves on a thread of its own, in the order they were asked, and checkpoints the
    write-ahead log whenever it runs out of them.

    Each save is one statement however many rows it has: `sqlite3` hands the GIL back for
    every step of a statement and waits for it again, so one `executemany` step per row would
    wait on the event loop's thread (a switch interval each) for as long as that is busy."""

    def __init__(self, path: Path, report: Callable[[], None]) -> None:
        self._db = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA wal_autocheckpoint=0")
        self._report = report
        self._jobs: deque[Save | None] = deque()
        self._unfinished = 0
        self._changed = threading.Condition()
        self._broken = False
        self.outcomes: deque[tuple[Save, Exception]] = deque()
        """Saves that failed (`ConversationGone` or an `sqlite3.Error`), for the loop's thread."""
        self._thread = threading.Thread(target=self._run, name="record writer", daemon=True)
        self._thread.start()

    def put(self, job: Save | None) -> None:
        with self._changed:
            self._jobs.append(job)
            self._unfinished += 1
            self._changed.notify_all()

    @property
    def busy(self) -> bool:
        """Whether saves asked for are still being written (a read of the moment: no lock)."""
        return self._unfinished > 0

    def wait(self, timeout: float | None = None) -> bool:
        """Until every save asked for is written (or failed), or `timeout` seconds have gone
        by (then False)."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._unfinished, timeout)

    def stop(self) -> None:
        """Write what is asked, finish the checkpoint under way, if any, and close."""
        self.put(None)
        self._thread.join()

    def _run(self) -> None:
        unchecked = 0  # bytes saved since the last checkpoint
        with contextlib.closing(self._db):
            while True:
                with self._changed:
                    while not self._jobs:
                        self._changed.wait()
                    job = self._jobs.popleft()
                if job is None:  # stopped: nothing is left to wait for
                    with self._changed:
                        self._unfinished -= 1
                        self._changed.notify_all()
                    return
                try:
                    error = None if self._broken else self._write(job)
                except Exception as unexpected:  # MemoryError, a blob over SQLite's 2 GB...
                    error = unexpected
                if error is not None:
                    self._broken = not isinstance(error, ConversationGone)
                    self.outcomes.append((job, error))
                with self._changed:
                    self._unfinished -= 1
                    idle = not self._jobs
                    self._changed.notify_all()
                if error is not None and job.loop is not None:
                    with contextlib.suppress(RuntimeError):  # the loop is closed: no one to tell
                        job.loop.call_soon_threadsafe(self._report)
                unchecked += len(job.blob)
                # Also between saves that come back to back (a flood, a long history), so that
                # the checkpoint left for the end, which a headless run waits for, stays small.
                if idle or unchecked >= CHECKPOINT_EVERY:
                    unchecked = 0
                    # PASSIVE: copies what it can without waiting for readers or the next save.
                    with contextlib.suppress(sqlite3.Error):
                        self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def _write(self, job: Save) -> Exception | None:
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if job.blob:
                    db.execute(_UPSERT_ITEMS, (job.conversation, job.blob, job.index))
                if job.drop_from is not None:
                    db.execute(
                        "DELETE FROM items WHERE conversation = ? AND seq >= ?",
                        (job.conversation, job.drop_from),
                    )
                if job.removed != b"[]":
                    db.execute(_DELETE_ITEMS, (job.conversation, job.removed))
                if job.session_id is not None:
                    db.execute(_KEEP_EARLIER_SESSION, (job.conversation, job.session_id))
                updated = db.execute(
                    "UPDATE conversations SET updated_at = ?, meta = coalesce(?, meta),"
                    " title = coalesce(?, title), session_id = coalesce(?, session_id)"
                    " WHERE id = ?",
                    (job.stamp, job.meta, job.title, job.session_id, job.conversation),
                )
                if updated.rowcount == 0:  # no items to fail on: the update finds no row
                    raise ConversationGone(job.conversation)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except ConversationGone as error:
            return error
        except sqlite3.IntegrityError as error:  # an item whose conversation is gone
            try:
                found = db.execute("SELECT 1 FROM conversations WHERE id = ?", (job.conversation,))
                return error if found.fetchone() else ConversationGone(job.conversation)
            except sqlite3.Error as other:
                return other
        except sqlite3.Error as error:
            return error
        return None
