"""`acp-tui check [options] -- AGENT`: the protocol cases against an agent.

Exit status: 0 every MUST holds; 1 a MUST is broken, or the agent gave no usable answer to
`initialize`; 2 a usage error (no command, an agent that cannot start, a report file that
cannot be written); 3 the agent does not speak the version asked for (`--protocol-version 2`
answered with 1): nothing of it was checked."""

from __future__ import annotations

import argparse
import asyncio
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from acp_tui.check.context import Options
from acp_tui.check.probe import Tap
from acp_tui.check.report import as_json, junit, text
from acp_tui.check.run import run_check
from acp_tui.remote.target import RemoteTarget, check_url
from acp_tui.transport.launcher import LaunchError

EXIT_BROKEN = 1
"""A MUST of the protocol does not hold."""
EXIT_USAGE = 2
EXIT_UNSUPPORTED = 3
"""The agent does not speak the version under test."""


class _Usage(Exception):
    pass


def run(args: argparse.Namespace, agent_command: list[str]) -> int:
    try:
        return asyncio.run(_check(args, agent_command))
    except _Usage as error:
        print(f"acp-tui check: {error}", file=sys.stderr)
        return EXIT_USAGE


async def _check(args: argparse.Namespace, agent_command: list[str]) -> int:
    remote = _remote(args, agent_command)
    if not agent_command and remote is None:
        raise _Usage("give the agent's command after --, or --connect URL")
    options = Options(
        version=args.protocol_version,
        prompt=args.prompt,
        long_prompt=args.long_prompt,
        tool_prompt=args.tool_prompt,
        env=_env(args.env),
        auth=args.auth,
        mode=args.mode,
        cwd=args.cwd,
        call_timeout=args.call_timeout,
        turn_timeout=args.turn_timeout,
        remote=remote,
    )
    if args.cwd is not None and not args.cwd.is_dir():
        raise _Usage(f"--cwd {args.cwd}: not a directory")
    with ExitStack() as files:
        # Files that cannot be written are said before the run, not after it.
        junit_file = _open(files, args.junit, "--junit")
        transcript = _open(files, args.transcript, "--transcript")
        try:
            argv = agent_command or [args.connect]
            report = await run_check(argv, options, Tap(transcript, args.verbose))
        except LaunchError as error:
            raise _Usage(str(error)) from None
        print(as_json(report) if args.json else text(report), end="")
        if junit_file is not None:
            junit_file.write(junit(report))
    if report.outcome == "unsupported":
        return EXIT_UNSUPPORTED
    return 0 if report.passed else EXIT_BROKEN


def _remote(args: argparse.Namespace, agent_command: list[str]) -> RemoteTarget | None:
    """The remote agent `--connect` names (its token from `--token-file`, else the
    environment), or None."""
    if args.connect is None:
        if args.token_file is not None:
            raise _Usage("--token-file is for --connect URL")
        return None
    if agent_command:
        raise _Usage("give --connect URL or an agent command after --, not both")
    wrong = check_url(args.connect)
    if wrong is not None:
        raise _Usage(f"--connect: {wrong}")
    return RemoteTarget(args.connect, args.token_file)


def _open(files: ExitStack, path: Path | None, option: str) -> IO[str] | None:
    if path is None:
        return None
    try:
        return files.enter_context(path.open("w", encoding="utf-8"))
    except OSError as error:
        raise _Usage(f"{option} {path}: {error.strerror or error}") from None


def _env(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise _Usage(f"--env {pair!r}: give NAME=VALUE")
        env[name] = value
    return env
