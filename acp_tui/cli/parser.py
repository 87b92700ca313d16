"""The one parser of `acp-tui`: its options, and every subcommand with its own.

`acp-tui [options] [-p PROMPT ...] [-- AGENT COMMAND ...]` runs the TUI (headless with `-p`);
`acp-tui SUBCOMMAND ...` runs one of `SUBCOMMANDS`. What comes after `--` is an agent's
command and is never parsed here (see `split_agent_command`). Building it imports nothing
beyond the standard library and `acp_tui.session.options`: it runs before the first frame.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from acp_tui import __version__
from acp_tui.check import CALL_TIMEOUT, DEFAULT_PROMPT, LONG_PROMPT, TOOL_PROMPT, TURN_TIMEOUT
from acp_tui.session.options import SUPPORTED_VERSIONS

SUBCOMMANDS = {
    "agents": "the configured agents and the ACP Registry's",
    "sessions": "the sessions you can --resume here",
    "export": "a recorded conversation as Markdown",
    "logout": "sign out of the agent",
    "providers": "where the agent's model requests go",
    "check": "what an ACP agent gets wrong, for its author",
    "changes": "what each turn changed in the workspace",
    "rewind": "put the workspace back as it was before a turn",
    "serve": "serve an agent to other machines (WebSocket, HTTP)",
}
"""Every subcommand, with the line `acp-tui --help` says of it."""


def split_agent_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Our arguments before `--`, the agent's command after it (`as_typed`)."""
    args = list(argv)
    if "--" in args:
        cut = args.index("--")
        return args[:cut], as_typed(args[cut + 1 :])
    return args, []


def as_typed(command: list[str]) -> list[str]:
    """The agent's command with its program, when a relative path (`./agents/mine.sh`), made
    absolute from the directory acp-tui was started in, where the user typed it, as a shell
    would: not from the workspace (`--cwd`) the agent runs in, nor the scratch one of `check`.
    A bare name is left for PATH; the arguments are the agent's business."""
    if not command or os.sep not in command[0] or os.path.isabs(command[0]):
        return command
    return [os.path.abspath(command[0]), *command[1:]]


def build_parser(*, subcommands: bool = True) -> argparse.ArgumentParser:
    """The parser; without `subcommands`, only the command's own options (what a run of the
    TUI or headless mode needs: the subcommands' parsers take longer to build than the
    agent takes to be spawned ahead)."""
    parser = argparse.ArgumentParser(
        prog="acp-tui",
        usage="acp-tui [options] [-p PROMPT ...] [-- AGENT COMMAND ...]\n"
        f"       acp-tui {{{'|'.join(SUBCOMMANDS)}}} [options]   (each takes --help)",
        description="A terminal client for AI coding agents that speak the Agent Client "
        "Protocol. Without an agent command it runs the configured default agent, or the "
        "built-in demo agent.",
    )
    _run_options(parser)
    if not subcommands:
        parser.set_defaults(subcommand=None)
        return parser
    chosen = parser.add_subparsers(
        dest="subcommand", title="subcommands", metavar="SUBCOMMAND", required=False
    )
    for name, summary in SUBCOMMANDS.items():
        sub = chosen.add_parser(
            name, prog=f"acp-tui {name}", help=summary, description=_DESCRIPTIONS[name]
        )
        _SUBCOMMAND_OPTIONS[name](sub)
    return parser


def wants_subcommands(ours: Sequence[str]) -> bool:
    """Whether the arguments name a subcommand, or ask for help (which lists them)."""
    return bool(ours) and (ours[0] in SUBCOMMANDS or any(a in ("-h", "--help") for a in ours))


def not_a_subcommand(ours: Sequence[str]) -> str | None:
    """What is wrong with a first argument that is neither an option nor a subcommand (a
    misspelt subcommand, a prompt without -p); None when there is none."""
    if not ours or ours[0].startswith("-") or ours[0] in SUBCOMMANDS:
        return None
    return (
        f"{ours[0]!r} is not a subcommand (they are: {', '.join(SUBCOMMANDS)}); "
        "a prompt goes after -p"
    )


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"acp-tui {__version__}")
    parser.add_argument(
        "--cwd",
        type=Path,
        help="the workspace (default: here; the demo agent's: a folder of its own)",
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
    _connect_options(parser)
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
        "--guard",
        choices=("on", "off"),
        default=None,
        help="ask (as --permission says) about a file write or a command the agent did not ask "
        "permission for (default: the config's, else on)",
    )
    parser.add_argument(
        "--notify",
        choices=("on", "off"),
        default=None,
        help="TUI: tell the terminal (a notification, else the bell) when a conversation you "
        "are not looking at needs you (default: the config's [notify], else on)",
    )
    parser.add_argument(
        "--live-check",
        action="store_true",
        help="headless: check every message against the ACP schema as the run goes, and say "
        "each violation (stderr, or a jsonl `violation` event); the TUI always does",
    )
    parser.add_argument(
        "--max-cost",
        type=_positive,
        metavar="DOLLARS",
        help="stop a session once the agent reports it cost this much (its own usage_update)",
    )
    parser.add_argument(
        "--max-context",
        type=_positive,
        metavar="PERCENT",
        help="stop a session once it fills this much of the agent's context window",
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


def _connect_options(parser: argparse.ArgumentParser) -> None:
    """`--connect URL` and its token: the run's, and `check`'s."""
    parser.add_argument(
        "--connect",
        metavar="URL",
        help="a remote agent instead of a command: ws://, wss://, http:// or https:// (the ACP "
        "remote transport: WebSocket or Streamable HTTP); it works on this machine's files, in "
        "the workspace, as a local agent does",
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="with --connect: the bearer token, read from FILE (else $ACP_TUI_TOKEN; never on "
        "the command line, where anyone can read it)",
    )


# -- the subcommands ----------------------------------------------------------------------------

_DESCRIPTIONS = {
    "agents": "List the agents in the config file, and whether each one's command is on your "
    "PATH; then the agents of the ACP Registry (`acp-tui --agent ID` starts one).",
    "sessions": "List the sessions you can continue with `acp-tui --resume ID`: those the "
    "agent lists (if it can) and those acp-tui recorded, for this agent in this workspace.",
    "export": "Write a recorded conversation as Markdown.",
    "logout": "Sign out of an agent that offers it (`logout`), and forget the sign-in method "
    "acp-tui remembered for it.",
    "providers": "Where the agent's LLM providers send its model requests (`providers/list`, "
    "for agents that offer it), once the config's `[agents.NAME.providers.ID]` routes are set.",
    "check": "Run a fixed series of protocol cases against an ACP agent in a scratch workspace "
    "and report what it gets wrong, with the rule and the line. Exit 0 only when every MUST "
    "holds.",
    "changes": "What each turn of a session changed in the workspace (whoever wrote it: the "
    "agent through acp-tui, the agent itself, a command it ran), from the checkpoints acp-tui "
    "takes before and after every turn.",
    "rewind": "Put the workspace's files back as they were before turn N of a session (from "
    "acp-tui's checkpoints). The files as they are now are kept first: --undo puts them back.",
    "serve": "Serve a local ACP agent to remote clients at /acp, over WebSocket and Streamable "
    "HTTP (the ACP remote transport RFD): one agent process a connection, started in --cwd on "
    "this machine, kept for --grace seconds after its client drops so that it can come back. "
    "Every request must carry the token (Authorization: Bearer) when one is set; beyond "
    "loopback one must be. Ctrl+C or SIGTERM stops every agent, then the server.",
}


def _agents(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--update", action="store_true", help="fetch the registry now, however fresh the cache"
    )


def _sessions(parser: argparse.ArgumentParser) -> None:
    parser.usage = "acp-tui sessions [--agent NAME] [--cwd DIR] [--all] [-- AGENT COMMAND ...]"
    parser.add_argument("--agent", metavar="NAME", help="an agent from the config file")
    parser.add_argument(
        "--cwd", type=Path, help="the workspace (default: here; the demo agent's: its own)"
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="every conversation acp-tui recorded, for any agent and workspace",
    )


def _export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="the session id (or a prefix of it)")
    parser.add_argument("-o", "--output", type=Path, help="the file to write (default: stdout)")
    parser.add_argument("--agent", metavar="NAME", help="only sessions with this agent")


def _agent_to_ask(parser: argparse.ArgumentParser) -> None:
    """`logout` and `providers`: which agent to start, and where."""
    parser.usage = f"{parser.prog} [--agent NAME] [--cwd DIR] [-- AGENT COMMAND ...]"
    parser.add_argument("--agent", metavar="NAME", help="an agent from the config file")
    parser.add_argument(
        "--cwd", type=Path, help="where to start it (default: here; the demo agent: its own)"
    )


def _check(parser: argparse.ArgumentParser) -> None:
    parser.usage = (
        "acp-tui check [--protocol-version 1|2] [--json] [--junit FILE] [--transcript FILE] "
        "[--verbose] [--prompt TEXT] [--long-prompt TEXT] [--tool-prompt TEXT] "
        "[--auth METHOD_ID] [--mode MODE] [--cwd DIR] [--env NAME=VALUE] "
        "(-- AGENT COMMAND ... | --connect URL [--token-file FILE])"
    )
    _connect_options(parser)
    parser.add_argument("--protocol-version", type=int, choices=(1, 2), default=1)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML")
    parser.add_argument(
        "--transcript", type=Path, metavar="FILE", help="write every line both ways (JSON lines)"
    )
    parser.add_argument(
        "--verbose", action="store_true", help="show every line both ways on stderr as it goes"
    )
    parser.add_argument(
        "--prompt", default=DEFAULT_PROMPT, help="the prompt turn's prompt (needs a model)"
    )
    parser.add_argument(
        "--long-prompt",
        default=LONG_PROMPT,
        metavar="TEXT",
        help="what the cancel case sends: something that takes long to answer",
    )
    parser.add_argument(
        "--tool-prompt",
        default=TOOL_PROMPT,
        metavar="TEXT",
        help="what the permission cases send: something that asks before a tool runs "
        "({cwd} is the workspace)",
    )
    parser.add_argument("--auth", metavar="METHOD_ID", help="sign in with this method first")
    parser.add_argument("--mode", metavar="MODE", help="put each new session in this mode first")
    parser.add_argument("--cwd", type=Path, help="the workspace (default: a scratch directory)")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set in the agent's environment (repeatable)",
    )
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


def _changes(parser: argparse.ArgumentParser) -> None:
    parser.usage = "acp-tui changes [SESSION] [--turn N] [--patch] [--cwd DIR]"
    parser.add_argument(
        "session", nargs="?", metavar="SESSION", help="a session id or prefix (default: the latest)"
    )
    parser.add_argument("--turn", type=int, metavar="N", help="only turn N")
    parser.add_argument("--patch", action="store_true", help="the diffs too, as a patch")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the workspace")


def _rewind(parser: argparse.ArgumentParser) -> None:
    parser.usage = (
        "acp-tui rewind SESSION (--turn N [--file PATH ...] | --undo) [--yes] [--cwd DIR]"
    )
    parser.add_argument("session", metavar="SESSION", help="a session id or prefix")
    parser.add_argument("--turn", type=int, metavar="N", help="rewind to before turn N")
    parser.add_argument(
        "--file", action="append", metavar="PATH", help="only this file (repeatable)"
    )
    parser.add_argument("--undo", action="store_true", help="undo the session's last rewind")
    parser.add_argument(
        "--yes", action="store_true", help="do not ask (files you changed are overwritten too)"
    )
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the workspace")


def _serve(parser: argparse.ArgumentParser) -> None:
    parser.usage = (
        "acp-tui serve [--listen HOST:PORT] [--token-file FILE] [--grace SECONDS] "
        "[--certfile FILE --keyfile FILE] [--cwd DIR] [--agent NAME | -- AGENT COMMAND ...]"
    )
    parser.add_argument(
        "--listen",
        default="127.0.0.1:8765",
        metavar="HOST:PORT",
        help="where to listen (default: 127.0.0.1:8765; port 0: any free port)",
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="the bearer token clients must send, its first line (default: $ACP_TUI_TOKEN; "
        "needed beyond loopback)",
    )
    parser.add_argument(
        "--grace",
        type=_positive,
        default=120.0,
        metavar="SECONDS",
        help="how long an agent waits for its client to come back (default: 120)",
    )
    parser.add_argument(
        "--max-message",
        type=_positive,
        default=32.0,
        metavar="MIB",
        help="the largest message a client may send (default: 32)",
    )
    parser.add_argument(
        "--certfile",
        type=Path,
        metavar="FILE",
        help="serve TLS (https://, wss://; HTTP/2 by ALPN) with this certificate chain (PEM)",
    )
    parser.add_argument("--keyfile", type=Path, metavar="FILE", help="the certificate's key (PEM)")
    parser.add_argument("--agent", metavar="NAME", help="an agent from the config file")
    parser.add_argument(
        "--cwd",
        type=Path,
        metavar="DIR",
        help="where agents run (default: here; the demo agent: its own)",
    )


_SUBCOMMAND_OPTIONS = {
    "agents": _agents,
    "sessions": _sessions,
    "export": _export,
    "logout": _agent_to_ask,
    "providers": _agent_to_ask,
    "check": _check,
    "changes": _changes,
    "rewind": _rewind,
    "serve": _serve,
}


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value
