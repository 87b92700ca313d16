"""How fast the TUI takes a streamed Markdown answer, and whether the screen stays responsive.

One answer of 20,000 chunks (the demo agent's Markdown showcase, three words a chunk, about
370 KB: headings, lists, tables, fenced code) is appended chunk by chunk to a message widget
in a headless app (`App.run_test`), yielding to the event loop after every chunk the way a
socket reader does. Meanwhile a 16 ms timer records how late it fires: the worst delay is the
longest the screen could not react. A run ends when every chunk is on screen.

Paths, each run several times in this one process, interleaved, medians reported:

- empty loop:   the producer and the timer, no widget (the floor);
- log (plain):  Textual's `Log` written once per frame: plain text through the Line API, the
                cheapest way Textual shows streaming text (no Markdown at all);
- acp-tui:      `MarkdownView`, the transcript's message body (finished blocks rendered once,
                only the growing tail again, appends coalesced per frame).
- textual (opt): `Markdown.append` once per frame, on fewer chunks (it is far slower).

Also, with `--startup`: time from process start to the first frame on the demo agent; and with
`--memory`: RSS after a session of 2,000 messages of 2 KB Markdown is shown and scrolled.

Targets: acp-tui >= 2,000 chunks/s with no delay over 50 ms; first frame < 700 ms; < 200 MB.

Run: python bench/bench_tui_stream.py [--chunks 20000] [--runs 3] [--textual] [--startup]
     [--memory]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Log, Markdown

from acp_tui.demo.texts import MARKDOWN_SHOWCASE
from acp_tui.demo.turn import pieces
from acp_tui.ui.render.markdown import warm_up
from acp_tui.ui.widgets.markdown_view import MarkdownView

FRAME = 1 / 60
TICK = 0.016


def answer_chunks(count: int) -> list[str]:
    chunks: list[str] = []
    while len(chunks) < count:
        chunks.extend(pieces(MARKDOWN_SHOWCASE + "\n\n", 3))
    return chunks[:count]


class Sink:
    """How a path takes chunks: `append` each, then `settled` once all are on screen."""

    def __init__(self, widget: Widget | None) -> None:
        self.widget = widget

    def append(self, chunk: str) -> None: ...

    @property
    def settled(self) -> bool:
        return True


class ViewSink(Sink):
    def __init__(self) -> None:
        super().__init__(MarkdownView())

    def append(self, chunk: str) -> None:
        self.widget.append(chunk)  # type: ignore[union-attr]

    @property
    def settled(self) -> bool:
        return self.widget.settled  # type: ignore[union-attr]


class LogSink(Sink):
    """Textual's `Log` (Line API, plain text, no Markdown), written once per frame: the
    cheapest way Textual shows streaming text."""

    def __init__(self) -> None:
        super().__init__(Log(auto_scroll=True))
        self.pending: list[str] = []
        self.scheduled = False

    def append(self, chunk: str) -> None:
        self.pending.append(chunk)
        if not self.scheduled and self.widget is not None:
            self.scheduled = True
            self.widget.set_timer(FRAME, self.flush)

    def flush(self) -> None:
        self.scheduled = False
        text, self.pending = "".join(self.pending), []
        self.widget.write(text)  # type: ignore[union-attr]

    @property
    def settled(self) -> bool:
        return not self.pending and not self.scheduled


class TextualSink(Sink):
    """Textual's own `Markdown.append`, coalesced to one call per frame."""

    def __init__(self) -> None:
        super().__init__(Markdown())
        self.pending: list[str] = []
        self.busy = False

    def append(self, chunk: str) -> None:
        self.pending.append(chunk)
        if not self.busy and self.widget is not None:
            self.busy = True
            self.widget.set_timer(FRAME, self._flush)

    async def _flush(self) -> None:
        text, self.pending = "".join(self.pending), []
        await self.widget.append(text)  # type: ignore[union-attr]
        self.busy = False
        if self.pending:
            self.busy = True
            self.widget.set_timer(FRAME, self._flush)  # type: ignore[union-attr]

    @property
    def settled(self) -> bool:
        return not self.pending and not self.busy


class BenchApp(App[None]):
    CSS = """
    VerticalScroll { scrollbar-gutter: stable; }
    VerticalScroll > * { height: auto; }
    VerticalScroll > Log { height: 1fr; }
    """

    def __init__(self, sink: Sink) -> None:
        super().__init__()
        self.sink = sink

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            if self.sink.widget is not None:
                yield self.sink.widget

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).anchor()


async def stream(make_sink: Callable[[], Sink], chunks: list[str]) -> tuple[float, float]:
    """(chunks per second until all are on screen, worst lateness of a 16 ms timer in s)."""
    app = BenchApp(make_sink())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        worst = 0.0
        running = True

        async def ticker() -> None:
            nonlocal worst
            while running:
                start = time.perf_counter()
                await asyncio.sleep(TICK)
                worst = max(worst, time.perf_counter() - start - TICK)

        tick = asyncio.create_task(ticker())
        started = time.perf_counter()
        for chunk in chunks:
            app.sink.append(chunk)
            await asyncio.sleep(0)
        while not app.sink.settled:
            await asyncio.sleep(0.001)
        await pilot.pause()
        elapsed = time.perf_counter() - started
        running = False
        await tick
    gc.collect()
    return len(chunks) / elapsed, worst


def collector_paced(run: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    """Run as the app does: startup objects frozen, young generations collected as usual, no
    full collection mid-stream (see `AcpApp._pace_collector`)."""

    async def paced() -> Any:
        gc.collect()
        gc.freeze()
        thresholds = gc.get_threshold()
        gc.set_threshold(thresholds[0], thresholds[1], 1_000_000_000)
        try:
            return await run()
        finally:
            gc.set_threshold(*thresholds)
            gc.unfreeze()
            gc.collect()

    return paced


def report(name: str, results: list[tuple[float, float]]) -> tuple[float, float]:
    rate = statistics.median(r for r, _ in results)
    worst = statistics.median(w for _, w in results)
    runs = ", ".join(f"{r:,.0f}/s {w * 1000:.0f} ms" for r, w in results)
    print(
        f"  {name:<13} {rate:>9,.0f} chunks/s   worst timer delay {worst * 1000:6.1f} ms   ({runs})"
    )
    return rate, worst


async def bench_stream(count: int, runs: int, textual: bool) -> None:
    warm_up()  # as the app does after its first frame
    chunks = answer_chunks(count)
    size = sum(len(c) for c in chunks)
    print(
        f"streaming {count:,} chunks ({size / 1024:.0f} KB of Markdown), {runs} runs each, medians:"
    )
    paths: dict[str, Callable[[], Sink]] = {
        "empty loop": lambda: Sink(None),
        "log (plain)": LogSink,
        "acp-tui": ViewSink,
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in paths}
    for _ in range(runs):
        for name, make in paths.items():
            results[name].append(await collector_paced(lambda make=make: stream(make, chunks))())
    for name, values in results.items():
        report(name, values)
    if textual:
        few = chunks[: max(1, count // 10)]
        print(f"  (textual Markdown.append per frame, on {len(few):,} chunks only)")
        report("textual", [await collector_paced(lambda: stream(TextualSink, few))()])


# -- start to first frame ---------------------------------------------------------------------


def bench_startup(runs: int) -> None:
    """Process start to first frame, in a fresh process each time: as this environment runs
    Python, and with bytecode cached (as after a normal install; one warm-up run first)."""
    import tempfile

    cache = tempfile.mkdtemp(prefix="acp-tui-pyc-")
    cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cached["PYTHONPYCACHEPREFIX"] = cache
    for label, env in (("as run here", dict(os.environ)), ("bytecode cached", cached)):
        if label == "bytecode cached":
            _first_frame(env)  # writes the cache
        times = [_first_frame(env) for _ in range(runs)]
        print(
            f"start to first frame ({label}): median {statistics.median(times) * 1000:.0f} ms"
            f"   ({', '.join(f'{t * 1000:.0f}' for t in times)} ms)"
        )


def _first_frame(env: dict[str, str]) -> float:
    started = time.time()
    out = subprocess.run(
        [sys.executable, __file__, "--child-startup", repr(started)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    ).stdout
    return float(out.strip().splitlines()[-1])


def child_startup(started: float) -> None:
    """In a fresh process: build the real app, report when its first frame is painted."""
    import tempfile

    from acp_tui.ui.pilot import demo_app, demo_workspace

    scratch = Path(tempfile.mkdtemp(prefix="acp-tui-bench-"))
    app = demo_app(demo_workspace(scratch / "workspace"), scratch / "state")
    original = app._after_first_frame

    def first_frame() -> None:
        print(time.time() - started, flush=True)
        original()
        app.exit()

    app._after_first_frame = first_frame  # type: ignore[method-assign]
    app.run(headless=True, size=(120, 40))


# -- memory -----------------------------------------------------------------------------------


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def bench_memory(messages: int) -> None:
    """A session of `messages` answers of about 2 KB Markdown each (plus the prompts), shown
    in the real app, scrolled to the top and back; RSS at the end."""
    import tempfile

    from acp_tui.protocol.content import text_block
    from acp_tui.protocol.updates import AgentMessageChunk
    from acp_tui.session import reducer
    from acp_tui.session.controller import AgentInfo, Session
    from acp_tui.ui.app import AcpApp
    from acp_tui.ui.conversation import Conversation
    from acp_tui.ui.pilot import demo_app, demo_workspace
    from acp_tui.ui.widgets.transcript import Transcript

    before = rss_mb()
    answer = MARKDOWN_SHOWCASE[:2048]

    class Offline:
        info = AgentInfo(name="bench", version="1", protocol_version=1)

    class OfflineApp(AcpApp):
        def start_agent(self, conversation: Conversation) -> None:
            session = Session(Offline(), "sess_bench")  # type: ignore[arg-type]
            conversation.session = session
            state = session.state
            for index in range(messages):
                reducer.begin_turn(state, [text_block(f"question {index}")])
                update = AgentMessageChunk(content=text_block(answer), message_id=f"m{index}")
                reducer.apply(state, update)
                reducer.end_turn(state, "end_turn")
            self.chat.attach(session)
            conversation.started.set()

    scratch = Path(tempfile.mkdtemp(prefix="acp-tui-bench-"))
    template = demo_app(demo_workspace(scratch / "workspace"), scratch / "state")
    app = OfflineApp(template.argv, template.options, history_dir=scratch, config_dir=scratch)
    async with app.run_test(size=(120, 40)) as pilot:
        await asyncio.wait_for(app.started.wait(), 30)
        await pilot.pause(0.5)
        gc.collect()
        shown = rss_mb()
        transcript = app.chat.query_one(Transcript)
        for _ in range(20):  # scroll to the top: earlier blocks come back from the state
            transcript.scroll_home(animate=False, immediate=True)
            await pilot.pause(0.05)
        transcript.action_follow()
        await pilot.pause(0.2)
        gc.collect()
        mounted = len(transcript.blocks)
        after = rss_mb()
    print(
        f"memory: {messages:,} messages of 2 KB Markdown: RSS {shown:.0f} MB shown,"
        f" {after:.0f} MB after scrolling to the top and back"
        f" (process before: {before:.0f} MB; {mounted} blocks mounted at the end)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--textual", action="store_true", help="also Textual's Markdown.append")
    parser.add_argument("--startup", action="store_true", help="also start to first frame")
    parser.add_argument("--memory", action="store_true", help="also RSS of a long session")
    parser.add_argument("--no-stream", action="store_true", help="skip the streaming bench")
    parser.add_argument("--child-startup", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_startup is not None:
        child_startup(args.child_startup)
        return
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    if not args.no_stream:
        asyncio.run(bench_stream(args.chunks, args.runs, args.textual))
    if args.startup:
        bench_startup(args.runs)
    if args.memory:
        asyncio.run(bench_memory(2000))


if __name__ == "__main__":
    main()
