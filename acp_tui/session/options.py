"""How acp-tui runs an agent: the options the command line gathers before anything starts.

Apart from `acp_tui.session.controller` so that the command line and the first frame need
none of the machinery that runs an agent (connection, launcher, client services): that is
imported once the screen is up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SUPPORTED_VERSIONS = (1, 2)


@dataclass(slots=True)
class ClientOptions:
    cwd: Path
    protocol_version: int = 1
    fs: bool = True
    terminal: bool = True
    allow_paths: list[Path] = field(default_factory=list)
    """Directories outside the workspace the user lets agents read and write (`--allow-path`)."""
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)
    """MCP servers for `session/new`, load and resume, in v1 shape (a stdio server has no
    `type`); those the agent cannot take are left out, with a problem reported."""
    env: dict[str, str] = field(default_factory=dict)
    """Environment variables laid over ours for the agent process."""
    terminal_auth: bool = False
    """Whether the front end can run an agent's `terminal` sign-in (see `acp_tui.auth`)."""
    transcript: Path | None = None
    startup_timeout: float = 30.0
