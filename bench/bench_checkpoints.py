"""How long a turn's checkpoint takes on a big workspace, against `git` itself.

A workspace of 10,000 files and 200 MB (source-like text in 100 directories, and some binary
files) is made once, with a plain copy of it that is an ordinary git repository. Each round:

- git, first:       `git add -A && git write-tree` in the copy, on a fresh index and object
                    store (what git itself needs to take in every file once);
- acp-tui, first:   the first checkpoint of a fresh shadow repository;
- then, several times, the same small change in both trees (a few files edited, one added,
  one deleted) and
- git, next:        `git add -A && git write-tree` in the copy;
- acp-tui, next:    the checkpoint before a turn (`SessionCheckpoints.begin`).

The two are interleaved in one process, so that a noisy machine slows them alike. A last
run measures the event loop while a checkpoint is taken the way the TUI takes it (through
`Checkpointer`, in a worker thread): the longest the loop was kept from running.

Prints the medians and the ratios. Targets: acp-tui next <= 300 ms and <= 1.5x git next;
acp-tui first <= 2x git first; no stall of the event loop over 50 ms.

Run: python bench/bench_checkpoints.py [--files 10000] [--megabytes 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from acp_tui.checkpoints import CheckpointStore, SessionCheckpoints
from acp_tui.checkpoints.checkpointer import Checkpointer
from acp_tui.session.state import SessionState

WORDS = ["def", "return", "self", "value", "items", "for", "in", "if", "else", "import"]
WORDS += ["from", "class", "while", "with", "as", "None", "True", "print", "len", "range"]
NEXT_RUNS = 5


def make_workspace(root: Path, files: int, megabytes: int, seed: int = 11) -> None:
    """`files` files of `megabytes` MB in all: text of varied sizes, and 1 in 50 binary."""
    rng = random.Random(seed)
    total = megabytes * 1_000_000
    sizes = [rng.lognormvariate(0, 1) for _ in range(files)]
    scale = total / sum(sizes)
    line_pool = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) + "\n" for _ in range(4000)
    ]
    for index, weight in enumerate(sizes):
        size = max(64, int(weight * scale))
        directory = root / f"pkg{index % 100:02d}" / f"mod{index // 100 % 10}"
        directory.mkdir(parents=True, exist_ok=True)
        if index % 50 == 0:
            (directory / f"blob{index}.bin").write_bytes(rng.randbytes(size))
            continue
        chunks, length = [], 0
        while length < size:
            line = rng.choice(line_pool)
            chunks.append(line)
            length += len(line)
        (directory / f"file{index}.py").write_text("".join(chunks))


def change(root: Path, step: int) -> None:
    """A turn's worth of changes: five files edited, one added, one deleted."""
    for index in range(5):
        path = root / f"pkg{(step * 7 + index) % 100:02d}" / "mod1" / f"file{101 + index}.py"
        if path.exists():
            with path.open("a") as file:
                file.write(f"# turn {step}\n")
    (root / f"new_{step}.py").write_text(f"print({step})\n")
    old = root / f"new_{step - 1}.py"
    if old.exists():
        old.unlink()


def plain_git(*args: str, cwd: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def git_add_write_tree(copy: Path) -> float:
    start = time.perf_counter()
    plain_git("add", "-A", cwd=copy)
    plain_git("write-tree", cwd=copy)
    return time.perf_counter() - start


def fresh_git(copy: Path) -> None:
    shutil.rmtree(copy / ".git", ignore_errors=True)
    plain_git("init", "-q", cwd=copy)


def timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


async def loop_stall(workspace: Path, store_root: Path) -> float:
    """The longest the event loop went without running while a checkpoint was taken through
    the `Checkpointer` (as the TUI does), in seconds."""
    checkpointer = Checkpointer(workspace, root=store_root)

    class Session:
        id = "bench-loop"
        state = SessionState()

        def notice(self, *args: object) -> None:
            pass

    worst = 0.0
    done = False

    async def tick() -> None:
        nonlocal worst
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            worst = max(worst, now - last - 0.005)
            last = now

    ticker = asyncio.create_task(tick())
    await checkpointer.before_turn(Session(), "bench")  # type: ignore[arg-type]
    change(workspace, 99)
    await checkpointer.after_turn(Session())  # type: ignore[arg-type]
    done = True
    await ticker
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        workspace, copy = base / "workspace", base / "copy"
        start = time.perf_counter()
        make_workspace(workspace, args.files, args.megabytes)
        shutil.copytree(workspace, copy)
        print(
            f"workspace: {args.files:,} files, {args.megabytes} MB "
            f"(made in {time.perf_counter() - start:.1f} s); {args.rounds} rounds, "
            f"{NEXT_RUNS} turns each"
        )
        times: dict[str, list[float]] = {
            "git first": [],
            "acp-tui first": [],
            "git next": [],
            "acp-tui next": [],
        }
        step = 0
        for round_ in range(args.rounds):
            fresh_git(copy)
            store_root = base / f"store{round_}"
            times["git first"].append(git_add_write_tree(copy))
            store = CheckpointStore.open(workspace, store_root)
            checkpoints = SessionCheckpoints(store, f"bench-{round_}")
            times["acp-tui first"].append(timed(partial(checkpoints.begin, 1, "first")))
            for turn in range(2, NEXT_RUNS + 2):
                step += 1
                change(workspace, step)
                change(copy, step)
                times["git next"].append(git_add_write_tree(copy))
                times["acp-tui next"].append(timed(partial(checkpoints.begin, turn, "next")))
            shutil.rmtree(store_root)
        stall = asyncio.run(loop_stall(workspace, base / "store-loop"))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, median in medians.items():
        print(f"{name:>14}: {median * 1000:8.1f} ms (median)")
    first = medians["acp-tui first"] / medians["git first"]
    following = medians["acp-tui next"] / medians["git next"]
    print(f"acp-tui first / git first: {first:.2f}x (target <= 2x)")
    print(
        f"acp-tui next / git next:   {following:.2f}x (target <= 1.5x; "
        f"{medians['acp-tui next'] * 1000:.0f} ms, target <= 300 ms)"
    )
    print(f"longest event-loop stall while checkpointing: {stall * 1000:.1f} ms (target <= 50 ms)")


if __name__ == "__main__":
    main()
