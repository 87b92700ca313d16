"""What acp-tui knows of the agent it talks to: its name, the protocol version it speaks, its
capabilities (read the same way for v1 and v2: `supports`), its sign-in methods and quirks."""

from __future__ import annotations

from typing import Any

import msgspec

from acp_tui.protocol import methods as m
from acp_tui.session.quirks import Quirk


class AgentInfo(msgspec.Struct):
    name: str = ""
    version: str = ""
    title: str | None = None
    protocol_version: int = 1
    capabilities: dict[str, Any] = msgspec.field(default_factory=dict)
    auth_methods: list[m.AuthMethod] = msgspec.field(default_factory=list)
    quirks: tuple[Quirk, ...] = ()
    """Known bugs of this agent's version that acp-tui works around (`acp_tui.session.quirks`)."""

    def has_quirk(self, key: str) -> bool:
        return any(quirk.key == key for quirk in self.quirks)

    @property
    def label(self) -> str:
        return " ".join(p for p in (self.title or self.name, self.version) if p) or "agent"

    def _marker(self, *path: str) -> Any:
        node: Any = self.capabilities
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        return node

    def supports(self, feature: str) -> bool:
        """`load`, `resume`, `list`, `close`, `logout`, `image`, `audio`, `embedded_context`,
        `mcp_stdio`, `mcp_http`, `mcp_sse`, `additional_directories`, `delete`, `fork`,
        `providers`."""
        if feature == "providers":
            return self._marker("providers") is not None
        if feature == "logout":
            # v2: an agent with sign-in methods must take `auth/logout`.
            if self.protocol_version >= 2:
                return bool(self.auth_methods)
            return self._marker("auth", "logout") is not None
        if feature.startswith("mcp_"):
            kind = feature.removeprefix("mcp_")
            if self.protocol_version >= 2:
                return kind != "sse" and self._marker("session", "mcp", kind) is not None
            return kind == "stdio" or self._marker("mcpCapabilities", kind) is True
        if feature in ("additional_directories", "delete", "fork"):
            key = {"additional_directories": "additionalDirectories"}.get(feature, feature)
            where = "session" if self.protocol_version >= 2 else "sessionCapabilities"
            return self._marker(where, key) is not None
        if self.protocol_version >= 2:
            session = self._marker("session")
            if feature in ("resume", "list", "close"):
                return session is not None
            if feature == "load":
                return False
            key = {"embedded_context": "embeddedContext"}.get(feature, feature)
            return self._marker("session", "prompt", key) is not None
        if feature == "load":
            return self._marker("loadSession") is True
        if feature in ("resume", "list", "close"):
            return self._marker("sessionCapabilities", feature) is not None
        key = {"embedded_context": "embeddedContext"}.get(feature, feature)
        return self._marker("promptCapabilities", key) is True
