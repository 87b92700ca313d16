"""One long answer through acp-tui and through its peers, end to end, as `bench_long_answer.py`
runs it: the real app in a pseudo-terminal of 120x40 on the flood agent, timed from Enter to
the last chunk on screen.

Peers:
- textual: `peer_markdown_app.py`, a plain Textual app streaming the answer through Textual's
           own `Markdown` widget and `MarkdownStream` (as Textual's documentation shows), in an
           anchored `VerticalScroll`;
- Toad:    the closest peer (Python, Textual), only where it installs: it needs Python >= 3.14;
           otherwise a note says why it was skipped.

The apps run by turns on each length, `--runs` times; medians, and each app's time as a
multiple of acp-tui's (1.0 is as fast; 2.0 takes twice as long). Target (issue 29): reported.

Run: python bench/bench_peers.py [--chunks 2000 8000] [--runs 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench_long_answer import REPO, Run, flood_file, long_answer

PEERS: dict[str, list[str] | None] = {
    "acp-tui": None,
    "textual": [sys.executable, str(REPO / "bench" / "peer_markdown_app.py")],
}


def toad_note() -> str:
    """Why Toad is not among the peers here."""
    toad = shutil.which("toad")
    return (
        f"Toad: skipped (it needs Python >= 3.14; this is Python {sys.version.split()[0]}, "
        f"and `toad` is {'on PATH but not run by this bench' if toad else 'not installed'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, nargs="+", default=[2_000, 8_000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(toad_note())
    with open("/proc/loadavg") as file:
        print(f"load average before: {file.read().strip()}")
    runs: dict[str, dict[int, list[Run]]] = {name: {} for name in PEERS}
    with tempfile.TemporaryDirectory(prefix="acp-tui-peers-") as tmp:
        scratch = Path(tmp)
        floods = {count: flood_file(count, scratch) for count in args.chunks}
        for _ in range(args.runs):
            for count in args.chunks:
                for name, program in PEERS.items():
                    run = long_answer(count, floods[count], scratch, 1.0, REPO, program=program)
                    runs[name].setdefault(count, []).append(run)
    with open("/proc/loadavg") as file:
        print(f"load average after: {file.read().strip()}")
    print(f"{args.runs} runs each, by turns; medians")
    for count in args.chunks:
        ours = statistics.median(run.seconds for run in runs["acp-tui"][count])
        for name, by_count in runs.items():
            done = by_count[count]
            seconds = statistics.median(run.seconds for run in done)
            stall = statistics.median(run.stall for run in done) * 1000
            peak = statistics.median(run.peak_kb for run in done) * 1024 / count
            print(
                f"{count:>7,} chunks, {name:>8}: {count / seconds:7,.0f} chunks/s "
                f"({seconds:6.2f} s, {seconds / ours:6.2f}x acp-tui's), "
                f"worst stall {stall:5.0f} ms, RSS {peak:6.0f} B/chunk at peak"
            )


if __name__ == "__main__":
    main()
