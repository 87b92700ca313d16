"""One long answer through the real app, end to end: does it stay as fast the longer it grows?

The real `acp-tui` (`python -m acp_tui -- AGENT`, a fresh home and workspace, records and
checkpoints on, as a user runs it) in a pseudo-terminal of 120x40, on
`tests/agents/flood_agent.py`: a stdlib agent that answers the prompt with N
`agent_message_chunk`s of Markdown (the demo's showcase cut into ~41-character chunks,
repeated), written as fast as the pipe takes them. The last chunk is a sentinel word; the bench
types a prompt, presses Enter, and reads what the app writes to the terminal until the sentinel
is on screen. Per run:

- chunks/s:  N over the time from Enter to the sentinel written to the terminal;
- stall:     the longest gap between two writes to the terminal meanwhile (the longest the
             screen stood still while the answer streamed);
- RSS/chunk: the app's peak RSS (`VmHWM`) over the answer, less its RSS before Enter, over N;
             and what it still holds `--linger` seconds after the sentinel (`VmRSS`).

Each length is run `--runs` times, interleaved; medians. The ratio that matters is the long
answer's rate over the short one's, in the same process and the same minutes (the machine's
load moves both alike): 1.0 is linear, less is a per-chunk cost that grows with the answer.
Targets (issue 29): the 80,000-chunk rate >= 0.8x the 20,000-chunk one; <= 1 KB RSS a chunk
over 80,000 chunks; no stall over 20 ms.

`--profile`: one run of the longest length with the app sampling its own main thread (every
`--interval` seconds, from a thread of its own, `sys._current_frames`) from Enter to the
sentinel; the stacks are written, collapsed (one `frame;frame;... count` a line, flame-graph
style) to `--profile-out`, and the functions seen most are printed. Then, for each fifth of
the answer: its frames (each frame's output handed to Textual's writer thread), the median gap
between two, and what a frame's main thread spent in reading, parsing, rendering, layout and
compositing (ms a frame, from the samples' shares); and each full collection of the cycle
collector, with its length. The app runs with a switch interval of 1 ms, so that the sampler
gets the interpreter within a ms.

`--keys`: a key is typed into the prompt every 0.1 s while the answer streams (each a Greek
letter, in neither the answer nor the app's chrome, erased once echoed), timed from written to
its bytes in the terminal's output: the median and worst keystroke. `--hog`: one busy process
per core (started here, stopped at the end) competes with the app throughout (issue 29's
headroom: worst keystroke <= 50 ms, >= 4,000 chunks/s).

`--trace-memory FRAMES`: one run of the shortest length with the app tracing its allocations
(`tracemalloc`, from Enter on); `--linger` seconds after the sentinel it writes what is still
held, by file, by line and by traceback, to `--trace-out`. Slow (every allocation is traced).

`--package DIR` runs the acp_tui package found in DIR instead of this checkout's (a copy of an
earlier commit: `git archive COMMIT acp_tui | tar -x -C DIR`), for before and after;
`--against DIR...` runs those too, by turns with it (before and after in the same minutes).

Run: python bench/bench_long_answer.py [--chunks 20000 80000] [--runs 3]
     [--package DIR [--against DIR...]] [--keys] [--hog]
     [--profile [--interval 0.002] [--profile-out FILE]] [--trace-memory FRAMES [--trace-out FILE]]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import itertools
import json
import os
import pty
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from acp_tui.demo.texts import MARKDOWN_SHOWCASE  # noqa: E402
from acp_tui.demo.turn import pieces  # noqa: E402
from tests.agents.flood_agent import SESSION  # noqa: E402

ROWS, COLUMNS = 40, 120
WORDS_PER_CHUNK = 6
"""Words a chunk: ~42 characters of the showcase, about what a model streams at once."""
SENTINEL = b"ANSWER-ENDS-HERE"
SHOWN = re.compile(rb"Markdown, streamed|small chunks|second bullet|v1 name|Send one prompt")
"""Words of the showcase, one of which is on any screenful of it: the answer began to show (in
a flood, blocks that scroll past unseen are never drawn, the first heading among them)."""
READY = b"press Enter"
"""On the welcome above an empty session: the agent answered and the prompt takes input."""
PROMPT = b"stream-the-long-answer"
TIMEOUT = 1200.0
WARM_CHUNKS = 2_000
"""A warm-up run's answer: every kind of block of the showcase, many times over."""
KEYS = "αβγδεζηθ"
"""Typed into the prompt while the answer streams, one at a time: none is in the showcase or the
app's chrome, so each one's bytes in the terminal's output are its echo."""
KEY_EVERY = 0.1
BACKSPACE = b"\x7f"
HOG = "while True: pass"

PROFILER = """
import atexit, collections, gc, os, runpy, sys, threading, time

interval, out, start_file, stop_file = float(sys.argv[1]), *sys.argv[2:5]
sys.argv = ["acp_tui", *sys.argv[5:]]
main = threading.main_thread().ident
cpu_clock = time.pthread_getcpuclockid(main)
sys.setswitchinterval(0.001)  # the sampler gets the interpreter within a ms, not 5
samples = []  # (time, the main thread's CPU time, stack)
writes = []  # when a frame's output was handed to Textual's writer thread
collections_ = []  # (start, seconds) of each full collection
objects = collections.Counter()

import textual.drivers._writer_thread as writer_thread

queue_write = writer_thread.WriterThread.write

def write_timed(self, text):
    writes.append(time.perf_counter())
    queue_write(self, text)

writer_thread.WriterThread.write = write_timed
collection_start = [0.0]

def collected(phase, info):
    if phase == "start":
        collection_start[0] = time.perf_counter()
    elif info["generation"] == 2:
        collections_.append((collection_start[0], time.perf_counter() - collection_start[0]))

gc.callbacks.append(collected)

def sample():
    while not os.path.exists(start_file):
        time.sleep(0.01)
    while not os.path.exists(stop_file):
        frame = sys._current_frames().get(main)
        names = []
        while frame is not None:
            code = frame.f_code
            where = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
            names.append(f"{code.co_name} ({where})")
            frame = frame.f_back
        stack = ";".join(reversed(names))
        samples.append((time.perf_counter(), time.clock_gettime(cpu_clock), stack))
        time.sleep(interval)
    objects.update(census())

def write():
    stacks = collections.Counter(stack for _, _, stack in samples)
    with open(out, "w") as file:
        for stack, count in stacks.most_common():
            file.write(f"{stack} {count}\\n")
    with open(out + ".objects", "w") as file:
        for name, (count, size) in sorted(objects.items(), key=lambda kv: -kv[1][1])[:40]:
            file.write(f"{count:>10} {size:>12} {name}\\n")
    start, stop = samples[0][0], samples[-1][0]
    with open(out + ".timeline", "w") as file:
        file.writelines(f"W {at}\\n" for at in writes if start <= at <= stop)
        file.writelines(f"C {at} {seconds}\\n" for at, seconds in collections_ if at >= start)
        file.writelines(f"S {at} {cpu} {stack}\\n" for at, cpu, stack in samples)

def census():
    counts = collections.Counter()
    for thing in gc.get_objects():
        kind = type(thing)
        name = f"{kind.__module__}.{kind.__qualname__}"
        size = sys.getsizeof(thing)
        count, total = counts.get(name, (0, 0))
        counts[name] = (count + 1, total + size)
    return counts

atexit.register(write)
threading.Thread(target=sample, daemon=True).start()
runpy.run_module("acp_tui", run_name="__main__")
"""


MEMORY_TRACER = """
import gc, os, runpy, sys, threading, time, tracemalloc

frames, linger, out, start_file, stop_file = int(sys.argv[1]), float(sys.argv[2]), *sys.argv[3:6]
sys.argv = ["acp_tui", *sys.argv[6:]]

def trace():
    while not os.path.exists(start_file):
        time.sleep(0.01)
    tracemalloc.start(frames)
    while not os.path.exists(stop_file):
        time.sleep(0.01)
    peak = tracemalloc.get_traced_memory()[1]
    time.sleep(linger)
    gc.collect()
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )
    with open(out + ".part", "w") as file:
        file.write(f"peak {peak}\\n")
        for group in ("filename", "lineno", "traceback"):
            stats = snapshot.statistics(group)
            file.write(f"== by {group}: {sum(s.size for s in stats)} bytes in {len(stats)}\\n")
            for stat in stats[:40 if group != "traceback" else 12]:
                file.write(f"{stat.size:>12} {stat.count:>9} ")
                file.write("\\n    ".join(stat.traceback.format(most_recent_first=True)))
                file.write("\\n")
    os.rename(out + ".part", out)

threading.Thread(target=trace, daemon=True).start()
runpy.run_module("acp_tui", run_name="__main__")
"""


def answer_chunks(count: int) -> list[str]:
    """`count` chunks of Markdown, the last one the sentinel (a paragraph of its own)."""
    chunks: list[str] = []
    showcase = pieces(MARKDOWN_SHOWCASE + "\n\n", WORDS_PER_CHUNK)
    while len(chunks) < count - 1:
        chunks.extend(showcase)
    return [*chunks[: count - 1], f"\n\n{SENTINEL.decode()}\n"]


def flood_file(count: int, into: Path) -> Path:
    path = into / f"flood-{count}.jsonl"
    with path.open("w") as file:
        for chunk in answer_chunks(count):
            update = {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "msg_long",
                "content": {"type": "text", "text": chunk},
            }
            params = {"sessionId": SESSION, "update": update}
            file.write(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}))
            file.write("\n")
    return path


@dataclass
class Run:
    chunks: int
    seconds: float
    """Enter to the sentinel on screen."""
    streaming: float
    """The first chunk on screen to the sentinel on screen."""
    cpu: float
    """The app's CPU time from Enter to the sentinel (the agent's not counted)."""
    stall: float
    """The longest gap between two writes to the terminal while streaming (between those)."""
    peak_kb: float
    """Peak RSS over the answer less RSS before Enter, KB."""
    held_kb: float
    """RSS `--linger` seconds after the sentinel less RSS before Enter, KB."""
    keys: list[float]
    """Each key typed while streaming (`--keys`): seconds from written to echoed."""

    @property
    def rate(self) -> float:
        return self.chunks / self.seconds

    @property
    def streaming_rate(self) -> float:
        return (self.chunks - 1) / self.streaming


def cpu_seconds(pid: int) -> float:
    """User and system time the process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


class Terminal:
    """A program in a pseudo-terminal of ROWS x COLUMNS, and what it wrote."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: sizes its terminal, then becomes the program
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
                os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.seen = bytearray()

    def read(self, timeout: float) -> bytes:
        readable, _, _ = select.select([self.fd], [], [], timeout)
        if not readable:
            return b""
        try:
            data = os.read(self.fd, 1 << 16)
        except OSError as error:  # EIO: the app closed the terminal
            raise SystemExit(f"the app ended ({error}):\n{bytes(self.seen[-2000:])!r}") from None
        return data

    def wait_for(self, text: bytes, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            if time.monotonic() > deadline:
                raise SystemExit(f"no {text!r} in {timeout:g} s:\n{bytes(self.seen[-2000:])!r}")
            self.seen += self.read(0.1)

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.read(max(0.0, deadline - time.monotonic()))

    def stop(self) -> None:
        """End the app as a closed terminal does (SIGHUP: acp-tui stops its agent first)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGHUP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.fd], [], [], 0.02)
            if readable:
                with contextlib.suppress(OSError):  # EIO once it closed the terminal
                    os.read(self.fd, 1 << 16)  # a full terminal would block its exit
            done, _ = os.waitpid(self.pid, os.WNOHANG)
            if done:
                break
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)  # the pty made it a group leader
            os.waitpid(self.pid, 0)
        os.close(self.fd)


class Typist:
    """Types a key into the prompt every `KEY_EVERY` seconds while the answer streams, and
    times each one to its echo on screen; each echoed key is erased (Backspace) so that the
    next one is the only thing new in the prompt."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.latencies: list[float] = []
        self._waiting: tuple[bytes, float] | None = None
        self._next = 0.0

    def timeout(self, now: float) -> float:
        """How long a read may wait before the next key is due."""
        return 1.0 if self._waiting else max(0.0, self._next - now)

    def step(self, now: float, seen: bytes) -> None:
        """`seen`: the output read just now (and the end of the read before it)."""
        if self._waiting is not None:
            key, sent = self._waiting
            if key in seen:
                self.latencies.append(now - sent)
                os.write(self.fd, BACKSPACE)
                self._waiting = None
                self._next = sent + KEY_EVERY
        elif now >= self._next:
            key = KEYS[len(self.latencies) % len(KEYS)].encode()
            os.write(self.fd, key)
            self._waiting = key, time.perf_counter()

    @property
    def waiting(self) -> bool:
        return self._waiting is not None


def environment(scratch: Path, package: Path) -> dict[str, str]:
    home = scratch / "home"
    home.mkdir(exist_ok=True)
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "XDG_", "TEXTUAL")) and key not in ("COLUMNS", "LINES")
    }
    return base | {
        "HOME": str(home),
        "PYTHONPATH": str(package),
        "TERM": "xterm-256color",
        "PYTHONPYCACHEPREFIX": str(scratch / "pycache"),
    }


def long_answer(
    count: int,
    flood: Path,
    scratch: Path,
    linger: float,
    package: Path = REPO,
    profile: list[str] | None = None,
    written: Path | None = None,
    keys: bool = False,
    program: list[str] | None = None,
) -> Run:
    """One run: the app started, `count` chunks streamed after Enter, timed to the sentinel."""
    workspace = scratch / f"workspace-{time.monotonic_ns()}"
    workspace.mkdir()
    agent = [sys.executable, str(REPO / "tests" / "agents" / "flood_agent.py"), str(flood)]
    program = profile or program or [sys.executable, "-m", "acp_tui"]
    app = [*program, "--cwd", str(workspace), "--", *agent]
    terminal = Terminal(app, environment(scratch, package), workspace)
    try:
        terminal.wait_for(READY, 30)
        # Typed before the prompt takes keys (a loaded machine), the word would be lost and
        # Enter would send nothing: the word echoed is the sign it took it.
        os.write(terminal.fd, PROMPT)
        terminal.wait_for(PROMPT, 30)
        terminal.drain(0.5)
        before = status_kb(terminal.pid, "VmRSS")
        if profile is not None:
            (scratch / "profile-start").touch()
        cpu_before = cpu_seconds(terminal.pid)
        started = last = time.perf_counter()
        os.write(terminal.fd, b"\r")
        stall = 0.0
        tail = b""
        first: float | None = None
        typist = Typist(terminal.fd) if keys else None
        while True:
            wait = 1.0 if typist is None or first is None else typist.timeout(time.perf_counter())
            data = terminal.read(wait)
            now = time.perf_counter()
            if now - started > TIMEOUT:
                raise SystemExit(f"no sentinel in {TIMEOUT:g} s")
            if first is not None:
                stall = max(stall, now - last)
            if data:
                last = now
                # A word may straddle two reads: look again at the end of the read before.
                tail = tail[-32:] + data
            if first is None and SHOWN.search(tail):
                first = now
            if typist is not None and first is not None:
                typist.step(now, tail if data else b"")
            if SENTINEL in tail:
                seconds = now - started
                break
        deadline = time.perf_counter() + 30
        while typist is not None and typist.waiting:  # the last key, echoed once idle
            if time.perf_counter() > deadline:
                raise SystemExit("a key typed while streaming was not echoed in 30 s")
            data = terminal.read(1.0)
            tail = tail[-32:] + data
            typist.step(time.perf_counter(), tail if data else b"")
        if profile is not None:
            (scratch / "profile-stop").touch()
        cpu = cpu_seconds(terminal.pid) - cpu_before
        peak = status_kb(terminal.pid, "VmHWM")
        terminal.drain(linger)
        held = status_kb(terminal.pid, "VmRSS")
        while written is not None and not written.exists():
            terminal.drain(0.5)  # the app's tracer writes its snapshot after the linger
    finally:
        terminal.stop()
    assert first is not None
    latencies = typist.latencies if typist is not None else []
    return Run(count, seconds, now - first, cpu, stall, peak - before, held - before, latencies)


def report(runs: dict[int, list[Run]]) -> None:
    rates: dict[int, tuple[float, float, float]] = {}
    for count, done in runs.items():
        rate = statistics.median(run.rate for run in done)
        streaming = statistics.median(run.streaming_rate for run in done)
        per_cpu = statistics.median(run.chunks / run.cpu for run in done)
        rates[count] = rate, streaming, per_cpu
        stall = statistics.median(run.stall for run in done)
        peak = statistics.median(run.peak_kb for run in done) * 1024 / count
        held = statistics.median(run.held_kb for run in done) * 1024 / count
        every = ", ".join(f"{run.rate:,.0f}/s {run.stall * 1000:.0f} ms" for run in done)
        if all(run.keys for run in done):
            typed = statistics.median(statistics.median(run.keys) for run in done) * 1000
            worst = statistics.median(max(run.keys) for run in done) * 1000
            keys = ", ".join(f"{len(run.keys)} worst {max(run.keys) * 1000:.0f}" for run in done)
            every += f"; keys: median {typed:.1f} ms, worst {worst:.1f} ms ({keys})"
        print(
            f"{count:>7,} chunks: {rate:7,.0f} chunks/s Enter to the end ({count / rate:5.2f} s), "
            f"{streaming:7,.0f}/s first chunk to the end, {per_cpu:7,.0f} per CPU second; "
            f"worst stall {stall * 1000:4.0f} ms; "
            f"RSS {peak:5.0f} B/chunk at peak, {held:5.0f} held  [{every}]"
        )
    counts = sorted(rates)
    shortest = counts[0]
    for count in counts[1:]:
        long, short = rates[count], rates[shortest]
        print(
            f"{count:,} rate / {shortest:,} rate: {long[0] / short[0]:.2f}x Enter to the end, "
            f"{long[1] / short[1]:.2f}x first chunk to the end, {long[2] / short[2]:.2f}x per "
            "CPU second (target >= 0.8x)"
        )


def profile_run(
    count: int, flood: Path, scratch: Path, package: Path, interval: float, out: Path
) -> None:
    harness = scratch / "profiler.py"
    harness.write_text(PROFILER)
    marks = [str(scratch / "profile-start"), str(scratch / "profile-stop")]
    command = [sys.executable, str(harness), str(interval), str(out), *marks]
    run = long_answer(count, flood, scratch, 0.0, package, command)
    print(f"profiled: {run.rate:,.0f} chunks/s (sampling every {interval * 1000:g} ms)")
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in out.read_text().splitlines():
        stack, _, number = line.rpartition(" ")
        frames, samples = stack.split(";"), int(number)
        total += samples
        own[frames[-1]] += samples
        for frame in set(frames):
            inclusive[frame] += samples
    print(f"\n{total} samples; where they were (own):")
    for frame, samples in own.most_common(25):
        print(f"  {samples / total:6.1%}  {frame}")
    print("\nwithin (inclusive):")
    for frame, samples in inclusive.most_common(45):
        print(f"  {samples / total:6.1%}  {frame}")
    frames_by_fifth(out.with_name(out.name + ".timeline"))


FRAME_PARTS = {
    "reading": "_receive_run (",
    "view flush": "flush (markdown_view",
    "parsing": "_fold_pending (",
    "rendering": "_take_waiting (",
    "screen update": "_refresh_layout (",
    "reflow": "reflow (",
    "arranging": "arrange (_arrange",
    "compositing": "_compositor_refresh (",
}
"""What a frame's time is given to, by a function seen in the stack (inclusive)."""


def frames_by_fifth(timeline: Path) -> None:
    """Frames over each fifth of the answer: how many, the median gap between two, the main
    thread's CPU time a frame and what it went to (from the samples' shares), and full
    collections. CPU time, not the clock's: other processes slow a frame, not its work."""
    writes: list[float] = []
    samples: list[tuple[float, float, str]] = []
    collections: list[tuple[float, float]] = []
    for line in timeline.read_text().splitlines():
        kind, when, rest = [*line.split(" ", 2), ""][:3]
        if kind == "W":
            writes.append(float(when))
        elif kind == "C":
            collections.append((float(when), float(rest)))
        else:
            cpu_time, _, stack = rest.partition(" ")
            samples.append((float(when), float(cpu_time), stack))
    start, span = writes[0], writes[-1] - writes[0]
    print("\nframes by fifth of the answer (the main thread's CPU ms a frame):")
    names = " ".join(f"{name:>13}" for name in ["CPU", *FRAME_PARTS])
    print(f"  {'fifth':>5} {'frames':>6} {'gap':>5}  {names}")
    for fifth in range(5):
        low, high = start + span * fifth / 5, start + span * (fifth + 1) / 5
        frames = [at for at in writes if low <= at < high]
        inside = [(cpu, stack) for at, cpu, stack in samples if low <= at < high]
        if len(frames) < 2 or len(inside) < 2:
            continue
        gap = statistics.median(b - a for a, b in itertools.pairwise(frames)) * 1000
        cpu = (inside[-1][0] - inside[0][0]) * 1000 / len(frames)
        shares = [
            sum(key in stack for _, stack in inside) / len(inside) for key in FRAME_PARTS.values()
        ]
        row = " ".join(f"{ms:13.1f}" for ms in [cpu, *(share * cpu for share in shares)])
        print(f"  {fifth + 1:>5} {len(frames):>6} {gap:5.0f}  {row}")
    for at, seconds in collections:
        print(f"full collection at {at - start:.2f} s into the answer: {seconds * 1000:.0f} ms")


def memory_run(
    count: int, flood: Path, scratch: Path, package: Path, linger: float, frames: int, out: Path
) -> None:
    harness = scratch / "tracer.py"
    harness.write_text(MEMORY_TRACER)
    marks = [str(scratch / "profile-start"), str(scratch / "profile-stop")]
    command = [sys.executable, str(harness), str(frames), str(linger), str(out), *marks]
    run = long_answer(count, flood, scratch, linger, package, command, written=out)
    print(
        f"traced: {run.rate:,.0f} chunks/s; RSS {run.peak_kb * 1024 / count:,.0f} B/chunk at "
        f"peak, {run.held_kb * 1024 / count:,.0f} held after {linger:g} s"
    )
    lines = out.read_text().splitlines()
    peak = int(lines[0].split()[1])
    print(f"traced by Python: {peak / count:,.0f} B/chunk at peak; what is held, by line:")
    print("\n".join(lines[1:60]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[20_000, 80_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--linger", type=float, default=5.0)
    parser.add_argument(
        "--package", type=Path, default=REPO, help="the directory to import acp_tui from"
    )
    parser.add_argument(
        "--against",
        type=Path,
        nargs="*",
        default=[],
        help="other directories to import acp_tui from, each run by turns with --package's",
    )
    parser.add_argument(
        "--keys",
        action="store_true",
        help="type keys while streaming, each timed to its echo",
    )
    parser.add_argument(
        "--hog", action="store_true", help="one busy process per core beside the app throughout"
    )
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--interval", type=float, default=0.002)
    parser.add_argument("--profile-out", type=Path, default=Path("long-answer.stacks"))
    parser.add_argument(
        "--trace-memory",
        type=int,
        metavar="FRAMES",
        help="one run of the shortest length under tracemalloc (FRAMES a trace), from Enter on; "
        "what is held --linger s after the answer, by file, line and traceback",
    )
    parser.add_argument("--trace-out", type=Path, default=Path("long-answer.memory"))
    args = parser.parse_args()
    with open("/proc/loadavg") as file:
        print(f"load average before: {file.read().strip()}")
    cores = os.cpu_count() or 1
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(cores)] if args.hog else []
    try:
        measure(args)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    with open("/proc/loadavg") as file:
        print(f"load average after: {file.read().strip()}")


def measure(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="acp-tui-long-") as tmp:
        scratch = Path(tmp)
        floods = {count: flood_file(count, scratch) for count in args.chunks}
        package = args.package.resolve()
        packages = [package, *(other.resolve() for other in args.against)]
        # A first run of each package fills the bytecode cache, as a user's install has it (a
        # profile of an unwarmed run is 7% compiling); not measured.
        warm = flood_file(WARM_CHUNKS, scratch)
        for each in packages:
            long_answer(WARM_CHUNKS, warm, scratch, 0.0, each)
        if args.trace_memory:
            count = min(args.chunks)
            out = args.trace_out.resolve()
            out.unlink(missing_ok=True)
            memory_run(count, floods[count], scratch, package, args.linger, args.trace_memory, out)
            return
        if args.profile:
            count = max(args.chunks)
            out = args.profile_out.resolve()
            profile_run(count, floods[count], scratch, package, args.interval, out)
            return
        runs: dict[Path, dict[int, list[Run]]] = {each: {} for each in packages}
        for _ in range(args.runs):
            for count in args.chunks:
                for each in packages:
                    run = long_answer(
                        count, floods[count], scratch, args.linger, each, keys=args.keys
                    )
                    runs[each].setdefault(count, []).append(run)
    hogs = f", beside {os.cpu_count()} busy processes" if args.hog else ""
    print(f"{args.runs} runs each, interleaved{hogs}; medians")
    for each, by_count in runs.items():
        if len(packages) > 1:
            print(f"acp_tui from {each}:")
        report(by_count)


if __name__ == "__main__":
    main()
