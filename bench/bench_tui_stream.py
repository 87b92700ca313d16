"""How fast the TUI takes a streamed Markdown answer, and whether the screen stays responsive.

One answer of 20,000 chunks (the demo agent's Markdown showcase, three words a chunk, about
420 KB: headings, lists, tables, fenced code) is appended chunk by chunk to a message widget
in a headless app (`App.run_test`), yielding to the event loop after every chunk the way a
socket reader does. Meanwhile a 16 ms timer records how late it fires: the worst delay is the
longest the screen could not react. A run ends when every chunk is on screen; blocks that
scrolled past unseen in a flood may still carry an estimated height then, so the time until
every height is exact is reported too (the timer keeps running until then).

Paths, each run several times in this one process, interleaved, medians reported:

- empty loop:   the producer and the timer, no widget (the floor);
- log (plain):  Textual's `Log` written once per frame: plain text through the Line API, the
                cheapest way Textual shows streaming text (no Markdown at all);
- acp-tui:      `MarkdownView`, the transcript's message body (finished blocks rendered once,
                only the growing tail again, appends coalesced per frame; in a flood only
                the blocks that will be seen).
- textual (opt): `Markdown.append` once per frame, on fewer chunks (it is far slower).

With `--typing`: keystroke-to-screen latency in the real app (`demo_app`, 120x40, headless)
while a real agent process (`child_agent` below, started by the app as any agent) streams the
same Markdown at `--rate` chunks/s for `--typing-seconds`; and, as the baseline, with no stream.
A key goes into the prompt every 100 ms (every tenth a Backspace), posted as `Pilot.press`
posts it; its time runs until the first screen update that shows the prompt holding its
effect. The hook is `App._display`: the compositor hands it every update (the changed lines
of the screen, composited); headless, Textual stops there, so the hook also serialises the
update as the terminal driver would (`render_segments`) before taking the time (see
`PaintWatch`).

Also, with `--startup`: time from process start to the first frame on the demo agent; and with
`--memory`: RSS after a session of 2,000 messages of 2 KB Markdown is shown and scrolled.

Targets (issue 14): acp-tui >= 6,000 chunks/s with no timer delay over 20 ms; typing while
streaming 200 chunks/s for 60 s: median <= 10 ms, worst <= 33 ms. Last measured (2 shared
cores, two runs): 8,604 and 8,793 chunks/s (before: 4,745), worst timer delay 11.5 and
14.5 ms (14.4), every height exact ~2 s later; typing median 2.3 and 2.4 ms (42.4), worst 31.8
and 24.5 ms (126.7), no stream 2.7 ms.
For `--startup` and `--memory`, see bench/README.md.

Run: python bench/bench_tui_stream.py [--chunks 20000] [--runs 3] [--textual] [--startup]
     [--memory] [--typing [--typing-seconds 60] [--rate 200]] [--no-stream]
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

# The tests' driver of the real app (tests/support/pilot.py) drives it here too.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Log, Markdown

from acp_tui.demo.texts import MARKDOWN_SHOWCASE
from acp_tui.demo.turn import pieces
from acp_tui.ui.render.lexers import warm_up
from acp_tui.ui.widgets.markdown_view import MarkdownView

FRAME = 1 / 60
TICK = 0.016


def answer_chunks(count: int) -> list[str]:
    chunks: list[str] = []
    while len(chunks) < count:
        chunks.extend(pieces(MARKDOWN_SHOWCASE + "\n\n", 3))
    return chunks[:count]


class Sink:
    """How a path takes chunks: `append` each, then `settled` once all are on screen, and
    `exact` once nothing is left to measure either (see `MarkdownView.shown`)."""

    def __init__(self, widget: Widget | None) -> None:
        self.widget = widget

    def append(self, chunk: str) -> None: ...

    @property
    def settled(self) -> bool:
        return True

    @property
    def exact(self) -> bool:
        return True


class ViewSink(Sink):
    def __init__(self) -> None:
        super().__init__(MarkdownView())

    def append(self, chunk: str) -> None:
        self.widget.append(chunk)  # type: ignore[union-attr]

    @property
    def settled(self) -> bool:
        return self.widget.shown  # type: ignore[union-attr]

    @property
    def exact(self) -> bool:
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


SETTLE_TIMEOUT = 120
"""Seconds a run may take to show its last chunk before the bench says so and stops."""


async def stream(
    make_sink: Callable[[], Sink], chunks: list[str]
) -> tuple[float, float, float, float]:
    """(chunks per second until all are on screen, worst lateness of a 16 ms timer in s,
    chunks per second of the process's CPU time: steadier than the wall clock on a shared
    machine, seconds after that until every height is exact: blocks that scrolled past
    unseen are measured in later frames; the timer runs until then)."""
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
        started, cpu_started = time.perf_counter(), time.process_time()
        for chunk in chunks:
            app.sink.append(chunk)
            await asyncio.sleep(0)
        while not app.sink.settled:
            if time.perf_counter() - started > SETTLE_TIMEOUT:
                raise RuntimeError(f"not all chunks were on screen after {SETTLE_TIMEOUT} s")
            await asyncio.sleep(0.001)
        await pilot.pause()
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        while not app.sink.exact:
            await asyncio.sleep(0.001)
        exact = time.perf_counter() - started - elapsed
        running = False
        await tick
    gc.collect()
    return len(chunks) / elapsed, worst, len(chunks) / cpu, exact


def collector_paced(run: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    """Run as the app does: startup objects frozen, young generations collected as usual, no
    full collection mid-stream (see `acp_tui.ui.collector`)."""

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


def report(name: str, results: list[tuple[float, float, float, float]]) -> None:
    rate = statistics.median(r[0] for r in results)
    worst = statistics.median(r[1] for r in results)
    cpu = statistics.median(r[2] for r in results)
    exact = statistics.median(r[3] for r in results)
    runs = ", ".join(f"{r:,.0f}/s {w * 1000:.0f} ms" for r, w, _, _ in results)
    print(
        f"  {name:<13} {rate:>9,.0f} chunks/s   worst timer delay {worst * 1000:6.1f} ms"
        f"   per CPU second {cpu:>9,.0f}   all exact {exact:4.1f} s later   ({runs})"
    )


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
    results: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name in paths}
    for _ in range(runs):
        for name, make in paths.items():
            results[name].append(await collector_paced(lambda make=make: stream(make, chunks))())
    for name, values in results.items():
        report(name, values)
    if textual:
        few = chunks[: max(1, count // 10)]
        print(f"  (textual Markdown.append per frame, on {len(few):,} chunks only)")
        report("textual", [await collector_paced(lambda: stream(TextualSink, few))()])


# -- typing while an agent streams ----------------------------------------------------------

SESSION = "sess_bench"
TYPED = "the quick brown fox jumps over the lazy dog "
"""What the bench types, a key at a time (cleared, unmeasured, when a line is full)."""
KEY_GAP = 0.1
"""Seconds between two keystrokes: a fast typist (10 keys/s)."""
BACKSPACE_EVERY = 10
"""Every tenth key is a Backspace (a typo undone): editing keys take another path than
characters (the editor's key bindings), and are timed too."""


def child_agent(rate: float, seconds: float) -> None:
    """A minimal ACP (v1) agent on stdin/stdout: a prompt is answered with the Markdown
    showcase, streamed as `agent_message_chunk`s at `rate` chunks/s for `seconds`, paced to the
    clock (a late chunk does not push the rest back), then `end_turn`."""
    import json
    import threading

    lock = threading.Lock()

    def send(message: dict[str, Any]) -> None:
        with lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def answer(request_id: Any) -> None:
        chunks = answer_chunks(int(rate * seconds))
        started = time.monotonic()
        for index, chunk in enumerate(chunks):
            wait = started + index / rate - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            update = {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "msg_bench",
                "content": {"type": "text", "text": chunk},
            }
            params = {"sessionId": SESSION, "update": update}
            send({"jsonrpc": "2.0", "method": "session/update", "params": params})
        send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}})

    results: dict[str, dict[str, Any]] = {
        "initialize": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
        "session/new": {"sessionId": SESSION},
    }
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None or method is None:
            continue  # a notification (cancel) or a response: nothing to do
        if method == "session/prompt":
            threading.Thread(target=answer, args=(request_id,), daemon=True).start()
        elif method in results:
            send({"jsonrpc": "2.0", "id": request_id, "result": results[method]})
        else:
            error = {"code": -32601, "message": f"{method} is not in this bench agent"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})


class PaintWatch:
    """When the screen last showed the prompt with the text it holds now.

    The hook is `App._display`, which the compositor calls with every screen update (the
    changed lines of every widget, composited). Headless, Textual stops there; this hook goes
    on as the terminal driver would, turning the update into the escape sequences written to
    the terminal (`render_segments`), and then takes the time. An update counts for the
    prompt when it covers a row of the prompt's content and the prompt holds the expected
    text at that moment (the compositor has just rendered its lines)."""

    def __init__(self, app: App[Any], prompt: Widget) -> None:
        self.app, self.prompt = app, prompt
        self.expected: str | None = None
        self.painted: asyncio.Future[float] | None = None
        self._display = app._display
        app._display = self.display  # type: ignore[method-assign]

    def expect(self, text: str) -> asyncio.Future[float]:
        self.expected = text
        self.painted = asyncio.get_running_loop().create_future()
        return self.painted

    def display(self, screen: Any, renderable: Any) -> None:
        from textual._compositor import ChopsUpdate, CompositorUpdate

        self._display(screen, renderable)
        if not isinstance(renderable, CompositorUpdate):
            return
        renderable.render_segments(self.app.console)
        now = time.perf_counter()
        painted, prompt = self.painted, self.prompt
        if painted is None or painted.done() or prompt.text != self.expected:  # type: ignore[attr-defined]
            return
        rows = range(prompt.content_region.y, prompt.content_region.bottom)
        if isinstance(renderable, ChopsUpdate) and not any(
            y in rows for y, _, _ in renderable.spans
        ):
            return
        painted.set_result(now)


def press(app: App[Any], key: str) -> None:
    """Post a key press as `Pilot.press` does (the same `Key` event, through the headless
    driver), without Pilot's wait for the app to go idle afterwards: under a stream that wait
    takes up to two seconds a key, and here the screen update is what is waited for."""
    from textual import events

    character = " " if key == "space" else key if len(key) == 1 else None
    event = events.Key(key, character)
    event.set_sender(app)
    app._driver.send_message(event)  # type: ignore[union-attr]


async def type_and_time(app: App[Any], pilot: Any, prompt: Any, seconds: float) -> list[float]:
    """Type `TYPED` into `prompt` a key every `KEY_GAP` s for `seconds` (with a Backspace every
    `BACKSPACE_EVERY` keys); each key's time from being posted (Pilot's press) to the first
    screen update showing its effect."""
    watch = PaintWatch(app, prompt)
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    index = 0
    while time.perf_counter() < deadline:
        index += 1
        if len(prompt.text) >= 60:
            prompt.clear()  # not timed
            await pilot.pause(KEY_GAP)
        if index % BACKSPACE_EVERY == 0 and prompt.text:
            key, expected = "backspace", prompt.text[:-1]
        else:
            character = TYPED[index % len(TYPED)]
            key, expected = ("space" if character == " " else character), prompt.text + character
        painted = watch.expect(expected)
        started = time.perf_counter()
        press(app, key)
        latencies.append(await asyncio.wait_for(painted, 5) - started)
        await asyncio.sleep(KEY_GAP)
    return latencies


async def typing_run(rate: float, seconds: float) -> tuple[list[float], int]:
    """Key latencies while a real agent process streams at `rate` chunks/s (no stream: 0);
    and how many chunks the app took in meanwhile."""
    import tempfile

    from acp_tui.ui.widgets.prompt_input import PromptInput
    from tests.support.pilot import demo_app, demo_workspace, wait_started

    scratch = Path(tempfile.mkdtemp(prefix="acp-tui-bench-"))
    argv = [sys.executable, __file__, "--child-agent", f"{rate},{seconds + 5}"]
    app = demo_app(demo_workspace(scratch / "workspace"), scratch / "state", argv=argv)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        prompt = app.chat.query_one(PromptInput)
        if rate:
            await pilot.press(*"go", "enter")
            while not _streamed(app):
                await pilot.pause(0.01)
        await pilot.pause(0.5)
        before = _streamed(app)
        latencies = await type_and_time(app, pilot, prompt, seconds)
        chunks = _streamed(app) - before
    return latencies, chunks


def _streamed(app: Any) -> int:
    """Chunks of the agent's answers in the session so far."""
    from acp_tui.session.state import Message

    if app.session is None:
        return 0
    timeline = app.session.state.timeline
    return sum(len(i.content) for i in timeline if isinstance(i, Message) and i.role == "agent")


async def bench_typing(rate: float, seconds: float, baseline_seconds: float) -> None:
    def line(name: str, latencies: list[float], extra: str = "") -> None:
        ms = sorted(value * 1000 for value in latencies)
        median, p95, worst = statistics.median(ms), ms[int(len(ms) * 0.95)], ms[-1]
        print(
            f"  {name:<24} median {median:5.1f} ms   p95 {p95:5.1f} ms   worst {worst:5.1f} ms"
            f"   ({len(ms)} keys{extra})"
        )

    print(f"typing, a key every {KEY_GAP * 1000:.0f} ms, key press to the frame that shows it:")
    idle, _ = await typing_run(0, baseline_seconds)
    line("no stream", idle)
    streaming, chunks = await typing_run(rate, seconds)
    line(
        f"stream {rate:.0f} chunks/s",
        streaming,
        f", {seconds:.0f} s, {chunks / seconds:.0f} chunks/s taken in",
    )


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

    from tests.support.pilot import demo_app, demo_workspace

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
    from acp_tui.session.agent_info import AgentInfo
    from acp_tui.session.session import Session
    from acp_tui.ui.app import AcpApp
    from acp_tui.ui.conversation import ConversationView
    from acp_tui.ui.widgets.transcript import Transcript
    from tests.support.pilot import demo_app, demo_workspace

    before = rss_mb()
    answer = MARKDOWN_SHOWCASE[:2048]

    class Offline:
        info = AgentInfo(name="bench", version="1", protocol_version=1)

    class OfflineApp(AcpApp):
        def start_agent(self, view: ConversationView) -> None:
            """No agent: the chat shows a session built here (no conversation runs)."""
            session = Session(Offline(), "sess_bench")  # type: ignore[arg-type]
            state = session.state
            for index in range(messages):
                reducer.begin_turn(state, [text_block(f"question {index}")])
                update = AgentMessageChunk(content=text_block(answer), message_id=f"m{index}")
                reducer.apply(state, update)
                reducer.end_turn(state, "end_turn")
            self.chat.attach(session)
            view.started.set()

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
    parser.add_argument("--typing", action="store_true", help="also keystroke latency")
    parser.add_argument("--typing-seconds", type=float, default=60, help="typing while streaming")
    parser.add_argument("--rate", type=float, default=200, help="chunks/s while typing")
    parser.add_argument("--child-startup", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--child-agent", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_startup is not None:
        child_startup(args.child_startup)
        return
    if args.child_agent is not None:
        rate, seconds = (float(value) for value in args.child_agent.split(","))
        child_agent(rate, seconds)
        return
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    if not args.no_stream:
        asyncio.run(bench_stream(args.chunks, args.runs, args.textual))
    if args.typing:
        asyncio.run(bench_typing(args.rate, args.typing_seconds, min(args.typing_seconds, 10)))
    if args.startup:
        bench_startup(args.runs)
    if args.memory:
        asyncio.run(bench_memory(2000))


if __name__ == "__main__":
    main()
