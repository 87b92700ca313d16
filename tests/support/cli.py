"""The real `acp-tui` command, run as a user would, with its own config and data dirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ACP_TUI = [sys.executable, "-m", "acp_tui"]


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `acp-tui ARGS` in `home`, with config and data under it and a fast demo agent."""
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "ACP_TUI_DEMO_SPEED": "0",
    }
    return subprocess.run(
        [*ACP_TUI, *args], capture_output=True, text=True, env=env, cwd=home, timeout=60
    )
