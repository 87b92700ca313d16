"""Process start to first frame, and to a session: the real `acp-tui`, in a terminal, as a
user starts it.

Each run starts `python -m acp_tui` (the demo agent, a fresh workspace, a fresh home) in a
pseudo-terminal of 120x40 and reads what it writes. The first frame is on screen when every
row of the terminal has been painted since the app switched to the alternate screen (cursor
moves `ESC[row;colH` counted per row): the time a user waits for a whole screen, not the time
the app thinks it drew one.

Two ways bytecode is found, each with a fresh copy of the package (so no `__pycache__` of the
checkout is used):
- cached:   everything (stdlib, dependencies, acp_tui) read from a warm `PYTHONPYCACHEPREFIX`;
- uncached: acp_tui compiled from source every run (`PYTHONDONTWRITEBYTECODE`), dependencies
            as installed (their own `__pycache__`): a checkout or a package installed without
            compiling.

Baselines run in the same way, interleaved with acp-tui: `python -c pass`, `python -c "import
textual.app"` (start to exit), and a one-widget Textual app to its first frame (the floor of
any Textual app). Medians of `--runs` runs; ratios against the baselines.

Session ready: the same start, timed to the demo agent's answer to `session/new` (from the
timestamps of acp-tui's `--transcript`), against the demo agent alone: spawned, and asked
`initialize` and `session/new` at once by the barest client.

Targets (issue 14): first frame <= 400 ms cached, <= 600 ms uncached.

`--also DIR` times the acp_tui package of another checkout too, interleaved (before/after).

Run: python bench/bench_startup.py [--runs 7] [--also DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable
from pathlib import Path

ROWS, COLUMNS = 40, 120
TIMEOUT = 20.0
ALTERNATE_SCREEN = b"\x1b[?1049h"
CURSOR_MOVE = re.compile(rb"\x1b\[(\d+);\d+H")
REPO = Path(__file__).resolve().parent.parent

HELLO_APP = """
from textual.app import App
from textual.widgets import Static

class Hello(App):
    def compose(self):
        yield Static("hello")

Hello().run()
"""


def first_frame(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from starting `argv` in a terminal to every row of its screen painted."""
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes the program
        try:
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    seen = b""
    screen_from: int | None = None
    painted: set[int] = set()
    try:
        while time.perf_counter() - started < TIMEOUT:
            readable, _, _ = select.select([fd], [], [], 0.5)
            if not readable:
                continue
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                break
            if not data:
                break
            seen += data
            if screen_from is None:
                at = seen.find(ALTERNATE_SCREEN)
                if at < 0:
                    continue
                screen_from = at + len(ALTERNATE_SCREEN)
            # A move's digits may straddle two reads: look again at what came since the start.
            painted.update(int(row) for row in CURSOR_MOVE.findall(seen, screen_from))
            if painted.issuperset(range(1, ROWS + 1)):
                return time.perf_counter() - started
        raise SystemExit(f"no whole first frame from {argv} in {TIMEOUT:g} s:\n{seen[-400:]!r}")
    finally:
        _stop(pid)
        os.close(fd)


def session_ready(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from starting `argv` (acp-tui, in a terminal) to the agent's answer to
    `session/new`, as its wire transcript (`--transcript`) timestamps it."""
    transcript = cwd.parent / "transcript.jsonl"
    transcript.unlink(missing_ok=True)
    started = time.time()
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            os.execve(argv[0], [*argv, "--transcript", str(transcript)], env)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    try:
        while time.time() - started < TIMEOUT:
            readable, _, _ = select.select([fd], [], [], 0.02)
            if readable:
                try:
                    os.read(fd, 1 << 16)
                except OSError:
                    break
            answered = _session_answered(transcript)
            if answered is not None:
                return answered - started
        raise SystemExit(f"no session from {argv} in {TIMEOUT:g} s")
    finally:
        _stop(pid)
        os.close(fd)


def _session_answered(transcript: Path) -> float | None:
    """When the answer to `session/new` was read, if it was."""
    if not transcript.exists():
        return None
    asked = None
    for line in transcript.read_text().splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            message = entry["msg"] or {}
            if entry["dir"] == "send" and message.get("method") == "session/new":
                asked = message["id"]
            elif entry["dir"] == "recv" and asked is not None and message.get("id") == asked:
                return entry["ts"]
    return None


def agent_alone(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawning the agent `argv` to its answer to `session/new`, asked at once by
    the barest client (the floor of any client's time to a session)."""
    started = time.perf_counter()
    agent = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert agent.stdin is not None and agent.stdout is not None
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": str(cwd), "mcpServers": []},
        },
    ]
    agent.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
    agent.stdin.flush()
    for line in agent.stdout:
        if json.loads(line).get("id") == 1:
            elapsed = time.perf_counter() - started
            break
    agent.stdin.close()
    agent.wait()
    return elapsed


def _stop(pid: int) -> None:
    """End the program as a closed terminal does (SIGHUP: acp-tui stops its agent first)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)  # the pty made it a session (and group) leader
    os.waitpid(pid, 0)


def process_exit(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def fresh_copy(checkout: Path, into: Path) -> Path:
    """A copy of `checkout`'s package without any bytecode; the directory to import it from."""
    shutil.copytree(
        checkout / "acp_tui", into / "acp_tui", ignore=shutil.ignore_patterns("__pycache__")
    )
    return into


def environments(scratch: Path) -> dict[str, dict[str, str]]:
    """The cached and uncached environments, both on a fresh copy of the package."""
    package = fresh_copy(REPO, scratch / "src")
    home = scratch / "home"
    home.mkdir()
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "XDG_", "TEXTUAL")) and key not in ("COLUMNS", "LINES")
    }
    base |= {"HOME": str(home), "PYTHONPATH": str(package), "TERM": "xterm-256color"}
    cache = scratch / "pycache"
    cache.mkdir()
    return {
        "cached": base | {"PYTHONPYCACHEPREFIX": str(cache)},
        "uncached": base | {"PYTHONDONTWRITEBYTECODE": "1"},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--also", type=Path, help="another checkout's acp-tui, for comparison")
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="acp-tui-startup-") as tmp:
        scratch = Path(tmp)
        workspace = scratch / "workspace"
        workspace.mkdir()
        hello = scratch / "hello.py"
        hello.write_text(HELLO_APP)
        measures: dict[str, Callable[[dict[str, str]], float]] = {
            "python -c pass": lambda env: process_exit([python, "-c", "pass"], env, workspace),
            "import textual.app": lambda env: process_exit(
                [python, "-c", "import textual.app"], env, workspace
            ),
            "textual hello, first frame": lambda env: first_frame(
                [python, str(hello)], env, workspace
            ),
            "acp-tui, first frame": lambda env: first_frame(
                [python, "-m", "acp_tui", "--cwd", str(workspace)], env, workspace
            ),
            "demo agent alone, session": lambda env: agent_alone(
                [python, "-m", "acp_tui.demo", "--no-persist"], env, workspace
            ),
            "acp-tui, session ready": lambda env: session_ready(
                [python, "-m", "acp_tui", "--cwd", str(workspace)], env, workspace
            ),
        }
        if args.also is not None:
            other = str(fresh_copy(args.also, scratch / "also"))
            measures["acp-tui --also, first frame"] = lambda env: first_frame(
                [python, "-m", "acp_tui", "--cwd", str(workspace)],
                env | {"PYTHONPATH": other},
                workspace,
            )
            measures["acp-tui --also, session ready"] = lambda env: session_ready(
                [python, "-m", "acp_tui", "--cwd", str(workspace)],
                env | {"PYTHONPATH": other},
                workspace,
            )
        envs = environments(scratch)
        for measure in measures.values():
            measure(envs["cached"])  # fills the bytecode cache
        times = {(mode, name): [] for mode in envs for name in measures}
        for _ in range(args.runs):
            for mode, env in envs.items():
                for name, measure in measures.items():
                    times[mode, name].append(measure(env))
    print(f"{args.runs} runs each, interleaved; medians")
    for mode in envs:
        medians = {name: statistics.median(times[mode, name]) for name in measures}
        print(f"\n{mode}:")
        for name, median in medians.items():
            print(f"  {name:>27}: {median * 1000:6.0f} ms")
        ours = medians["acp-tui, first frame"]
        print(f"  acp-tui / python -c pass:      {ours / medians['python -c pass']:.1f}x")
        print(f"  acp-tui / import textual.app:  {ours / medians['import textual.app']:.1f}x")
        hello = medians["textual hello, first frame"]
        print(f"  acp-tui / textual hello:       {ours / hello:.2f}x")
        target = 400 if mode == "cached" else 600
        print(f"  acp-tui first frame: {ours * 1000:.0f} ms (target <= {target} ms)")
        ready, alone = medians["acp-tui, session ready"], medians["demo agent alone, session"]
        print(f"  acp-tui session ready / first frame: {ready / ours:.2f}x")
        print(f"  acp-tui session ready / agent alone: {ready / alone:.2f}x")
        if args.also is not None:
            also = medians["acp-tui --also, first frame"]
            print(f"  --also / textual hello:        {also / hello:.2f}x")
            also_ready = medians["acp-tui --also, session ready"]
            print(f"  --also session ready / agent alone: {also_ready / alone:.2f}x")


if __name__ == "__main__":
    main()
