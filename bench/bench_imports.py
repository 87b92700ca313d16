"""What each lazy import of acp-tui keeps off the start-up path: the milliseconds it takes to
import, in a fresh process that has already imported what that start-up path imports.

Two paths start acp-tui, so two baselines (and two more, for what runs an agent):
- `tui`: the first frame (`acp_tui.ui.app` and what the first screen needs), for the imports
  made after it (the conversation, the dialogs, Markdown, the agent picker, ...);
- `cli`: the command line read and the agent spawned ahead (`acp_tui.cli`), for the imports
  made after that (the TUI itself, headless mode, asyncio, the protocol's types, ...);
- `agent`: what runs an agent (`acp_tui.session.client`), for what only a remote agent needs;
- `headless`: headless mode (`acp_tui.headless.run`), for what only some of its runs need.

Each figure is the median of `--runs` processes; the baseline's own import is not counted.
bench/README.md, "Lazy imports", lists them. Run: python bench/bench_imports.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BASELINES = {
    "tui": "import acp_tui.ui.app",
    "cli": "import acp_tui.cli",
    "agent": "import acp_tui.session.client",
    "headless": "import acp_tui.headless.run",
}

LAZY = [
    ("cli", "acp_tui.ui.app"),
    ("cli", "acp_tui.headless.run"),
    ("cli", "acp_tui.check.live"),
    ("cli", "asyncio"),
    ("cli", "acp_tui.checkpoints.checkpointer"),
    ("cli", "acp_tui.registry"),
    ("cli", "acp_tui.registry.start"),
    ("cli", "acp_tui.protocol.methods"),
    ("cli", "tomllib"),
    ("cli", "ssl"),
    ("cli", "importlib.resources"),
    ("cli", "difflib"),
    ("cli", "tempfile"),
    ("tui", "acp_tui.conversation.conversation"),
    ("tui", "acp_tui.conversation.agent_link"),
    ("tui", "acp_tui.conversation.shared"),
    ("tui", "acp_tui.conversation.budget"),
    ("tui", "acp_tui.conversation.sign_in"),
    ("tui", "acp_tui.registry.choices"),
    ("tui", "acp_tui.ui.screens"),
    ("tui", "acp_tui.ui.screens.agent_picker"),
    ("tui", "acp_tui.ui.screens.changes"),
    ("tui", "acp_tui.ui.screens.rewind"),
    ("tui", "acp_tui.ui.widgets.permission_panel"),
    ("tui", "acp_tui.ui.widgets.elicitation_panel"),
    ("tui", "acp_tui.ui.render.markdown"),
    ("tui", "rich.syntax"),
    ("tui", "pygments.lexers"),
    ("tui", "PIL.Image"),
    ("tui", "textual_image.widget"),
    ("tui", "urllib.request"),
    ("agent", "acp_tui.remote.client"),
    ("agent", "acp_tui.remote.websocket"),
    ("agent", "acp_tui.remote.streamable_http"),
    ("headless", "acp_tui.checkpoints.rewind"),
    ("headless", "acp_tui.records.export"),
    ("headless", "mimetypes"),
]

PROBE = """
import time
{baseline}
started = time.perf_counter()
import {module}
print(time.perf_counter() - started)
"""


def cost(baseline: str, module: str) -> float:
    code = PROBE.format(baseline=BASELINES[baseline], module=module)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return float(done.stdout.strip()) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    print(f"| after | import | ms (median of {args.runs}) |")
    print("|---|---|---:|")
    for baseline, module in LAZY:
        # Interleaved with nothing else: each run is a fresh process, cached bytecode.
        figures = [cost(baseline, module) for _ in range(args.runs)]
        print(f"| {baseline} | `{module}` | {statistics.median(figures):.1f} |")


if __name__ == "__main__":
    main()
