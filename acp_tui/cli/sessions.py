"""`acp-tui sessions [--agent NAME] [--cwd DIR] [--all]`: the sessions to `--resume`, the
agent's own list (it is started for that, if it can list) and acp-tui's records."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
from pathlib import Path

from acp_tui.cli.asking import bare_client
from acp_tui.cli.printing import config, print_table, warn, when
from acp_tui.cli.workspace import workspace_for
from acp_tui.config import AgentConfig, ConfigError
from acp_tui.conversation.opening import SessionEntry, list_sessions
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.records import RecordStore
from acp_tui.session.client import AgentClient
from acp_tui.session.handshake import ProtocolMismatch
from acp_tui.transport.launcher import LaunchError


def run(args: argparse.Namespace, agent_command: list[str]) -> int:
    return asyncio.run(_sessions(args, agent_command))


async def _sessions(args: argparse.Namespace, agent_command: list[str]) -> int:
    loaded = config()
    store = RecordStore.open(on_warning=warn)
    try:
        if args.all:
            records = store.conversations() if store is not None else []
            print_table(
                [
                    (r.session_id, when(r.updated), r.agent, r.workspace, r.title or "")
                    for r in records
                ],
                ("ID", "UPDATED", "AGENT", "WORKSPACE", "TITLE"),
            )
            return 0
        try:
            agent = loaded.agent(args.agent, agent_command)
        except ConfigError as error:
            warn(str(error))
            return 2
        workspace = workspace_for(agent, args.cwd)
        entries = await _agent_sessions(agent, workspace, store)
    finally:
        if store is not None:
            store.close()
    print(f"Sessions with {agent.name} in {workspace}:")
    print_table(
        [(e.session_id, when(e.updated_at), e.source, e.label) for e in entries],
        ("ID", "UPDATED", "FROM", "TITLE"),
    )
    if entries:
        if agent.adhoc:
            how = f"acp-tui --resume ID -- {agent.command_line}"
        elif agent is loaded.agent():
            how = "acp-tui --resume ID"
        else:
            how = f"acp-tui --agent {shlex.quote(agent.name)} --resume ID"
        print(f"\nContinue one with: {how}  (no ID: the latest)")
    return 0


async def _agent_sessions(
    agent: AgentConfig, workspace: Path, store: RecordStore | None
) -> list[SessionEntry]:
    """The agent's list (it is started just for that, if it can list) and the records."""
    client = bare_client(agent, workspace)
    running: AgentClient | None = None
    try:
        await client.start()
        running = client
    except (LaunchError, ProtocolMismatch, RpcError, OSError) as error:
        warn(f"could not ask {agent.name} for its sessions ({error}); showing acp-tui's records")
    try:
        return await list_sessions(running, store, agent.name, workspace)
    finally:
        with contextlib.suppress(Exception):
            await client.close()
