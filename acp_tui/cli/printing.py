"""What the subcommands print: warnings on stderr, tables and times on stdout."""

from __future__ import annotations

import sys
from datetime import datetime

from acp_tui.config import Config, load_config


def warn(message: str) -> None:
    print(f"acp-tui: {message}", file=sys.stderr)


def config() -> Config:
    """The config file, its problems said on stderr."""
    loaded = load_config()
    for problem in loaded.problems:
        print(f"acp-tui: config: {problem}", file=sys.stderr)
    return loaded


def when(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment is not None else "-"


def print_table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> None:
    if not rows:
        print("(none)")
        return
    table = [header, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[-1]]).rstrip())
