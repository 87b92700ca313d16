"""`acp-tui [options] [-p PROMPT ...] [-- AGENT COMMAND ...]`

With `-p` it runs headless; without, the TUI. The agent is the command after `--`, else the
config file's `--agent NAME`, else its `default_agent`, else the built-in demo agent, so a new
user sees everything acp-tui does at once. Also `acp-tui agents`, `acp-tui sessions`,
`acp-tui export ID` and `acp-tui logout` (see `acp_tui.commands`).
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from acp_tui import __version__
from acp_tui.config import (
    DEMO_COMMAND,
    AgentConfig,
    ConfigError,
    Startup,
    config_path,
    load_config,
)
from acp_tui.session.options import SUPPORTED_VERSIONS, ClientOptions
from acp_tui.transport.head_start import HeadStart

DEMO_AGENT = DEMO_COMMAND
SUBCOMMANDS = ("agents", "sessions", "export", "logout", "providers", "check")
HEADLESS_SWITCH_INTERVAL = 0.0005
"""Seconds the event loop's thread, busy with a flood, keeps the GIL from a thread that waits
for it (Python's default: 5 ms): the record's writer and the checkpoints' git wait for it
each time one of their calls returns."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-tui",
        usage="acp-tui [options] [-p PROMPT ...] [-- AGENT COMMAND ...]\n"
        "       acp-tui agents | sessions [--agent NAME] | export ID [-o FILE]"
        " | logout [--agent NAME]\n"
        "       acp-tui providers [--agent NAME]\n"
        "       acp-tui check [--protocol-version 1|2] [--json] [--junit FILE] -- AGENT ...",
        description="A terminal client for AI coding agents that speak the Agent Client "
        "Protocol. Without an agent command it runs the configured default agent, or the "
        "built-in demo agent.",
        epilog="commands: `agents` lists the configured agents, `sessions` the sessions you "
        "can --resume, `export ID` writes one as Markdown, `logout` signs out of the agent, "
        "`providers` says where its model requests go, `check` tells an agent's author "
        "what it gets wrong (each takes --help).",
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
        "--agent",
        metavar="NAME",
        help="run the agent of this name from the config file, else the ACP Registry's agent "
        "of this id (installed first, after asking)",
    )
    parser.add_argument(
        "--yes", action="store_true", help="install a registry agent without asking (scripts)"
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="continue a session (its id, or a prefix of it; without one: the latest with "
        "this agent in this workspace)",
    )
    parser.add_argument(
        "--fork",
        action="store_true",
        help="with --resume: go on in a fork of that session (session/fork), which stays as "
        "it was: e.g. -p 'summarize this' without adding to it",
    )
    parser.add_argument(
        "--permission",
        choices=("ask", "allow", "reject"),
        default=None,
        help="how to answer the agent's permission requests (default: the config's, else "
        "ask; headless has no one to ask: ask rejects)",
    )
    parser.add_argument(
        "--elicitation",
        choices=("off", "decline", "cancel"),
        default="off",
        help="headless: off (the default) offers the agent no questions (elicitation), so it "
        "asks in its answer or decides itself; decline or cancel offers them and answers so",
    )
    parser.add_argument("--transcript", type=Path, help="record every JSON-RPC message here")
    parser.add_argument("--auth", metavar="METHOD_ID", help="sign in with this method first")
    parser.add_argument("--mode", metavar="MODE_ID", help="switch the session to this mode")
    parser.add_argument("--model", metavar="MODEL", help="switch the session to this model")
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
    parser.add_argument(
        "--startup-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="give up if the agent has not answered initialize and session/new by then "
        "(default: 30)",
    )
    parser.add_argument(
        "--cancel-grace",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="headless: how long an agent gets to confirm a cancel before it is stopped "
        "(default: 10)",
    )
    parser.add_argument(
        "--no-record", action="store_true", help="keep no local record of the conversation"
    )
    parser.add_argument(
        "--no-checkpoints",
        action="store_true",
        help="take no checkpoint of the workspace around each turn (`acp-tui changes`)",
    )
    parser.add_argument(
        "--config-path", action="store_true", help="print the config file's path and exit"
    )
    parser.add_argument(
        "--init-config",
        action="store_true",
        help="write a config file with examples for common agents (if there is none) and exit",
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
    ours, agent_command = split_agent_command(sys.argv[1:] if argv is None else argv)
    if ours and ours[0] in ("changes", "rewind"):
        from acp_tui.checkpoints import commands as checkpoint_commands

        return checkpoint_commands.run(ours[0], ours[1:])
    if ours and ours[0] in SUBCOMMANDS:
        from acp_tui import commands

        return commands.run(ours[0], ours[1:], agent_command)
    parser = build_parser()
    for arg in ours:
        if not _utf8(arg):  # a prompt typed in another encoding: JSON cannot carry it
            parser.error(f"{os.fsencode(arg)!r} is not valid UTF-8 text")
    args = parser.parse_args(ours)
    if args.fork and args.resume is None:
        parser.error("--fork forks the session --resume opens: give both")
    if args.config_path:
        print(config_path())
        return 0
    if args.init_config:
        from acp_tui.commands import init_config

        return init_config()
    config = load_config()
    for problem in config.problems:
        print(f"acp-tui: config: {problem}", file=sys.stderr)
    try:
        agent = config.agent(args.agent, agent_command)
    except ConfigError as error:
        if not (args.agent and not agent_command):
            print(f"acp-tui: {error}", file=sys.stderr)
            return 2
        # Not configured: maybe an agent of the ACP Registry (a configured one always wins).
        from acp_tui.registry import InstallError
        from acp_tui.registry.start import registry_agent

        try:
            agent = registry_agent(args.agent, yes=args.yes, unknown=error)
        except ConfigError as unknown:
            print(f"acp-tui: {unknown}", file=sys.stderr)
            return 2
        except InstallError as failed:
            print(f"acp-tui: {failed}", file=sys.stderr)
            return 1
    permission = config.permission_mode(agent, args.permission)
    startup = Startup(
        config,
        agent,
        permission,
        resume=args.resume,
        fork=args.fork,
        record=not args.no_record,
        auth=args.auth,
        mode=args.mode,
        model=args.model,
    )
    client_options = ClientOptions(
        cwd=args.cwd.resolve(),
        protocol_version=args.protocol_version,
        fs=not args.no_fs,
        terminal=not args.no_terminal,
        allow_paths=[path.resolve() for path in [*args.allow_path, *config.allow_paths]],
        mcp_servers=agent.mcp_servers,
        providers=agent.providers,
        env=dict(agent.env),
        transcript=args.transcript,
        # An npx or uvx registry agent may fetch its package first: it gets longer.
        startup_timeout=max(args.startup_timeout, agent.startup_timeout or 0),
    )
    # The agent starts up beside acp-tui importing the rest of itself, and painting its first
    # screen, rather than after. Until the event loop takes SIGTERM and SIGHUP over, they end
    # acp-tui through `finally`, which stops that agent.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:  # `nohup` keeps ignoring SIGHUP
            signal.signal(sig, _exit_by_signal)
    head_start = client_options.head_start = HeadStart(
        agent.command, client_options.cwd, client_options.env
    )
    try:
        return _run(args, agent, permission, startup, client_options)
    finally:
        head_start.discard()


def _utf8(text: str) -> bool:
    """Whether `text` came from valid UTF-8 (undecodable bytes of argv are surrogates)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _exit_by_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def _run(
    args: argparse.Namespace,
    agent: AgentConfig,
    permission: str,
    startup: Startup,
    client_options: ClientOptions,
) -> int:
    """Headless with `-p`, else the TUI; the exit status."""
    if args.prompts:
        import asyncio  # after the agent's head start: it is a tenth of acp-tui's start-up

        sys.setswitchinterval(HEADLESS_SWITCH_INTERVAL)

        from acp_tui.checkpoints.checkpointer import Checkpointer

        checkpoints = None
        if not args.no_checkpoints:
            checkpoints = Checkpointer(client_options.cwd, ignore=[client_options.transcript])
            # The first turn's checkpoint is staged beside the agent starting up (and acp-tui
            # importing the rest of itself), not between the session opening and the prompt.
            checkpoints.stage_ahead()
        from acp_tui.headless.run import HeadlessOptions, run_headless

        client_options.terminal_auth = sys.stdin.isatty()
        options = HeadlessOptions(
            prompts=args.prompts,
            output_format=args.output_format,
            permission=permission,
            elicitation=args.elicitation,
            auth=args.auth,
            mode=args.mode,
            model=args.model,
            cancel_grace=args.cancel_grace,
            agent=agent,
            resume=args.resume,
            fork=args.fork,
            record=not args.no_record,
            checkpoints=checkpoints,
        )
        try:
            code = asyncio.run(run_headless(agent.command, client_options, options))
        finally:
            if checkpoints is not None:  # the run closes it, unless it ended before it began
                checkpoints.close()
        # The interpreter's exit collects the whole heap (a whole turn's state, after a flood)
        # more than once; what is still alive now is freed by reference counting anyway.
        # (`bench_headless.py`, interleaved: chunks 375 -> 331-350 ms, mixed 831 -> 742-776.)
        gc.freeze()
        return code
    # Off until the first frame: all the TUI's start-up makes lives as long as it does (see
    # `acp_tui.ui.collector`, which turns it on).
    gc.disable()
    from acp_tui.ui.app import run_tui

    client_options.terminal_auth = True
    return run_tui(
        agent.command,
        client_options,
        permission=permission,
        startup=startup,
        checkpoints=not args.no_checkpoints,
    )
