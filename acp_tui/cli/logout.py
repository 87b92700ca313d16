"""`acp-tui logout [--agent NAME]`: sign out of an agent that offers it, and forget the sign-in
method acp-tui remembered for it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from acp_tui.cli.asking import agent_to_ask, bare_client
from acp_tui.cli.printing import warn
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.records import RecordStore
from acp_tui.session.handshake import ProtocolMismatch
from acp_tui.transport.launcher import LaunchError


def run(args: argparse.Namespace, agent_command: list[str]) -> int:
    return asyncio.run(_logout(args, agent_command))


async def _logout(args: argparse.Namespace, agent_command: list[str]) -> int:
    chosen = agent_to_ask(args, agent_command)
    if chosen is None:
        return 2
    agent, cwd = chosen
    client = bare_client(agent, cwd)
    try:
        info = await client.start()
        if not info.supports("logout"):
            warn(f"{info.label} does not offer sign-out (no `agentCapabilities.auth.logout`)")
            return 1
        await client.logout()
    except (LaunchError, ProtocolMismatch, RpcError, OSError) as error:
        warn(f"could not sign out of {agent.name}: {error}")
        return 1
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    store = RecordStore.open(on_warning=warn)
    if store is not None:
        store.forget_auth(agent.name)
        store.close()
    print(f"Signed out of {info.label}.")
    return 0
