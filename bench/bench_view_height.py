"""Does a growing Markdown view's frame cost depend on how tall the view already is?

A headless app (`App.run_test`, 120x40) holds one `MarkdownView` filled with the demo's
Markdown showcase to a height (finished blocks, every height exact), then streams into it: a
word is appended, the view flushed and the app given a frame, 60 times. The figure is the
main thread's CPU time a frame (`time.process_time`), median of the 60, at a short height and
at a tall one, interleaved, and the tall one as a multiple of the short.

A long answer is one view however tall it grows: this says whether a frame of its stream costs
more the longer it is.

Run: python bench/bench_view_height.py [--short 900] [--tall 3900] [--runs 3] [--package DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time


async def frame_cost(height: int) -> float:
    """CPU seconds a frame (median) of a view `height` lines tall taking a word a frame."""
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll

    from acp_tui.demo.texts import MARKDOWN_SHOWCASE
    from acp_tui.ui.widgets.markdown_view import MarkdownView

    class OneView(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield MarkdownView()

        def on_mount(self) -> None:
            self.query_one(VerticalScroll).anchor()

    app = OneView()
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(MarkdownView)
        await pilot.pause()
        while view._line_count() < height:
            view.append(MARKDOWN_SHOWCASE + "\n\n")
            view.flush()
            await pilot.pause()
        while not view.settled:
            await pilot.pause()
        costs = []
        for word in range(60):
            started = time.process_time()
            view.append(f"word{word} ")
            view.flush()
            await pilot.pause()
            costs.append(time.process_time() - started)
    return statistics.median(costs)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=900)
    parser.add_argument("--tall", type=int, default=3900)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--package", help="the directory to import acp_tui from")
    args = parser.parse_args()
    if args.package:
        sys.path.insert(0, args.package)
    short: list[float] = []
    tall: list[float] = []
    for _ in range(args.runs):
        short.append(await frame_cost(args.short))
        tall.append(await frame_cost(args.tall))
    low, high = statistics.median(short), statistics.median(tall)
    print(f"{args.short:>6} lines: {low * 1000:.2f} ms CPU a frame (runs {_ms(short)})")
    print(f"{args.tall:>6} lines: {high * 1000:.2f} ms CPU a frame (runs {_ms(tall)})")
    print(f"tall / short: {high / low:.2f}x")


def _ms(values: list[float]) -> str:
    return ", ".join(f"{value * 1000:.2f}" for value in values)


if __name__ == "__main__":
    asyncio.run(main())
