"""The `initialize` handshake: what acp-tui says of itself (its capabilities, in the shape of
the version it offers) and what it reads of the agent's answer."""

from __future__ import annotations

from typing import Any

from acp_tui import __version__
from acp_tui.protocol import methods as m
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.options import ClientOptions
from acp_tui.session.quirks import quirks_for

CLIENT_INFO = m.Implementation(name="acp-tui", title="acp-tui", version=__version__)
ELICITATION_MODES: dict[str, Any] = {"form": {}, "url": {}}
"""`clientCapabilities.elicitation`: both modes, each advertised explicitly as ACP asks."""


class ProtocolMismatch(Exception):
    """The agent speaks no protocol version acp-tui supports."""


def initialize_request(
    options: ClientOptions, version: int, *, questions: bool, services: bool
) -> m.InitializeRequestV1 | m.InitializeRequestV2:
    """`initialize`'s params offering `version`. `questions`: the front end answers the
    agent's questions (elicitation); `services`: acp-tui serves `fs/*` and `terminal/*` (as
    `options` allow)."""
    terminal_auth = options.terminal_auth
    if version >= 2:
        wanted: dict[str, Any] = {"auth": {"terminal": {}}} if terminal_auth else {}
        if questions:
            wanted["elicitation"] = ELICITATION_MODES
        return m.InitializeRequestV2(version, CLIENT_INFO, wanted)
    capabilities = m.ClientCapabilitiesV1(
        fs=m.FileSystemCapability(options.fs, options.fs),
        terminal=options.terminal,
        # Compaction: the agent's context compactions as their own entries
        # (Claude Code shows them as a tool call otherwise).
        session={"configOptions": {"boolean": {}}, "compaction": {}},
    )
    if not services:
        capabilities = m.ClientCapabilitiesV1(session=capabilities.session)
    # Plans by id (`plan_update`, `plan_removed`: an approved plan of Claude Code's
    # plan mode comes as a Markdown plan), as v2 has them.
    capabilities.plan = {}
    # Agents that run commands themselves stream them to clients that say they can
    # show them (claude-agent-acp's Bash tool): see `terminals.meta_terminal`.
    meta: dict[str, Any] = {"terminal_output": True, "terminal_output_delta": True}
    if terminal_auth:
        # The stable capability, and the older `_meta` one some agents still read.
        capabilities.auth = {"terminal": True}
        meta["terminal-auth"] = True
    capabilities.meta = meta
    if questions:
        capabilities.elicitation = ELICITATION_MODES
    return m.InitializeRequestV1(version, capabilities, CLIENT_INFO)


def agent_info_from(response: m.InitializeResponse, version: int) -> AgentInfo:
    """What the agent's `initialize` answer (in `version`'s shape) says of it."""
    info = (response.info if version >= 2 else response.agent_info) or m.AgentInfo()
    capabilities = response.capabilities if version >= 2 else response.agent_capabilities
    return AgentInfo(
        name=info.name,
        version=info.version,
        title=info.title,
        protocol_version=version,
        capabilities=capabilities or {},
        auth_methods=[
            a for a in response.auth_methods if a.type in ("agent", "terminal", "env_var")
        ],
        quirks=quirks_for(info.name, info.version),
    )


def shape_version(response: m.InitializeResponse) -> int:
    """The version an initialize result is shaped as, whatever number it carries: v2 results
    must carry `info`, so a bare `{"protocolVersion": 2}` is a v1 agent echoing our offer."""
    if response.info is not None:
        return 2
    if response.capabilities is not None and response.agent_capabilities is None:
        return 2
    return 1
