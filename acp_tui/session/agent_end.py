"""The agent's end of the connection, as the options name it: a remote agent connected to
(`acp_tui.remote`, whose libraries are imported only then), else a local one spawned."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from acp_tui.session.options import ClientOptions
from acp_tui.transport.launcher import AgentProcess

if TYPE_CHECKING:
    from acp_tui.remote.client import RemoteAgent


async def start_agent(
    argv: list[str], options: ClientOptions, on_stderr: Callable[[bytes], None] | None
) -> AgentProcess | RemoteAgent:
    """Connect to `options.remote`, or spawn `argv` in the workspace (taking the agent spawned
    ahead, if it is that one)."""
    if options.remote is not None:
        from acp_tui.remote.client import RemoteAgent

        return await RemoteAgent.connect(options.remote, max_message=options.max_line)
    return await AgentProcess.start(
        argv, options.cwd, env=options.env, on_stderr=on_stderr, head_start=options.head_start
    )
