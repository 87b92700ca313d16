"""`acp-tui [options] [-p PROMPT ...] [-- AGENT COMMAND ...]`

With `-p` it runs headless; without, the TUI. Without an agent command it runs the built-in
demo agent, so a new user sees everything acp-tui does at once.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from acp_tui import __version__
from acp_tui.session.controller import SUPPORTED_VERSIONS, ClientOptions

DEMO_AGENT = [sys.executable, "-m", "acp_tui.demo"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-tui",
        usage="acp-tui [options] [-p PROMPT ...] [-- AGENT COMMAND ...]",
        description="A terminal client for AI coding agents that speak the Agent Client "
        "Protocol. Without an agent command it runs the built-in demo agent.",
    )
    parser.add_argument("--version", action="version", version=f"acp-tui {__version__}")
    parser.add_argument(
        "--cwd", type=Path, default=Path.cwd(), help="the workspace (default: here)"
    )
    parser.add_argument(
        "-p",
        "--prompt",
        action="append",
        dest="prompts",
        metavar="PROMPT",
        help="run headless: send PROMPT as one turn (repeat for more turns in one session)",
    )
    parser.add_argument(
        "--output-format",
        choices=("text", "jsonl"),
        default="text",
        help="headless output: the agent's text as it streams, or one JSON object per change",
    )
    parser.add_argument(
        "--permission",
        choices=("ask", "allow", "reject"),
        default="ask",
        help="how to answer the agent's permission requests (headless has no one to ask: "
        "ask rejects)",
    )
    parser.add_argument("--transcript", type=Path, help="record every JSON-RPC message here")
    parser.add_argument("--auth", metavar="METHOD_ID", help="sign in with this method first")
    parser.add_argument("--mode", metavar="MODE_ID", help="switch the session to this mode")
    parser.add_argument(
        "--protocol-version",
        type=int,
        choices=SUPPORTED_VERSIONS,
        default=1,
        help="the ACP version to offer (2 is the draft)",
    )
    parser.add_argument(
        "--allow-path",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="also let the agent read and write in DIR (repeatable; default: only the workspace)",
    )
    parser.add_argument("--no-fs", action="store_true", help="do not serve fs/* to the agent")
    parser.add_argument(
        "--no-terminal", action="store_true", help="do not run commands for the agent"
    )
    return parser


def split_agent_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Our options before `--`, the agent's command after it."""
    args = list(argv)
    if "--" in args:
        cut = args.index("--")
        return args[:cut], args[cut + 1 :]
    return args, []


def main(argv: Sequence[str] | None = None) -> int:
    ours, agent = split_agent_command(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(ours)
    client_options = ClientOptions(
        cwd=args.cwd.resolve(),
        protocol_version=args.protocol_version,
        fs=not args.no_fs,
        terminal=not args.no_terminal,
        allow_paths=[path.resolve() for path in args.allow_path],
        transcript=args.transcript,
    )
    command = agent or DEMO_AGENT
    if args.prompts:
        from acp_tui.headless import HeadlessOptions, run_headless

        options = HeadlessOptions(
            prompts=args.prompts,
            output_format=args.output_format,
            permission=args.permission,
            auth=args.auth,
            mode=args.mode,
        )
        return asyncio.run(run_headless(command, client_options, options))
    from acp_tui.ui.app import run_tui

    return run_tui(command, client_options, permission=args.permission)
