"""An agent started from the shell only to ask it something (its sessions, a sign-out, its
providers): no session, no services, every permission refused."""

from __future__ import annotations

import argparse
from pathlib import Path

from acp_tui.cli.printing import config, warn
from acp_tui.cli.workspace import workspace_for
from acp_tui.config import AgentConfig, ConfigError
from acp_tui.config.model import for_remote
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission


def agent_to_ask(
    args: argparse.Namespace, agent_command: list[str]
) -> tuple[AgentConfig, Path] | None:
    """The agent `--agent` (or the command after `--`) names, and where to start it; None,
    after saying why, for an agent the config does not have."""
    try:
        agent = config().agent(args.agent, agent_command)
    except ConfigError as error:
        warn(str(error))
        return None
    return agent, workspace_for(agent, args.cwd)


def bare_client(agent: AgentConfig, cwd: Path, *, routed: bool = False) -> AgentClient:
    """A client that only asks the agent things; with `routed`, the config's provider routes
    are set when it starts."""

    async def refuse(pending: PendingPermission) -> None:
        pending.cancel(by="policy")

    # A remote agent (`url` in the config) is connected to.
    options = for_remote(ClientOptions(cwd=cwd, env=dict(agent.env), startup_timeout=15.0), agent)
    if routed:
        options.providers = agent.providers
    return AgentClient(agent.command, options, decide_permission=refuse, services_factory=None)
