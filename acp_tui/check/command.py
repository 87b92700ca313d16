"""`acp-tui check [--protocol-version 1|2] [--json] [--junit FILE] [--prompt TEXT] -- AGENT`"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from acp_tui.check.cases import CALL_TIMEOUT, TURN_TIMEOUT
from acp_tui.check.report import as_json, junit, text
from acp_tui.check.run import DEFAULT_PROMPT, run_check
from acp_tui.transport.launcher import LaunchError

EXIT_BROKEN = 1
"""A MUST of the protocol does not hold."""


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-tui check",
        usage="acp-tui check [--protocol-version 1|2] [--json] [--junit FILE] [--prompt TEXT] "
        "[--auth METHOD_ID] -- AGENT COMMAND ...",
        description="Run a fixed series of protocol cases against an ACP agent in a scratch "
        "workspace and report what it gets wrong, with the rule and the line. Exit 0 only "
        "when every MUST holds.",
    )
    parser.add_argument("--protocol-version", type=int, choices=(1, 2), default=1)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML")
    parser.add_argument(
        "--prompt",
        default=DEFAULT_PROMPT,
        help="the prompt of the cases that need a model (a prompt turn, a cancel mid-turn)",
    )
    parser.add_argument("--auth", metavar="METHOD_ID", help="sign in with this method first")
    parser.add_argument(
        "--call-timeout",
        type=float,
        default=CALL_TIMEOUT,
        metavar="SECONDS",
        help=f"how long a request may take (default: {CALL_TIMEOUT:g})",
    )
    parser.add_argument(
        "--turn-timeout",
        type=float,
        default=TURN_TIMEOUT,
        metavar="SECONDS",
        help=f"how long a prompt turn may take (default: {TURN_TIMEOUT:g})",
    )
    return parser


async def check(argv: Sequence[str], agent_command: list[str]) -> int:
    args = parser().parse_args(argv)
    if not agent_command:
        print("acp-tui check: give the agent's command after --", file=sys.stderr)
        return 2
    try:
        report = await run_check(
            agent_command,
            version=args.protocol_version,
            prompt=args.prompt,
            auth=args.auth,
            call_timeout=args.call_timeout,
            turn_timeout=args.turn_timeout,
        )
    except LaunchError as error:
        print(f"acp-tui check: {error}", file=sys.stderr)
        return 2
    print(as_json(report) if args.json else text(report), end="")
    if args.junit is not None:
        args.junit.write_text(junit(report), encoding="utf-8")
    return 0 if report.passed else EXIT_BROKEN
