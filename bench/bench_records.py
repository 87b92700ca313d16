"""How long writing a long history to the record holds the event loop.

The realistic 100k-update stream of `bench_protocol.py` is applied to a session (12,669 items:
messages, tool calls with diffs, a plan; 16 MB of JSON), as a `session/load` replays a long
history, and each round writes all of it to a fresh database while a ticker on the loop notes
every gap between its turns:

- in one go (the baseline): every item encoded and `executemany`'d on the loop's thread, in
                            one transaction;
- acp-tui:                  the real `Recorder` and `RecordStore`: items encoded a slice at a
                            time on the loop, written on the store's own thread;
- acp-tui, Ctrl+O meanwhile: the same, and the session picker's list (`list_sessions`) read
                            10 ms after it began, as a user opening Ctrl+O right away does.

The collector is paced as the TUI paces it (`acp_tui.ui.collector`: young collections as
usual, full ones only when the user is idle), so that a full collection, which a heap this
size makes last 35 ms and more, lands in neither. Each is timed to the moment the rows are in
the database. Prints the medians of the longest
gap (the frame the screen missed) and of the time to written, and acp-tui's as a multiple of
the baseline's. Target (issue 14): no gap over 20 ms (one 60 Hz frame and a bit).

Run: python bench/bench_records.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_protocol import SESSION, realistic_stream, spawn_writer

from acp_tui.conversation.opening import list_sessions
from acp_tui.records import Recorder, RecordStore
from acp_tui.records.codec import encode_item
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import Session
from acp_tui.transport.connection import Connection
from acp_tui.ui.collector import NEVER, YOUNG_COLLECTION_EVERY

TICK = 0.001
LISTED = "acp-tui, Ctrl+O meanwhile"


async def replayed_history(stream: Path) -> Session:
    async def no_permissions(pending: object) -> None:
        pending.cancel()  # type: ignore[attr-defined]

    process = await spawn_writer(stream)
    assert process.stdout is not None and process.stdin is not None
    client = AgentClient([], ClientOptions(cwd=stream.parent), decide_permission=no_permissions)
    session = client.sessions[SESSION] = Session(client, SESSION)
    await Connection(
        process.stdout, process.stdin, client, typed_notifications=client.typed_notifications
    ).run()
    await process.wait()
    session.state.turn = 1
    return session


Written = tuple[Callable[[], bool], Callable[[], None]]
"""Whether the rows are in the database yet; and what closes it all, once they are."""


def in_one_go(session: Session, path: Path) -> Written:
    """The baseline: all of it encoded and inserted at once, on the loop's thread."""
    store = RecordStore.open(path)
    assert store is not None
    conversation = store.create("bench", ["bench"], "/", SESSION)
    items = session.state.timeline
    rows = [(conversation, seq, *encode_item(item)) for seq, item in enumerate(items, 1)]
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    db.executemany("INSERT INTO items (conversation, seq, kind, data) VALUES (?, ?, ?, ?)", rows)
    db.execute("COMMIT")

    def close() -> None:
        db.close()
        store.close()

    return lambda: True, close


def with_recorder(session: Session, path: Path) -> Written:
    _store, written, close = recording(session, path)
    return written, close


def listed_meanwhile(session: Session, path: Path) -> Written:
    """acp-tui, and the session list read (Ctrl+O) as soon as the first slices are written."""
    store, written, close = recording(session, path)

    async def list_soon() -> None:
        await asyncio.sleep(0.01)
        entries = await list_sessions(None, store, "bench", session.client.options.cwd)
        if [entry.session_id for entry in entries] != [SESSION]:
            raise SystemExit(f"the session list is {entries}")

    listed = asyncio.ensure_future(list_soon())
    return lambda: written() and listed.done(), close


def recording(
    session: Session, path: Path
) -> tuple[RecordStore, Callable[[], bool], Callable[[], None]]:
    store = RecordStore.open(path)
    assert store is not None
    recorder = Recorder(store, session, agent="bench", command=["bench"], delay=0.0)

    def written() -> bool:
        writer = store._writer
        return not (recorder._dirty or writer is None or writer._unfinished)

    def close() -> None:
        session.listeners.remove(recorder)
        store.close()

    return store, written, close


async def longest_gap(
    session: Session, write: Callable[[Session, Path], Written]
) -> tuple[float, float]:
    """(longest gap between the ticker's turns, time until written), in seconds."""
    path = Path(tempfile.mkdtemp(prefix="acp-tui-records-")) / "history.sqlite3"
    gaps: list[float] = []
    ticking = True
    last = time.perf_counter()

    def tick() -> None:
        nonlocal last
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
        if ticking:
            loop.call_later(TICK, tick)

    loop = asyncio.get_running_loop()
    loop.call_later(TICK, tick)
    await asyncio.sleep(0.05)
    gaps.clear()
    started = time.perf_counter()
    written, close = write(session, path)
    while not written():
        await asyncio.sleep(0.002)
    elapsed = time.perf_counter() - started
    await asyncio.sleep(2 * TICK)  # a tick after the last of it, to measure its gap
    ticking = False
    close()
    with sqlite3.connect(path) as db:
        count = db.execute("SELECT count(*) FROM items").fetchone()[0]
    if count != len(session.state.timeline):
        raise SystemExit(f"{write.__name__} wrote {count} rows")
    return max(gaps), elapsed


async def run(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="acp-tui-records-") as tmp:
        stream = Path(tmp) / "stream.jsonl"
        stream.write_bytes(realistic_stream(100_000))
        session = await replayed_history(stream)
        gc.collect()
        gc.set_threshold(YOUNG_COLLECTION_EVERY, gc.get_threshold()[1], NEVER)
        results: dict[str, list[tuple[float, float]]] = {"in one go": [], "acp-tui": []}
        results[LISTED] = []
        for _ in range(runs):
            results["in one go"].append(await longest_gap(session, in_one_go))
            results["acp-tui"].append(await longest_gap(session, with_recorder))
            results[LISTED].append(await longest_gap(session, listed_meanwhile))
    print(f"{len(session.state.timeline):,} items; {runs} runs each, interleaved; medians")
    medians = {
        name: (statistics.median(g for g, _ in r), statistics.median(t for _, t in r))
        for name, r in results.items()
    }
    base_gap, base_time = medians["in one go"]
    for name, (gap, written) in medians.items():
        print(
            f"{name:>23}: longest gap {gap * 1000:6.1f} ms ({gap / base_gap:.2f}x), "
            f"written in {written * 1000:6.1f} ms ({written / base_time:.2f}x)"
        )
    print("target: no gap over 20 ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(run(parser.parse_args().runs))


if __name__ == "__main__":
    main()
