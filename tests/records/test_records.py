"""The local record of conversations: written as they stream, read back, exported; and it
survives acp-tui being killed mid-turn."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest

from acp_tui.conversation.opening import list_sessions
from acp_tui.protocol.content import ToolCallContent, ToolCallLocation, text_block
from acp_tui.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    CompactionUpdate,
    Plan,
    PlanContent,
    PlanEntry,
    PlanRemoved,
    PlanUpdate,
    SessionInfoUpdate,
    ToolCall,
    ToolCallUpdate,
)
from acp_tui.records import Recorder, RecordStore
from acp_tui.records import recorder as recorder_module
from acp_tui.records.codec import encode_item, recorded_state, restore_state
from acp_tui.records.export import export_path, record_markdown, session_markdown
from acp_tui.records.store import PAGE_SIZE
from acp_tui.records.writer import CHECKPOINT_EVERY, Writer
from acp_tui.session import reducer
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import Session
from acp_tui.session.state import Notice, PermissionAnswer

ACP_TUI = [sys.executable, "-m", "acp_tui"]


def open_store(tmp_path: Path) -> RecordStore:
    store = RecordStore.open(tmp_path / "history.sqlite3")
    assert store is not None
    return store


def slow_saves(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Each save takes `seconds` longer on the writer's thread."""
    write = Writer._write

    def slow(writer: Writer, job: Any) -> Exception | None:
        time.sleep(seconds)
        return write(writer, job)

    monkeypatch.setattr(Writer, "_write", slow)


def fake_session(tmp_path: Path, session_id: str = "s1") -> Session:
    client: Any = SimpleNamespace(info=AgentInfo(), options=ClientOptions(cwd=tmp_path))
    return Session(client, session_id)


def chunk(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(content=text_block(text))


def play_a_turn(session: Session) -> None:
    """A turn with one of everything, as the agent would report it."""
    session.emit_all(reducer.begin_turn(session.state, [text_block("please fix the bug")]))
    session.apply(AgentThoughtChunk(content=text_block("Looking at it.")))
    session.apply(Plan(entries=[PlanEntry("Read the code"), PlanEntry("Fix it", "high")]))
    session.apply(
        ToolCall(
            tool_call_id="t1",
            title="Edit main.py",
            kind="edit",
            status="in_progress",
            locations=[ToolCallLocation("/w/main.py", line=3)],
            content=[
                ToolCallContent("diff", path="/w/main.py", old_text="a = 1\n", new_text="a = 2\n"),
                ToolCallContent("terminal", terminal_id="term1"),
            ],
        )
    )
    session.terminal_output("term1", b"\x1b[32mok\x1b[0m\n")
    session.terminal_exited("term1", 0, None)
    session.apply(ToolCallUpdate(tool_call_id="t1", status="completed"))
    for word in ("Fixed ", "it: ", "```py\na = 2\n```"):
        session.apply(chunk(word))
    session.notice("warning", "Something to know", "the details")


def recorded_turn(store: RecordStore, tmp_path: Path) -> tuple[Session, Recorder]:
    """A session recorded in `store` with `play_a_turn` played, and ended."""
    session = fake_session(tmp_path)
    recorder = Recorder(store, session, agent="demo", command=["demo"])
    play_a_turn(session)
    session.emit(reducer.end_turn(session.state, "end_turn"))
    return session, recorder


async def test_the_recorder_coalesces_writes_and_flushes_at_turn_end(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    saves: list[int] = []
    save = store.save

    def counting_save(conversation: int, rows: Any, **kwargs: Any) -> bool:
        rows = list(rows)
        saves.append(len(rows))
        return save(conversation, rows, **kwargs)

    store.save = counting_save  # type: ignore[method-assign]
    session = fake_session(tmp_path)
    recorder = Recorder(store, session, agent="demo", command=["demo"], delay=0.05)
    assert recorder.conversation is None  # nothing worth keeping yet
    session.emit_all(reducer.begin_turn(session.state, [text_block("count to 2000")]))
    for number in range(2000):
        session.apply(chunk(f"{number} "))
    assert saves == []  # the hot path only notes what changed

    async def flushed() -> None:  # the flush `delay` later
        while not saves:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(flushed(), 10)
    assert saves == [2]  # one transaction: the prompt and the message
    session.apply(chunk("done"))
    session.emit(reducer.end_turn(session.state, "end_turn"))
    assert saves == [2, 1]  # the turn's end is written at once
    [record] = store.conversations()
    assert (record.agent, record.session_id, record.title) == ("demo", "s1", "count to 2000")
    assert record.workspace == str(tmp_path)
    state = recorded_state(store, record)
    assert state.timeline[1].text == "".join(f"{n} " for n in range(2000)) + "done"
    # 2001 chunks, stored in blocks as the state joined them.
    assert len(state.timeline[1].content) == len(session.state.timeline[1].content) < 2001 / 100


async def test_a_long_history_is_written_a_slice_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands of changed items (a replayed history) are encoded a slice at a time, the loop
    running between slices; what a change adds meanwhile is written with the rest; closing
    writes all that is left at once."""
    monkeypatch.setattr(recorder_module, "SLICE", 0.0)  # one item a slice
    store = open_store(tmp_path)
    session = fake_session(tmp_path)
    play_a_turn(session)
    session.emit(reducer.end_turn(session.state, "end_turn"))
    recorder = Recorder(store, session, agent="demo", command=["demo"], delay=0.0)
    items = len(session.state.timeline) + len(session.state.terminals)
    ticks = 0
    while recorder._dirty:
        await asyncio.sleep(0)
        ticks += 1
        if ticks == 2:
            session.notice("info", "Added meanwhile")
    assert ticks >= items
    record = store.get(recorder.conversation or 0)
    assert record is not None
    state = recorded_state(store, record)
    assert [encode_item(i) for i in state.timeline] == [
        encode_item(i) for i in session.state.timeline
    ]
    session.emit_all(reducer.begin_turn(session.state, [text_block("and the tests")]))
    for word in ("one ", "two ", "three"):
        session.apply(chunk(word))
    recorder.close()  # at once, whatever the slice
    assert not recorder._dirty
    state = recorded_state(store, store.get(record.id))
    assert state.timeline[-1].text == "one two three"
    store.close()


async def test_a_history_written_afresh_replaces_the_old_rows_with_its_last_slice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replayed history is written over the record of it (rows numbered from 1) a slice at
    a time: until the last slice the record keeps the old rows past the new ones, never fewer
    rows than it had; then it holds the new history and nothing else."""
    monkeypatch.setattr(recorder_module, "SLICE", 0.0)  # one item a slice
    store = open_store(tmp_path)
    old = store.create("demo", ["demo"], str(tmp_path), "s1")
    assert old is not None
    store.save(old, [(seq, "notice", b'{"title":"old"}') for seq in range(1, 6)])
    [record] = store.conversations()
    session = fake_session(tmp_path)
    session.emit_all(reducer.begin_turn(session.state, [text_block("replayed")]))
    session.apply(chunk("answer"))
    session.notice("info", "new")
    recorder = Recorder(
        store, session, agent="demo", command=["demo"], record=record, rewrite=True, delay=0.0
    )
    counts = []  # rows in the record after each slice
    while recorder._dirty:
        left = len(recorder._dirty)
        await asyncio.sleep(0)
        if len(recorder._dirty) < left:
            counts.append(len(store.items(old)))
    assert counts == [5, 5, 3]
    rows = store.items(old)
    assert [kind for _seq, kind, _data in rows] == ["message", "message", "notice"]
    store.close()


async def test_a_record_restores_to_the_same_state_and_goes_on_from_there(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    session = fake_session(tmp_path)
    recorder = Recorder(store, session, agent="demo", command=["demo"])
    play_a_turn(session)
    session.apply(PlanUpdate(plan=PlanContent(type="markdown", plan_id="p2", content="# Later")))
    session.apply(PlanRemoved(plan_id="p2"))
    session.apply(SessionInfoUpdate(title="Fix the bug"))
    session.emit(reducer.end_turn(session.state, "end_turn"))
    recorder.close()
    [record] = store.conversations()
    assert record.title == "Fix the bug"
    rows = store.items(record.id)
    state, known = restore_state("s1", rows, record.meta)
    original = session.state
    assert [encode_item(i) for i in state.timeline] == [encode_item(i) for i in original.timeline]
    assert bytes(state.terminals["term1"].output) == b"\x1b[32mok\x1b[0m\n"
    assert (state.turn, state.title, state.local_ids) == (1, "Fix the bug", original.local_ids)
    assert set(state.messages) == set(original.messages)
    assert set(state.tool_calls) == {"t1"} and set(state.plans) == {""}
    # A session opened on that state is recorded on: changed items rewrite their rows.
    reopened = fake_session(tmp_path)
    reopened.state = state
    Recorder(store, reopened, agent="demo", command=["demo"], record=record, known=known)
    reopened.emit_all(reducer.begin_turn(reopened.state, [text_block("and the tests")]))
    reopened.apply(ToolCallUpdate(tool_call_id="t1", title="Edit main.py again"))
    reopened.emit(reducer.end_turn(reopened.state, "end_turn"))
    assert len(store.items(record.id)) == len(rows) + 1
    again, _ = restore_state("s1", store.items(record.id), store.get(record.id).meta)
    assert again.tool_calls["t1"].title == "Edit main.py again"
    assert again.timeline[-1].text == "and the tests" and again.turn == 2


async def test_a_call_its_turn_closed_as_cancelled_is_not_rewritten_and_reads_cancelled(
    tmp_path: Path,
) -> None:
    """The turn's end closes what the agent left open: hundreds of calls with their diffs
    after a long turn. Closing one as cancelled changes one word, and a record reads an open
    call as cancelled anyway; a rejection is written."""
    store = open_store(tmp_path)
    session = fake_session(tmp_path)
    recorder = Recorder(store, session, agent="demo", command=["demo"])
    session.emit_all(reducer.begin_turn(session.state, [text_block("run it")]))
    session.apply(ToolCall(tool_call_id="run", title="Run it", status="in_progress"))
    session.apply(ToolCall(tool_call_id="asked", title="Edit it", status="pending"))
    recorder.flush(whole=True)  # both written while open
    reducer.permission_answered(
        session.state, PermissionAnswer("asked", "no", "user", rejected=True)
    )
    for change in reducer.close_tool_calls(session.state):
        session.emit(change)
    session.emit(reducer.end_turn(session.state, "end_turn"))
    recorder.close()
    assert {c.id: c.status for c in session.state.tool_calls.values()} == {
        "run": "cancelled",
        "asked": "rejected",
    }
    [record] = store.conversations()
    rows = [json.loads(data) for _seq, kind, data in store.items(record.id) if kind == "tool_call"]
    assert {row["id"]: row["status"] for row in rows} == {"run": "in_progress", "asked": "rejected"}
    restored = recorded_state(store, record)
    assert {c.id: c.status for c in restored.tool_calls.values()} == {
        "run": "cancelled",
        "asked": "rejected",
    }


async def test_a_conversation_deleted_by_another_process_is_recorded_afresh(
    tmp_path: Path,
) -> None:
    """Another acp-tui deletes the conversation (its session picker) while this one records
    it: the next write keeps all of it as a new conversation, and the store goes on (other
    conversations too), where it used to stop recording."""
    store, elsewhere = open_store(tmp_path), open_store(tmp_path)
    session, other = fake_session(tmp_path), fake_session(tmp_path, "s2")
    recorder = Recorder(store, session, agent="demo", command=["demo"])
    Recorder(store, other, agent="demo", command=["demo"])
    play_a_turn(session)
    session.emit(reducer.end_turn(session.state, "end_turn"))
    first = recorder.conversation
    assert first is not None
    store.settle()  # written
    elsewhere.delete(first)
    assert store.get(first) is None
    session.emit_all(reducer.begin_turn(session.state, [text_block("and the tests")]))
    session.apply(chunk("Done."))
    session.emit(reducer.end_turn(session.state, "end_turn"))
    # The save that finds it gone tells the loop: the conversation is written again with no
    # further call to this store.
    deadline = time.monotonic() + 10
    while not elsewhere.conversations() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    [written_again] = elsewhere.conversations()
    assert written_again.session_id == "s1"
    assert not store.failed
    again = store.get(recorder.conversation or 0)
    assert again is not None and again.session_id == "s1"
    state = recorded_state(store, again)
    assert [encode_item(i) for i in state.timeline] == [
        encode_item(i) for i in session.state.timeline
    ]
    assert bytes(state.terminals["term1"].output) == b"\x1b[32mok\x1b[0m\n"
    other.emit_all(reducer.begin_turn(other.state, [text_block("still recorded")]))
    other.emit(reducer.end_turn(other.state, "end_turn"))
    assert {r.session_id for r in store.conversations()} == {"s1", "s2"}
    elsewhere.close()
    store.close()


async def test_a_deleted_conversation_is_noticed_by_a_save_without_items(tmp_path: Path) -> None:
    """Only the title changes after the delete: the update finds no row, and all of the
    conversation is written again. A flush with nothing new writes nothing (the conversation
    keeps its place in the list)."""
    store, elsewhere = open_store(tmp_path), open_store(tmp_path)
    session, recorder = recorded_turn(store, tmp_path)
    assert recorder.conversation is not None
    [before] = store.conversations()
    await asyncio.sleep(0.01)  # a save now would stamp a later time
    recorder.flush()
    assert store.conversations()[0].updated_at == before.updated_at
    elsewhere.delete(recorder.conversation)
    session.apply(SessionInfoUpdate(title="Renamed"))
    recorder.close()
    [record] = store.conversations()
    assert record.title == "Renamed" and not store.failed
    assert len(store.items(record.id)) == len(session.state.timeline) + 1  # and the terminal
    elsewhere.close()
    store.close()


async def test_a_conversation_deleted_at_its_last_save_is_kept_whole_as_the_store_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The delete lands as the session closes: the store, closing, learns of it from the
    recorder's last save and writes the whole conversation again before it closes."""
    monkeypatch.setattr(recorder_module, "SLICE", 0.0)  # one item a slice, unless whole
    store, elsewhere = open_store(tmp_path), open_store(tmp_path)
    session, recorder = recorded_turn(store, tmp_path)
    recorder.close()
    store.settle()
    elsewhere.delete(recorder.conversation or 0)
    session.apply(SessionInfoUpdate(title="Renamed"))
    recorder.close()
    store.close()
    [record] = elsewhere.conversations()
    assert record.title == "Renamed"
    assert len(elsewhere.items(record.id)) == len(session.state.timeline) + 1  # and the terminal
    elsewhere.close()


FIRST_LAYOUT = """
PRAGMA page_size=4096;
PRAGMA journal_mode=WAL;
CREATE TABLE conversations (
    id INTEGER PRIMARY KEY, agent TEXT NOT NULL, command TEXT NOT NULL,
    workspace TEXT NOT NULL, session_id TEXT NOT NULL, title TEXT, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, protocol_version INTEGER NOT NULL DEFAULT 1, meta BLOB
);
CREATE TABLE items (
    conversation INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL, kind TEXT NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (conversation, seq)
) WITHOUT ROWID;
PRAGMA user_version=1;
"""


def items_table(path: Path) -> tuple[int, str]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        [page_size] = db.execute("PRAGMA page_size").fetchone()
        [sql] = db.execute("SELECT sql FROM sqlite_master WHERE name = 'items'").fetchone()
    return page_size, sql


@pytest.mark.parametrize("layout", ["new", "first"])
async def test_a_database_of_either_layout_records_and_restores(
    tmp_path: Path, layout: str
) -> None:
    """A new database has large pages and a rowid items table; one made by the first versions
    (4 KB pages, WITHOUT ROWID) is left as it is and works the same."""
    path = tmp_path / "history.sqlite3"
    if layout == "first":
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.executescript(FIRST_LAYOUT)
    store = RecordStore.open(path)
    assert store is not None
    session, recorder = recorded_turn(store, tmp_path)
    recorder.close()
    store.close()
    page_size, sql = items_table(path)
    if layout == "first":
        assert page_size == 4096 and "WITHOUT ROWID" in sql
    else:
        assert page_size == PAGE_SIZE and "WITHOUT ROWID" not in sql
    store = RecordStore.open(path)
    assert store is not None
    [record] = store.conversations()
    restored = recorded_state(store, record)
    assert [encode_item(i) for i in restored.timeline] == [
        encode_item(i) for i in session.state.timeline
    ]
    store.close()


def test_saves_are_written_and_checkpointed_on_a_thread_of_their_own(tmp_path: Path) -> None:
    """The loop's connection neither writes items nor copies the write-ahead log into the
    database: a second connection does both, on its own thread; and what the loop reads next
    finds what was saved before."""
    path = tmp_path / "history.sqlite3"
    store = open_store(tmp_path)
    on_the_loop: list[str] = []
    store._db.set_trace_callback(on_the_loop.append)
    conversation = store.create("a", ["a"], "/w", "s")
    assert conversation is not None
    assert store._writer is None  # started by the first save
    rows = [(seq, "notice", msgspec.json.encode({"title": f"kept {seq}"})) for seq in (1, 2, 3)]
    assert store.save(conversation, rows, title="Kept")
    assert store.save(conversation, [(2, "notice", b'{"title":"changed"}')], removed=[3])
    assert store.items(conversation) == [rows[0], (2, "notice", b'{"title":"changed"}')]
    assert store.get(conversation).title == "Kept"
    assert not [s for s in on_the_loop if "INSERT INTO items" in s or "checkpoint(" in s]
    assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    writer = store._writer
    assert writer is not None and writer._thread is not threading.current_thread()

    def rows_in_the_database_file() -> int:
        # immutable: reads the database file alone, not the write-ahead log (which also
        # holds the tables themselves until the first checkpoint)
        with contextlib.closing(sqlite3.connect(f"file:{path}?immutable=1", uri=True)) as db:
            try:
                return db.execute("SELECT count(*) FROM items").fetchone()[0]
            except sqlite3.DatabaseError:  # no table yet, or a page the thread is writing
                return 0

    deadline = time.monotonic() + 10
    while rows_in_the_database_file() != 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert rows_in_the_database_file() == 2
    store.close()
    assert not writer._thread.is_alive()
    assert not any(thread is writer._thread for thread in threading.enumerate())


async def test_the_session_list_waits_for_the_writer_without_freezing_the_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+O as a long history is being written: the list is read once the writer is done
    (it shows what was saved), and the event loop goes on meanwhile (the screen is live)."""
    store = open_store(tmp_path)
    conversation = store.create("a", ["a"], str(tmp_path), "s")
    assert conversation is not None
    slow_saves(monkeypatch, 0.3)  # a long history's rows
    saving: list[tuple[float, float]] = []  # when each slow save ran, on the writer's thread
    write = Writer._write

    def timed(writer: Writer, job: Any) -> Exception | None:
        started = time.monotonic()
        try:
            return write(writer, job)
        finally:
            saving.append((started, time.monotonic()))

    monkeypatch.setattr(Writer, "_write", timed)
    assert store.save(conversation, [(1, "notice", b"{}")], title="Saved just now")
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            await asyncio.sleep(0.005)
            ticks.append(time.monotonic())

    ticking = asyncio.create_task(ticker())
    entries = await list_sessions(None, store, "a", tmp_path)
    ticking.cancel()
    assert [entry.title for entry in entries] == ["Saved just now"]
    # The loop ticked while the writer was still saving (frozen, it could not have): on a
    # loaded machine ticks come late, but one lands within a 0.3 s save.
    assert any(start < tick < end for start, end in saving for tick in ticks), (saving, ticks)
    store.close()


async def test_waiting_for_the_writer_ends_when_the_store_closes_or_saves_keep_coming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`drained` waits off the loop for the writer: it ends when the store is closed meanwhile
    (Ctrl+Q as the session list loads), and when saves keep coming (after its patience)."""
    slow_saves(monkeypatch, 0.1)
    store = open_store(tmp_path)
    conversation = store.create("a", ["a"], str(tmp_path), "s")
    assert conversation is not None
    for _ in range(5):
        store.save(conversation, [(1, "notice", b"{}")])
    writer = store._writer
    assert writer is not None
    waiting = asyncio.create_task(store.drained())
    await asyncio.sleep(0.02)
    store.close()
    await asyncio.wait_for(waiting, 5)
    assert writer.wait(timeout=0)  # stopped: nothing left for a waiter that woke late

    store = open_store(tmp_path)
    conversation = store.create("a", ["a"], str(tmp_path), "s")
    assert conversation is not None

    async def keep_saving() -> None:
        while True:
            store.save(conversation, [(1, "notice", b"{}")])
            await asyncio.sleep(0.05)

    saving = asyncio.create_task(keep_saving())
    await asyncio.sleep(0.01)
    started = time.monotonic()
    await asyncio.wait_for(store.drained(patience=0.3), 5)
    assert time.monotonic() - started < 2
    saving.cancel()
    store.close()


async def test_a_new_conversation_waits_for_a_busy_writer_without_freezing_the_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new conversation's first write makes its row on the loop's connection, after the
    writer's queued saves: while another conversation's are being written (a long history
    just opened), the row waits for the next flush rather than freeze the screen."""
    slow_saves(monkeypatch, 0.3)
    store = open_store(tmp_path)
    other = store.create("a", ["a"], str(tmp_path), "other")
    assert other is not None
    assert store.save(other, [(1, "notice", b"{}")])
    session = fake_session(tmp_path, "new")
    recorder = Recorder(store, session, agent="demo", command=["demo"], delay=0.05)
    play_a_turn(session)
    recorder.flush()
    assert recorder.conversation is None  # had it waited for the writer, it would have one
    deadline = time.monotonic() + 5
    while recorder.conversation is None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    recorder.close()
    [record] = [r for r in store.conversations() if r.session_id == "new"]
    assert len(recorded_state(store, record).timeline) == len(session.state.timeline)
    store.close()


def test_saves_that_come_back_to_back_are_checkpointed_as_they_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer checkpoints when it runs out of saves, and also every `CHECKPOINT_EVERY`
    bytes of saves that keep coming: a flood's last checkpoint, which closing waits for,
    copies only what came after the one before."""
    statements: list[str] = []
    start = Writer.__init__

    def traced(writer: Writer, *args: Any) -> None:
        start(writer, *args)
        writer._db.set_trace_callback(statements.append)

    write = Writer._write

    def first_slow(writer: Writer, job: Any) -> Exception | None:
        if not statements or "INSERT INTO items" not in " ".join(statements):
            time.sleep(0.2)  # the saves after it queue up meanwhile
        return write(writer, job)

    monkeypatch.setattr(Writer, "__init__", traced)
    monkeypatch.setattr(Writer, "_write", first_slow)
    store = open_store(tmp_path)
    conversation = store.create("a", ["a"], str(tmp_path), "s")
    assert conversation is not None
    big = msgspec.json.encode({"title": "x" * (CHECKPOINT_EVERY // 2)})
    for seq in range(1, 7):
        assert store.save(conversation, [(seq, "notice", big)])
    store.close()
    order = [
        "save" if "INSERT INTO items" in s else "checkpoint"
        for s in statements
        if "INSERT INTO items" in s or "wal_checkpoint" in s
    ]
    assert order == ["save", "save", "checkpoint"] * 3, order


def test_a_writer_error_of_any_kind_is_a_failed_save_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warnings: list[str] = []
    store = RecordStore.open(tmp_path / "h.sqlite3", on_warning=warnings.append)
    assert store is not None
    conversation = store.create("a", ["a"], "/w", "s")
    assert conversation is not None

    def out_of_memory(*_args: Any) -> None:
        raise MemoryError("no room for the blob")

    monkeypatch.setattr(Writer, "_write", out_of_memory)
    assert store.save(conversation, [(1, "notice", b"{}")])
    assert store.conversations() == []  # settled, not stuck: the store went quiet
    assert store.failed and warnings == [
        f"stopped recording conversations in {tmp_path / 'h.sqlite3'}: no room for the blob"
    ]
    store.close()


def test_saves_asked_for_are_written_when_the_process_exits_without_closing(
    tmp_path: Path,
) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from acp_tui.records import RecordStore\n"
        "store = RecordStore.open(Path(sys.argv[1]))\n"
        "conversation = store.create('a', ['a'], '/w', 's')\n"
        "big = b'{\"title\":\"' + b'x' * 2_000_000 + b'\"}'\n"
        "for seq in range(1, 11):\n"
        "    store.save(conversation, [(seq, 'notice', big)])\n"
        "raise SystemExit(3)  # an error on the way out: no close\n"
    )
    path = tmp_path / "h.sqlite3"
    done = subprocess.run([sys.executable, "-c", script, str(path)], timeout=60, check=False)
    assert done.returncode == 3
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM items").fetchone() == (10,)


def test_close_writes_every_save_asked_for(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    conversation = store.create("a", ["a"], "/w", "s")
    assert conversation is not None
    big = b'{"title":"' + b"x" * 5_000_000 + b'"}'
    for seq in range(1, 21):
        assert store.save(conversation, [(seq, "notice", big)])
    store.close()
    again = open_store(tmp_path)
    assert [(seq, len(data)) for seq, _kind, data in again.items(conversation)] == [
        (seq, len(big)) for seq in range(1, 21)
    ]
    again.close()


async def test_a_compaction_restored_from_the_record_is_patched_in_place(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    session = fake_session(tmp_path)
    recorder = Recorder(store, session, agent="demo", command=["demo"])
    session.emit_all(reducer.begin_turn(session.state, [text_block("/compact")]))
    session.apply(CompactionUpdate(compaction_id="c1", status="in_progress"))
    session.emit(reducer.end_turn(session.state, "end_turn"))
    recorder.close()
    [record] = store.conversations()
    state, _ = restore_state("s1", store.items(record.id), record.meta)
    reducer.apply(state, CompactionUpdate(compaction_id="c1", status="completed"))
    notices = [item for item in state.timeline if isinstance(item, Notice)]
    assert [(n.title, n.key) for n in notices] == [("Context compacted", "c1")]


def test_markdown_export(tmp_path: Path) -> None:
    session = fake_session(tmp_path, "sess_1")
    play_a_turn(session)
    text = session_markdown(session.state, agent="demo", workspace="/w")
    assert text.startswith("# please fix the bug\n\n- Agent: demo\n- Workspace: `/w`\n")
    assert (
        "## You\n\nplease fix the bug\n\n## Agent\n\n> **Thinking**\n>\n> Looking at it.\n" in text
    )
    assert "**Plan**\n\n- [ ] Read the code\n- [ ] Fix it\n" in text
    assert "**Tool call: Edit main.py** (edit, completed)\n\n- `/w/main.py:3`\n" in text
    assert "```diff\n--- a//w/main.py\n+++ b//w/main.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n```" in text
    assert "```console\nok\n(exit status 0)\n```" in text  # escapes dropped
    assert "Fixed it: ````py" not in text and "Fixed it: ```py\na = 2\n```" in text
    assert "> **warning: Something to know**\n>\n> the details\n" in text
    assert export_path(tmp_path, "Fix: the bug!", "sess/1").name == "fix-the-bug-sess-1.md"


async def test_a_recorded_conversation_exports_from_the_command_line(tmp_path: Path) -> None:
    store = RecordStore.open(tmp_path / "data" / "acp-tui" / "history.sqlite3")
    assert store is not None
    session = fake_session(tmp_path, "sess_abc123")
    recorder = Recorder(store, session, agent="demo", command=["demo"])
    play_a_turn(session)
    recorder.close()
    [record] = store.conversations()
    expected = record_markdown(store, record)
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    out = tmp_path / "out.md"
    result = subprocess.run(
        [*ACP_TUI, "export", "sess_abc", "-o", str(out)], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert out.read_text() == expected
    stdout = subprocess.run([*ACP_TUI, "export", "sess_abc123"], env=env, capture_output=True)
    assert stdout.stdout.decode() == expected
    missing = subprocess.run([*ACP_TUI, "export", "nope"], env=env, capture_output=True, text=True)
    assert missing.returncode == 1 and "no recorded session 'nope'" in missing.stderr


def test_an_unusable_data_dir_is_a_warning_and_the_session_goes_on(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data directory should be")
    warnings: list[str] = []
    assert RecordStore.open(blocker / "acp-tui" / "h.sqlite3", on_warning=warnings.append) is None
    assert len(warnings) == 1 and "cannot keep a record of conversations" in warnings[0]
    env = {**os.environ, "XDG_DATA_HOME": str(blocker), "ACP_TUI_DEMO_SPEED": "0"}
    result = subprocess.run(
        [*ACP_TUI, "--cwd", str(tmp_path), "-p", "still here?", "--", *demo(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "still here?" in result.stdout
    assert "acp-tui: cannot keep a record of conversations in" in result.stderr


def test_a_store_that_fails_mid_session_goes_quiet(tmp_path: Path) -> None:
    warnings: list[str] = []
    store = RecordStore.open(tmp_path / "h.sqlite3", on_warning=warnings.append)
    assert store is not None
    conversation = store.create("a", ["a"], "/w", "s")
    assert conversation is not None
    store.save(conversation, [(1, "notice", b"{}")])
    store.settle()
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:  # as if the disk went away
        db.execute(
            "CREATE TRIGGER broken BEFORE UPDATE ON conversations"
            " BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END"
        )
    store.save(conversation, [(2, "notice", b"{}")])
    store.save(conversation, [(3, "notice", b"{}")])
    assert store.items(conversation) == []  # quiet from the failure on
    assert not store.save(conversation, [(4, "notice", b"{}")])
    with contextlib.closing(sqlite3.connect(tmp_path / "h.sqlite3")) as db:
        assert db.execute("SELECT seq FROM items").fetchall() == [(1,)]
    assert store.failed and len(warnings) == 1 and "stopped recording" in warnings[0]
    assert "disk I/O error" in warnings[0]
    store.close()


def demo(tmp_path: Path) -> list[str]:
    return [sys.executable, "-m", "acp_tui.demo", "--data-dir", str(tmp_path / "demo")]


def test_the_record_survives_kill_9_mid_turn(tmp_path: Path) -> None:
    """acp-tui streams a long answer, is killed with SIGKILL, and the record holds all that
    was shown up to a fraction of a second before; `--resume` then continues from it."""
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "ACP_TUI_DEMO_SPEED": "1",
    }
    workspace = tmp_path / "w"
    workspace.mkdir()
    process = subprocess.Popen(
        [*ACP_TUI, "--cwd", str(workspace), "-p", "long 100000", "--", *demo(tmp_path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    os.set_blocking(process.stdout.fileno(), False)
    shown = b""
    deadline = time.monotonic() + 30
    while len(shown) < 3000 and time.monotonic() < deadline:
        shown += process.stdout.read() or b""
        time.sleep(0.01)
    assert len(shown) >= 3000, process.stderr.read() if process.stderr else b""
    time.sleep(0.5)  # well past the recorder's flush delay
    shown_later = shown + (process.stdout.read() or b"")
    process.send_signal(signal.SIGKILL)
    process.wait()
    shown_before_kill = shown.decode()
    rate = (len(shown_later) - len(shown)) / 0.5  # bytes a second
    database = tmp_path / "data" / "acp-tui" / "history.sqlite3"
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    store = RecordStore.open(database)
    assert store is not None
    [record] = store.conversations()
    state = recorded_state(store, record)
    user, *answer = state.timeline
    assert user.text == "long 100000"
    recorded = "".join(message.text for message in answer)
    # The printer separates messages with blank lines: compare without whitespace.
    assert "".join(recorded.split()).startswith("".join(shown_before_kill.split()))
    # At most half a second of the answer is lost (the recorder writes every 0.2 s).
    assert len(recorded) >= len(shown_later) - rate * 0.5
    store.close()

    env["ACP_TUI_DEMO_SPEED"] = "0"
    resumed = subprocess.run(
        [*ACP_TUI, "--cwd", str(workspace), "--resume", "-p", "hello again", "--", *demo(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "hello again" in resumed.stdout
    store = RecordStore.open(database)
    assert store is not None
    [record] = store.conversations()
    texts = [item.text for item in recorded_state(store, record).timeline if hasattr(item, "text")]
    assert texts[0] == "long 100000" and "hello again" in texts


def test_records_decode_leniently(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    conversation = store.create("a", ["a"], "/w", "s")
    assert conversation is not None
    good = encode_item(reducer.add_notice(reducer.s.SessionState(), "info", "kept").item)
    store.save(conversation, [(1, "notice", b"{broken"), (2, "future_kind", b"{}"), (3, *good)])
    state = recorded_state(store, store.get(conversation))
    assert [item.title for item in state.timeline] == ["kept"]
    assert msgspec.json.decode(good[1])["title"] == "kept"
