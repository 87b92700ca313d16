"""How the transcript holds up with long histories: memory, scrolling, opening one.

Each figure is taken on the real app (`AcpApp`, headless through `run_test`, 120x40):

- memory: a session of 2,000 answers of 2 KB Markdown (and their prompts) is shown, scrolled
  to the top and back to the end; RSS then (target <= 100 MB): `bench_tui_stream`'s
  `bench_memory`, run in a process of its own.
- scroll: 20,000 timeline items of mixed kinds (prompts, thoughts, Markdown answers, edits with
  diffs, commands in terminals, plans: `acp_tui/demo/long_session.py`, replayed by the real
  demo agent over v2 so terminals are terminals) are scrolled from the top to the bottom a
  page at a time (PageDown's action), the next page as soon as the last one is drawn. Per
  page: the time from the key's action to the frame that shows the page; meanwhile a 16 ms
  timer records how late it fires (the longest the screen could not react), and RSS is
  sampled every 100 pages (target: every page within a frame or two, RSS flat within 20%).
- open: `acp-tui --resume` of a session whose `session/load` replay is 20,000 updates, on the
  real demo agent: the time from `session/load` sent to the first frame that shows the last
  item (and from the app's start). Baseline, run interleaved in this process: the same 20,000
  update lines (read once off the demo agent's pipe) decoded by a bare msgspec decoder
  (target: <= 1 s).

Medians are printed (runs interleaved; the machine is shared and noisy).

Run: python bench/bench_transcript.py [--runs 3] [--only memory|scroll|open]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The tests' driver of the real app (tests/support/pilot.py) drives it here too.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
SCRATCH = Path(tempfile.mkdtemp(prefix="acp-tui-bench-transcript-"))
# Before acp_tui is imported: records, config and demo sessions stay in the scratch directory.
for _name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
    os.environ[_name] = str(SCRATCH / _name.lower())
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import msgspec  # noqa: E402
from bench_tui_stream import bench_memory, rss_mb  # noqa: E402
from textual import events  # noqa: E402
from textual.app import App  # noqa: E402
from textual.containers import VerticalScroll  # noqa: E402
from textual.screen import Screen  # noqa: E402
from textual.widget import Widget  # noqa: E402
from textual.widgets import Static  # noqa: E402

from acp_tui.config import DEMO_COMMAND as DEMO_AGENT  # noqa: E402
from acp_tui.demo.long_session import write_long_session  # noqa: E402
from acp_tui.session import client as controller  # noqa: E402
from acp_tui.session.agent_info import AgentInfo  # noqa: E402
from acp_tui.session.client import AgentClient  # noqa: E402
from acp_tui.session.options import ClientOptions  # noqa: E402
from acp_tui.session.session import Session  # noqa: E402
from acp_tui.session.state import SessionState  # noqa: E402
from acp_tui.ui.app import AcpApp  # noqa: E402
from acp_tui.ui.conversation import ConversationView  # noqa: E402
from acp_tui.ui.widgets.heights import estimate  # noqa: E402
from acp_tui.ui.widgets.transcript import Transcript  # noqa: E402
from tests.support.pilot import demo_app, demo_workspace  # noqa: E402

SIZE = (120, 40)
TICK = 0.016
UPDATES = 20_000
WORKSPACE = demo_workspace(SCRATCH / "workspace")
DEMO_DATA = SCRATCH / "demo-sessions"


class OfflineApp(AcpApp):
    """The app showing a session built in this process (no agent): memory and scrolling."""

    def __init__(self, build: Callable[[], SessionState]) -> None:
        template = demo_app(WORKSPACE, SCRATCH / "state")
        super().__init__(
            template.argv,
            template.options,
            history_dir=SCRATCH / "history",
            config_dir=SCRATCH / "config",
        )
        self.build = build

    def start_agent(self, view: ConversationView) -> None:
        """No agent: the chat shows a session built here (no conversation runs)."""

        class Offline:
            info = AgentInfo(name="bench", version="1", protocol_version=2)

        session = Session(Offline(), "sess_bench")  # type: ignore[arg-type]
        session.state = self.build()
        assert self.chat is not None
        self.chat.attach(session)
        view.started.set()


class Frames:
    """Counts the frames a screen draws (its compositor refreshes), and where `scrolled` was
    scrolled to in the last one."""

    def __init__(self, screen: Screen[Any], scrolled: Widget) -> None:
        self.count = 0
        self.shown_y = scrolled.scroll_y
        self.changed = asyncio.Event()
        draw = screen._compositor_refresh

        def counted() -> None:
            draw()
            self.count += 1
            self.shown_y = scrolled.scroll_y
            self.changed.set()

        screen._compositor_refresh = counted  # type: ignore[method-assign]

    async def next(self) -> None:
        self.changed.clear()
        await self.changed.wait()

    async def moved_from(self, y: float) -> None:
        """Until a frame shows the view scrolled away from `y`: Textual scrolls after the next
        refresh, so the first frame after a key may still show the page before."""
        await self.next()
        while self.shown_y == y:
            await self.next()


class Ticker:
    """A 16 ms timer; `worst` is the most it fired late (the screen's longest freeze)."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.delays: list[float] = []
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(TICK)
            delay = time.perf_counter() - start - TICK
            self.delays.append(delay)
            self.worst = max(self.worst, delay)

    def stop(self) -> None:
        self.task.cancel()


# -- scrolling --------------------------------------------------------------------------------


async def replayed_state(session_id: str, version: int) -> SessionState:
    """The long session as the real demo agent replays it (`session/load` in v1,
    `session/resume` with `replayFrom` in v2), read by the real client."""

    async def no_permissions(_pending: Any) -> None:
        return None

    argv = [*DEMO_AGENT, "--speed", "0", "--data-dir", str(DEMO_DATA)]
    options = ClientOptions(cwd=WORKSPACE, protocol_version=version)
    client = AgentClient(argv, options, decide_permission=no_permissions)
    await client.start()
    try:
        session = await client.open_session(session_id, replay=True)
        return session.state
    finally:
        await client.close()


async def bench_scroll(state: SessionState) -> dict[str, float]:
    app = OfflineApp(lambda: state)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(app.started.wait(), 60)
        await pilot.pause(0.3)
        chat = app.chat
        transcript = chat.query_one(Transcript)
        frames = Frames(chat, transcript)
        transcript.scroll_home(animate=False, immediate=True)
        await pilot.pause(0.3)
        samples: list[float] = []
        pages: list[float] = []
        mounted: list[int] = []
        ticker = Ticker()
        started = time.perf_counter()
        while transcript.scroll_y < transcript.max_scroll_y:
            pressed, before = time.perf_counter(), transcript.scroll_y
            app.post_message(events.Key("pagedown", None))  # as the terminal sends it
            await frames.moved_from(before)
            pages.append(time.perf_counter() - pressed)
            mounted.append(len(transcript.blocks))
            if len(pages) % 100 == 0:
                samples.append(rss_mb())
                print(
                    f"  {len(pages)} pages, item {transcript._first:,}, RSS {samples[-1]:.0f} MB",
                    file=sys.stderr,
                )
        elapsed = time.perf_counter() - started
        ticker.stop()
        last = transcript.blocks[-1].item is state.timeline[-1]
    steady = samples[1:] or samples
    result = {
        "pages": len(pages),
        "seconds": elapsed,
        "page_median": statistics.median(pages),
        "page_worst": max(pages),
        "timer_worst": ticker.worst,
        "timer_p99": sorted(ticker.delays)[int(len(ticker.delays) * 0.99)],
        "rss_min": min(steady),
        "rss_max": max(steady),
        "mounted_max": max(mounted),
    }
    print(
        f"scroll: {len(state.timeline):,} items, {len(pages):,} pages in {elapsed:.1f} s,"
        f" reached the end: {last}; page to frame median {result['page_median'] * 1000:.1f} ms,"
        f" worst {result['page_worst'] * 1000:.0f} ms; 16 ms timer late by at most"
        f" {ticker.worst * 1000:.0f} ms (99th percentile {result['timer_p99'] * 1000:.1f} ms);"
        f" RSS {min(steady):.0f}-{max(steady):.0f} MB"
        f" ({(max(steady) / min(steady) - 1) * 100:.0f}% apart); at most"
        f" {max(mounted)} blocks mounted"
    )
    return result


class PlainApp(App[None]):
    """Textual's own floor for paging: a `VerticalScroll` of `Static`s, all mounted, with
    the text of the history's first `BASELINE_ITEMS` items."""

    CSS = "Static { margin: 1 2 0 2; padding: 0 1; border: round $primary; }"

    def __init__(self, texts: list[str]) -> None:
        super().__init__()
        self.texts = texts

    def compose(self) -> Any:
        with VerticalScroll():
            for text in self.texts:
                yield Static(text, markup=False)


BASELINE_ITEMS = 1_000


async def bench_plain_pages(state: SessionState) -> float:
    """The median page of `PlainApp`, paged as `bench_scroll` pages the transcript."""
    texts = [_plain_text(item) for item in state.timeline[:BASELINE_ITEMS]]
    app = PlainApp(texts)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        view = app.query_one(VerticalScroll)
        frames = Frames(app.screen, view)
        pages: list[float] = []
        while view.scroll_y < view.max_scroll_y:
            pressed, before = time.perf_counter(), view.scroll_y
            view.scroll_page_down()
            await frames.moved_from(before)
            pages.append(time.perf_counter() - pressed)
    median = statistics.median(pages)
    print(
        f"baseline: Textual's VerticalScroll of {len(texts):,} Statics, {len(pages):,} pages:"
        f" page to frame median {median * 1000:.1f} ms, worst {max(pages) * 1000:.0f} ms"
    )
    return median


def _plain_text(item: Any) -> str:
    """`item`'s text, cut or padded to the lines its block takes (less the Static's border
    and margin), so the baseline scrolls as far as the transcript does."""
    text = getattr(item, "text", None) or getattr(item, "title", None) or type(item).__name__
    lines = max(1, estimate(item, SIZE[0] - 1) - 3)
    return "\n".join((str(text).splitlines() + ["."] * lines)[:lines])


# -- opening a long history -------------------------------------------------------------------


async def replay_lines(session_id: str) -> tuple[list[bytes], float]:
    """The lines the demo agent sends for `session/load` of the session, read raw, and the
    seconds from `session/load` sent to its answer read (the agent's own pace: the floor)."""
    process = await asyncio.create_subprocess_exec(
        *DEMO_AGENT,
        "--speed",
        "0",
        "--data-dir",
        str(DEMO_DATA),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=1 << 24,
    )
    assert process.stdin is not None and process.stdout is not None
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/load",
            "params": {"sessionId": session_id, "cwd": str(WORKSPACE), "mcpServers": []},
        },
    ]
    process.stdin.write(json.dumps(requests[0]).encode() + b"\n")
    await process.stdout.readline()
    load_sent = time.perf_counter()
    process.stdin.write(json.dumps(requests[1]).encode() + b"\n")
    await process.stdin.drain()
    lines: list[bytes] = []
    while True:
        line = await process.stdout.readline()
        if not line or b'"id":2' in line.replace(b" ", b""):
            break
        if b"session/update" in line:
            lines.append(line)
    answered = time.perf_counter() - load_sent
    process.stdin.close()
    await process.wait()
    return lines, answered


def decode_baseline(lines: list[bytes]) -> float:
    decoder = msgspec.json.Decoder()
    started = time.perf_counter()
    for line in lines:
        decoder.decode(line)
    return time.perf_counter() - started


async def open_history(session_id: str) -> tuple[float, float, int]:
    """(seconds from session/load sent to the last item on screen, from the app's start,
    timeline items)."""
    argv = [*DEMO_AGENT, "--speed", "0", "--data-dir", str(DEMO_DATA)]
    # A fresh record store: acp-tui has no record of the session, so the agent replays it.
    os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(dir=SCRATCH)
    app = demo_app(WORKSPACE, SCRATCH / "state", argv=argv, resume=session_id, record=True)
    load_sent = 0.0
    request = controller.AgentClient.request

    async def timed_request(self: AgentClient, method: str, *args: Any) -> Any:
        nonlocal load_sent
        if method == "session/load":
            load_sent = time.perf_counter()
        return await request(self, method, *args)

    controller.AgentClient.request = timed_request  # type: ignore[method-assign]
    started = time.perf_counter()
    try:
        async with app.run_test(size=SIZE) as pilot:
            frames = Frames(app.chat, app.chat.query_one(Transcript))
            while True:
                await frames.next()
                session = app.chat.session
                if session is None or not session.state.timeline:
                    continue
                transcript = app.chat.query_one(Transcript)
                last = transcript.block_for(session.state.timeline[-1])
                if last is not None and last in app.chat._compositor.visible_widgets:
                    break
            shown = time.perf_counter()
            items = len(session.state.timeline)
            await pilot.pause()
    finally:
        controller.AgentClient.request = request  # type: ignore[method-assign]
    return shown - load_sent, shown - started, items


async def bench_open(runs: int) -> None:
    session_id = write_long_session(DEMO_DATA, UPDATES, WORKSPACE, "sess_open")
    opened: list[float] = []
    launched: list[float] = []
    baseline: list[float] = []
    raw: list[float] = []
    items = 0
    lines: list[bytes] = []
    for _ in range(runs):
        lines, answered = await replay_lines(session_id)
        raw.append(answered)
        baseline.append(decode_baseline(lines))
        since_load, since_start, items = await open_history(session_id)
        opened.append(since_load)
        launched.append(since_start)
        gc.collect()
    median, base = statistics.median(opened), statistics.median(baseline)
    print(
        f"open: a {len(lines):,}-update session/load ({items:,} items): last screen shown"
        f" {median * 1000:.0f} ms after session/load was sent (median of"
        f" {', '.join(f'{s * 1000:.0f}' for s in opened)} ms), {statistics.median(launched):.2f} s"
        f" after the app started; msgspec decoding the same lines: {base * 1000:.0f} ms"
        f" ({median / base:.1f}x); the agent's own replay read raw off its pipe (the floor):"
        f" {statistics.median(raw) * 1000:.0f} ms ({median / statistics.median(raw):.1f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=("memory", "scroll", "open"))
    parser.add_argument("--items", type=int, default=UPDATES, help="items to scroll through")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    if args.only in (None, "open"):
        asyncio.run(bench_open(args.runs))
    if args.only == "memory":
        asyncio.run(bench_memory(2000))
    elif args.only is None:  # in a process of its own: RSS counts nothing of the other runs
        subprocess.run([sys.executable, __file__, "--only", "memory"], check=True)
    if args.only in (None, "scroll"):
        session_id = write_long_session(DEMO_DATA, args.items + 1, WORKSPACE, "sess_scroll")
        state = asyncio.run(replayed_state(session_id, version=2))
        plain = asyncio.run(bench_plain_pages(state))
        ours = asyncio.run(bench_scroll(state))
        print(f"page to frame: {ours['page_median'] / plain:.2f}x Textual's own scroll")


if __name__ == "__main__":
    main()
