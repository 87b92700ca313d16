"""`acp-tui check [--protocol-version 1|2] [--json] [--junit FILE] [--prompt TEXT] -- AGENT`:
the protocol cases against an agent; exit 0 only when every MUST holds."""

from __future__ import annotations

import argparse
import asyncio
import sys

from acp_tui.check.report import as_json, junit, text
from acp_tui.check.run import run_check
from acp_tui.transport.launcher import LaunchError

EXIT_BROKEN = 1
"""A MUST of the protocol does not hold."""


def run(args: argparse.Namespace, agent_command: list[str]) -> int:
    return asyncio.run(_check(args, agent_command))


async def _check(args: argparse.Namespace, agent_command: list[str]) -> int:
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
