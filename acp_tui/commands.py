"""`acp-tui agents`, `acp-tui sessions`, `acp-tui export ID`, `acp-tui logout` and `acp-tui
providers`: the config, the records, the agent's sign-in and its model routes, from the
shell."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from acp_tui.config import (
    AgentConfig,
    Config,
    ConfigError,
    config_path,
    load_config,
    write_default_config,
)
from acp_tui.conversation.opening import SessionEntry, list_sessions
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.records import RecordStore
from acp_tui.records.export import record_markdown
from acp_tui.session.client import AgentClient
from acp_tui.session.handshake import ProtocolMismatch
from acp_tui.session.options import ClientOptions
from acp_tui.transport.launcher import LaunchError


def run(name: str, argv: Sequence[str], agent_command: list[str]) -> int:
    """Run the subcommand `name` with its arguments (and an agent command given after
    `--`)."""
    if name == "agents":
        return agents(argv)
    if name == "sessions":
        return asyncio.run(sessions(argv, agent_command))
    if name == "logout":
        return asyncio.run(logout(argv, agent_command))
    if name == "providers":
        return asyncio.run(providers(argv, agent_command))
    if name == "check":
        from acp_tui.check.command import check

        return asyncio.run(check(argv, agent_command))
    return export(argv)


def init_config() -> int:
    path = config_path()
    if write_default_config(path):
        print(f"Wrote {path}: uncomment the agents you use, then run `acp-tui agents`.")
    else:
        print(f"{path} exists; acp-tui left it as it is.")
    return 0


def _config() -> Config:
    config = load_config()
    for problem in config.problems:
        print(f"acp-tui: config: {problem}", file=sys.stderr)
    return config


def _warn(message: str) -> None:
    print(f"acp-tui: {message}", file=sys.stderr)


# -- agents -----------------------------------------------------------------------------------


def agents(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="acp-tui agents",
        description="List the agents in the config file, and whether each one's command is "
        "on your PATH; then the agents of the ACP Registry (`acp-tui --agent ID` starts one).",
    )
    parser.add_argument(
        "--update", action="store_true", help="fetch the registry now, however fresh the cache"
    )
    args = parser.parse_args(argv)
    config = _config()
    if config.exists:
        print(f"Config: {config.path}")
    else:
        print(f"Config: {config.path} (none yet: `acp-tui --init-config` writes one with examples)")
    default = config.agent()
    rows = [("", "NAME", "COMMAND", "FOUND")]
    for agent in config.agents.values():
        mark = "*" if agent is default else ""
        rows.append((mark, agent.name, _short_command(agent), _found(agent)))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print(" ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[3])
    print(f"\n* the default: `acp-tui` runs {default.name}; `acp-tui --agent NAME` runs another.")
    _registry_agents(config, args.update)
    return 0


def _registry_agents(config: Config, update: bool) -> None:
    from acp_tui.registry import load_registry
    from acp_tui.registry.install import registry_status

    loaded = load_registry(refresh=update)
    for problem in loaded.index.problems:
        _warn(f"registry: {problem}")
    print(f"\nACP Registry ({loaded.describe().removeprefix('registry: ')}):")
    rows = [("ID", "NAME", "VERSION", "KIND", "INSTALLED", "ON PATH")]
    shadowed = []
    for agent in loaded.index.agents.values():
        if agent.id in config.agents:
            shadowed.append(agent.id)
            continue
        rows.append((agent.id, agent.name, agent.version, *registry_status(agent)))
    _print_table(rows[1:], rows[0])
    if shadowed:
        print(f"Configured agents of the same id win: {', '.join(shadowed)}.")
    print("`acp-tui --agent ID` installs (asking first) and starts one.")


def _short_command(agent: AgentConfig) -> str:
    if agent.builtin:
        return "python -m acp_tui.demo"
    return agent.command_line


def _found(agent: AgentConfig) -> str:
    path = agent.found()
    if path is None:
        return f"no: {agent.program} is not on PATH"
    return "yes (built in)" if agent.builtin else f"yes: {path}"


# -- sessions ---------------------------------------------------------------------------------


async def sessions(argv: Sequence[str], agent_command: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="acp-tui sessions",
        usage="acp-tui sessions [--agent NAME] [--cwd DIR] [--all] [-- AGENT COMMAND ...]",
        description="List the sessions you can continue with `acp-tui --resume ID`: those "
        "the agent lists (if it can) and those acp-tui recorded, for this agent in this "
        "workspace.",
    )
    parser.add_argument("--agent", metavar="NAME", help="an agent from the config file")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the workspace")
    parser.add_argument(
        "--all",
        action="store_true",
        help="every conversation acp-tui recorded, for any agent and workspace",
    )
    args = parser.parse_args(argv)
    config = _config()
    store = RecordStore.open(on_warning=_warn)
    try:
        if args.all:
            records = store.conversations() if store is not None else []
            _print_table(
                [
                    (r.session_id, _when(r.updated), r.agent, r.workspace, r.title or "")
                    for r in records
                ],
                ("ID", "UPDATED", "AGENT", "WORKSPACE", "TITLE"),
            )
            return 0
        try:
            agent = config.agent(args.agent, agent_command)
        except ConfigError as error:
            _warn(str(error))
            return 2
        workspace = args.cwd.resolve()
        entries = await _agent_sessions(agent, workspace, store)
    finally:
        if store is not None:
            store.close()
    print(f"Sessions with {agent.name} in {workspace}:")
    _print_table(
        [(e.session_id, _when(e.updated_at), e.source, e.label) for e in entries],
        ("ID", "UPDATED", "FROM", "TITLE"),
    )
    if entries:
        if agent.adhoc:
            how = f"acp-tui --resume ID -- {agent.command_line}"
        elif agent is config.agent():
            how = "acp-tui --resume ID"
        else:
            how = f"acp-tui --agent {shlex.quote(agent.name)} --resume ID"
        print(f"\nContinue one with: {how}  (no ID: the latest)")
    return 0


async def _agent_sessions(
    agent: AgentConfig, workspace: Path, store: RecordStore | None
) -> list[SessionEntry]:
    """The agent's list (it is started just for that, if it can list) and the records."""
    client = _bare_client(agent, workspace)
    running: AgentClient | None = None
    try:
        await client.start()
        running = client
    except (LaunchError, ProtocolMismatch, RpcError, OSError) as error:
        _warn(f"could not ask {agent.name} for its sessions ({error}); showing acp-tui's records")
    try:
        return await list_sessions(running, store, agent.name, workspace)
    finally:
        with contextlib.suppress(Exception):
            await client.close()


# -- logout -----------------------------------------------------------------------------------


async def logout(argv: Sequence[str], agent_command: list[str]) -> int:
    description = (
        "Sign out of an agent that offers it (`logout`), and forget the sign-in method acp-tui "
        "remembered for it."
    )
    chosen = _agent_to_ask("logout", description, argv, agent_command)
    if chosen is None:
        return 2
    agent, cwd = chosen
    client = _bare_client(agent, cwd)
    try:
        info = await client.start()
        if not info.supports("logout"):
            _warn(f"{info.label} does not offer sign-out (no `agentCapabilities.auth.logout`)")
            return 1
        await client.logout()
    except (LaunchError, ProtocolMismatch, RpcError, OSError) as error:
        _warn(f"could not sign out of {agent.name}: {error}")
        return 1
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    store = RecordStore.open(on_warning=_warn)
    if store is not None:
        store.forget_auth(agent.name)
        store.close()
    print(f"Signed out of {info.label}.")
    return 0


# -- providers --------------------------------------------------------------------------------


async def providers(argv: Sequence[str], agent_command: list[str]) -> int:
    description = (
        "Where the agent's LLM providers send its model requests (`providers/list`, for agents "
        "that offer it), once the config's `[agents.NAME.providers.ID]` routes are set."
    )
    chosen = _agent_to_ask("providers", description, argv, agent_command)
    if chosen is None:
        return 2
    agent, cwd = chosen
    client = _bare_client(agent, cwd, routed=True)
    try:
        info = await client.start()
        if not info.supports("providers"):
            _warn(f"{info.label} does not let its client route its model requests (no providers)")
            return 1
        for warning in client.warnings:  # a route from the config it refused
            _warn(warning)
        listed = await client.list_providers()
    except (LaunchError, ProtocolMismatch, RpcError, OSError) as error:
        _warn(f"could not ask {agent.name} for its providers: {error}")
        return 1
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    print(f"Providers of {info.label}:")
    _print_table(
        [
            (
                p.provider_id,
                p.current.api_type if p.current else "off",
                "yes" if p.required else "no",
                ", ".join(kind for kind in p.supported or () if isinstance(kind, str)),
                p.current.base_url if p.current else "",
            )
            for p in listed
        ],
        ("ID", "API", "REQUIRED", "SUPPORTED", "BASE URL"),
    )
    return 0


def _agent_to_ask(
    name: str, description: str, argv: Sequence[str], agent_command: list[str]
) -> tuple[AgentConfig, Path] | None:
    """`acp-tui NAME [--agent NAME] [--cwd DIR] [-- AGENT COMMAND ...]`, parsed: the agent to
    start and where; None, after saying why, for an agent the config does not have."""
    parser = argparse.ArgumentParser(
        prog=f"acp-tui {name}",
        usage=f"acp-tui {name} [--agent NAME] [--cwd DIR] [-- AGENT COMMAND ...]",
        description=description,
    )
    parser.add_argument("--agent", metavar="NAME", help="an agent from the config file")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="where to start it")
    args = parser.parse_args(argv)
    try:
        return _config().agent(args.agent, agent_command), args.cwd.resolve()
    except ConfigError as error:
        _warn(str(error))
        return None


def _bare_client(agent: AgentConfig, cwd: Path, *, routed: bool = False) -> AgentClient:
    """A client that only asks the agent things (no services, every permission refused);
    with `routed`, the config's provider routes are set when it starts."""

    async def refuse(pending: object) -> None:
        pass

    options = ClientOptions(cwd=cwd, env=dict(agent.env), startup_timeout=15.0)
    if routed:
        options.providers = agent.providers
    return AgentClient(agent.command, options, decide_permission=refuse, services_factory=None)


def _when(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment is not None else "-"


def _print_table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> None:
    if not rows:
        print("(none)")
        return
    table = [header, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[-1]]).rstrip())


# -- export -----------------------------------------------------------------------------------


def export(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="acp-tui export",
        description="Write a recorded conversation as Markdown.",
    )
    parser.add_argument("id", metavar="ID", help="the session id (or a prefix of it)")
    parser.add_argument("-o", "--output", type=Path, help="the file to write (default: stdout)")
    parser.add_argument("--agent", metavar="NAME", help="only sessions with this agent")
    args = parser.parse_args(argv)
    store = RecordStore.open(on_warning=_warn)
    if store is None:
        return 1
    try:
        record = store.find(args.id, agent=args.agent)
        if record is None:
            _warn(f"no recorded session {args.id!r} (`acp-tui sessions --all` lists them)")
            return 1
        text = record_markdown(store, record)
    finally:
        store.close()
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as error:
        _warn(f"cannot write {args.output}: {error}")
        return 1
    print(f"Wrote {args.output}", file=sys.stderr)
    return 0
