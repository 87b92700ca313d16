"""`acp-tui [options] [-p PROMPT ...] [-- AGENT COMMAND ...]`, and the dispatch of
`acp-tui SUBCOMMAND` to its module.

With `-p` it runs headless; without, the TUI. The agent is the command after `--`, else the
config file's `--agent NAME`, else its `default_agent`, else the built-in demo agent, so a new
user sees everything acp-tui does at once.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import signal
import sys
from collections.abc import Sequence

import msgspec

from acp_tui.cli.parser import (
    build_parser,
    not_a_subcommand,
    split_agent_command,
    wants_subcommands,
)
from acp_tui.cli.workspace import workspace_for
from acp_tui.config import (
    AgentConfig,
    ConfigError,
    Notify,
    Startup,
    config_path,
    load_config,
    write_default_config,
)
from acp_tui.config.model import Config, for_remote
from acp_tui.remote.target import RemoteTarget, check_url
from acp_tui.session.options import ClientOptions
from acp_tui.transport.head_start import HeadStart

HEADLESS_SWITCH_INTERVAL = 0.0005
"""Seconds the event loop's thread, busy with a flood, keeps the GIL from a thread that waits
for it (Python's default: 5 ms): the record's writer and the checkpoints' git wait for it
each time one of their calls returns."""


def main(argv: Sequence[str] | None = None) -> int:
    ours, agent_command = split_agent_command(sys.argv[1:] if argv is None else argv)
    parser = build_parser(subcommands=wants_subcommands(ours))
    for arg in ours:
        if not _utf8(arg):  # a prompt typed in another encoding: JSON cannot carry it
            parser.error(f"{os.fsencode(arg)!r} is not valid UTF-8 text")
    if (wrong := not_a_subcommand(ours)) is not None:
        parser.error(wrong)
    args = parser.parse_args(ours)
    if args.subcommand is not None:
        subcommand = importlib.import_module(f"acp_tui.cli.{args.subcommand}")
        status: int = subcommand.run(args, agent_command)
        return status
    if args.fork and args.resume is None:
        parser.error("--fork forks the session --resume opens: give both")
    if args.config_path:
        print(config_path())
        return 0
    if args.init_config:
        return init_config()
    config = load_config()
    for problem in config.problems:
        print(f"acp-tui: config: {problem}", file=sys.stderr)
    if args.connect is not None or args.token_file is not None:
        connected = connected_agent(args, agent_command, config)
        if isinstance(connected, str):
            parser.error(connected)
        agent = connected
    try:
        if args.connect is None:
            agent = config.agent(args.agent, agent_command)
    except ConfigError as error:
        if not (args.agent and not agent_command):
            print(f"acp-tui: {error}", file=sys.stderr)
            return 2
        # Not configured: maybe an agent of the ACP Registry (a configured one always wins).
        from acp_tui.registry import InstallError
        from acp_tui.registry.start import registry_agent

        try:
            agent = registry_agent(
                args.agent, yes=args.yes, unknown=error, max_download=config.max_download
            )
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
        max_cost=config.max_cost if args.max_cost is None else args.max_cost,
        max_context=config.max_context if args.max_context is None else args.max_context,
        notify=_notify(config.notify, args.notify),
    )
    client_options = ClientOptions(
        cwd=workspace_for(agent, args.cwd),
        protocol_version=args.protocol_version,
        fs=not args.no_fs,
        terminal=not args.no_terminal,
        guard=config.guard if args.guard is None else args.guard == "on",
        max_line=config.max_line,
        max_write=config.max_write,
        allow_paths=[path.resolve() for path in [*args.allow_path, *config.allow_paths]],
        mcp_servers=agent.mcp_servers,
        providers=agent.providers,
        env=dict(agent.env),
        transcript=args.transcript,
        # An npx or uvx registry agent may fetch its package first: it gets longer.
        startup_timeout=max(args.startup_timeout, agent.startup_timeout or 0),
    )
    client_options = for_remote(client_options, agent)
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


def connected_agent(
    args: argparse.Namespace, agent_command: list[str], config: Config
) -> AgentConfig | str:
    """The remote agent `--connect` names (a configured agent of that URL by its name, its
    token and headers), or what is wrong with the command line."""
    if args.connect is None:
        return "--token-file is for --connect URL"
    if agent_command or getattr(args, "agent", None):
        return "give --connect URL, --agent NAME or an agent command after --, not two"
    wrong = check_url(args.connect)
    if wrong is not None:
        return f"--connect: {wrong}"
    for agent in config.agents.values():
        if agent.remote is not None and agent.remote.url == args.connect:
            if args.token_file is not None:
                agent.remote.token_file = args.token_file
            return agent
    target = RemoteTarget(args.connect, args.token_file)
    target.fs, target.terminal = config.remote_fs, config.remote_terminal
    return AgentConfig.for_url(target)


def init_config() -> int:
    path = config_path()
    if write_default_config(path):
        print(f"Wrote {path}: uncomment the agents you use, then run `acp-tui agents`.")
    else:
        print(f"{path} exists; acp-tui left it as it is.")
    return 0


def _utf8(text: str) -> bool:
    """Whether `text` came from valid UTF-8 (undecodable bytes of argv are surrogates)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _notify(notify: Notify, switch: str | None) -> Notify:
    """The config's `[notify]`, turned on or off by `--notify`."""
    if switch is None:
        return notify
    return msgspec.structs.replace(notify, enabled=switch == "on")


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
            checkpoints = Checkpointer(
                client_options.cwd,
                ignore=[client_options.transcript],
                agent_state=startup.config.agent_state,
            )
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
            max_cost=startup.max_cost,
            max_context=startup.max_context,
            live_check=args.live_check,
        )
        try:
            code = asyncio.run(run_headless(agent.command, client_options, options))
        finally:
            if checkpoints is not None:  # the run closes it, unless it ended before it began
                checkpoints.close()
        # The interpreter's exit collects the whole heap (a whole turn's state, after a flood)
        # more than once; what is still alive now is freed by reference counting anyway.
        # (bench/README.md, "Protocol path" > "The changes, before and after": the exit.)
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
