"""`acp-tui providers [--agent NAME]`: where the agent's LLM providers send its model requests
(`providers/list`), once the config's routes are set."""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from acp_tui.cli.asking import agent_to_ask, bare_client
from acp_tui.cli.printing import print_table, warn
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.session.handshake import ProtocolMismatch
from acp_tui.transport.launcher import LaunchError


def run(args: argparse.Namespace, agent_command: list[str]) -> int:
    return asyncio.run(_providers(args, agent_command))


async def _providers(args: argparse.Namespace, agent_command: list[str]) -> int:
    chosen = agent_to_ask(args, agent_command)
    if chosen is None:
        return 2
    agent, cwd = chosen
    client = bare_client(agent, cwd, routed=True)
    try:
        info = await client.start()
        if not info.supports("providers"):
            warn(f"{info.label} does not let its client route its model requests (no providers)")
            return 1
        for warning in client.warnings:  # a route from the config it refused
            warn(warning)
        listed = await client.list_providers()
    except (LaunchError, ProtocolMismatch, RpcError, OSError) as error:
        warn(f"could not ask {agent.name} for its providers: {error}")
        return 1
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    print(f"Providers of {info.label}:")
    print_table(
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
