"""How acp-tui runs an agent: the options the command line gathers before anything starts.

Apart from `acp_tui.session.client` so that the command line and the first frame need
none of the machinery that runs an agent (connection, launcher, client services): that is
imported once the screen is up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from acp_tui.remote.target import RemoteTarget
    from acp_tui.transport.head_start import HeadStart

SUPPORTED_VERSIONS = (1, 2)


class ProviderRoute(msgspec.Struct, frozen=True):
    """Where one of an agent's LLM providers sends its requests (`providers/set`: a gateway,
    a proxy, another cloud), or, with no `base_url`, that it is switched off
    (`providers/disable`)."""

    provider_id: str
    api_type: str | None = None
    """`anthropic`, `openai`, `azure`, `vertex`, `bedrock` or one the agent names."""
    base_url: str | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)


class ClientOptions(msgspec.Struct):
    cwd: Path
    protocol_version: int = 1
    fs: bool = True
    terminal: bool = True
    guard: bool = True
    """Whether a file write or a command the agent did not ask permission for is asked about
    (`acp_tui.session.guard`); off, it goes through as the agent sent it."""
    max_line: int | None = None
    """The longest message taken from the agent, in bytes (None: `Connection.max_line`)."""
    max_write: int | None = None
    """The largest file write made for the agent, in bytes (None: the fs service's default)."""
    allow_paths: list[Path] = msgspec.field(default_factory=list)
    """Directories outside the workspace the user lets agents read and write (`--allow-path`)."""
    mcp_servers: list[dict[str, Any]] = msgspec.field(default_factory=list)
    """MCP servers for `session/new`, load and resume, in v1 shape (a stdio server has no
    `type`); those the agent cannot take are left out, with a problem reported."""
    providers: list[ProviderRoute] = msgspec.field(default_factory=list)
    """Where the agent's LLM providers send requests, set after `initialize` (before any
    session) when the agent offers `providers`."""
    env: dict[str, str] = msgspec.field(default_factory=dict)
    """Environment variables laid over ours for the agent process."""
    terminal_auth: bool = False
    """Whether the front end can run an agent's `terminal` sign-in (see
    `acp_tui.conversation.sign_in`)."""
    transcript: Path | None = None
    startup_timeout: float = 30.0
    head_start: HeadStart | None = None
    """The agent spawned as acp-tui started, for the first start of it (see `HeadStart`)."""
    remote: RemoteTarget | None = None
    """Where a remote agent is (`--connect`, an agent's `url`): connected to, not spawned."""
