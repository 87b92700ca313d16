"""`python -m acp_tui.demo`: the demo agent, serving ACP on stdin/stdout until stdin closes.

Any ACP client can run it (`acp-tui` starts it when given no agent command). Logs go to stderr;
stdout carries nothing but ACP messages.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from pathlib import Path

from acp_tui.demo.agent import DemoAgent
from acp_tui.demo.store import SessionStore, default_data_dir
from acp_tui.transport.connection import Connection, open_stdio


def _env_speed() -> float:
    try:
        return float(os.environ.get("ACP_TUI_DEMO_SPEED") or 1)
    except ValueError:
        return 1.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m acp_tui.demo",
        description="A scripted ACP agent (v1 and the v2 draft) for trying out ACP clients. "
        "Type /help in the client to see what it can do.",
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=_env_speed(),
        help="pace factor: 2 streams twice as fast, 0 removes every delay "
        "(default: $ACP_TUI_DEMO_SPEED or 1)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="where sessions are kept (default: $XDG_DATA_HOME/acp-tui/demo-sessions)",
    )
    parser.add_argument("--no-persist", action="store_true", help="keep sessions in memory only")
    parser.add_argument(
        "--max-protocol",
        type=int,
        choices=(1, 2),
        default=2,
        help="the newest protocol version to offer (default: 2, the v2 draft)",
    )
    return parser.parse_args(argv)


async def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    store = SessionStore(None if args.no_persist else (args.data_dir or default_data_dir()))
    agent = DemoAgent(speed=max(0.0, args.speed), store=store, max_version=args.max_protocol)
    reader, writer = await open_stdio()
    connection = Connection(
        reader,
        writer,
        agent,
        on_problem=lambda problem: print(f"acp-tui demo: {problem}", file=sys.stderr),
    )
    agent.connection = connection
    await connection.run()
    await agent.shutdown()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
