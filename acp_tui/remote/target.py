"""Where a remote agent is and how acp-tui proves who it is there: its URL, a bearer token
(from a file or the environment, never the command line, where `ps` shows it to everyone),
headers from the config, and the cookies the server set."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import msgspec

if TYPE_CHECKING:
    import ssl

TOKEN_VARIABLE = "ACP_TUI_TOKEN"
"""The environment variable a bearer token is taken from when no token file is given."""

SCHEMES = ("ws", "wss", "http", "https")


class TargetError(Exception):
    """The remote agent cannot be reached as given (a bad URL, an unreadable token)."""


class RemoteTarget(msgspec.Struct):
    """A remote agent: `--connect URL`, or `url` in an agent's table of the config."""

    url: str
    token_file: Path | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    """Sent with every request (the config's `headers`)."""
    fs: bool = True
    terminal: bool = True
    """Whether the agent may have this machine's files and commands (the config's
    `remote_fs`, `remote_terminal`), in the workspace as a local agent."""
    cookies: dict[str, str] = msgspec.field(default_factory=dict)
    """What the server set, sent back on every request and kept across reconnects, so that a
    load balancer routes acp-tui back to the backend that holds its sessions (the RFD asks
    clients to keep them)."""

    @property
    def websocket(self) -> bool:
        return urlsplit(self.url).scheme in ("ws", "wss")

    def request_headers(self, *, cookies: bool = True) -> dict[str, str]:
        """The headers of every request: the config's, the bearer token, the cookies (unless
        the HTTP client keeps them itself)."""
        headers = dict(self.headers)
        token = self.token()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if cookies and self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return headers

    def token(self) -> str | None:
        """The bearer token: the token file's first line, else `ACP_TUI_TOKEN`. Read at each
        connection, so that a rotated token is taken on the next reconnect."""
        if self.token_file is None:
            return os.environ.get(TOKEN_VARIABLE, "").strip() or None
        try:
            text = self.token_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise TargetError(f"cannot read the token file {self.token_file}: {error}") from None
        token = text.strip().splitlines()[0].strip() if text.strip() else ""
        if not token:
            raise TargetError(f"the token file {self.token_file} is empty")
        return token

    def keep_cookies(self, set_cookie: list[str]) -> None:
        """Take the server's `Set-Cookie` headers (name and value; attributes are the
        server's business for one connection's life)."""
        for header in set_cookie:
            name, sep, value = header.split(";", 1)[0].partition("=")
            if sep and name.strip():
                self.cookies[name.strip()] = value.strip()


def check_url(url: str) -> str | None:
    """What is wrong with `url` as a remote agent's address; None when nothing is."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        return f"{url!r} is not a ws://, wss://, http:// or https:// URL"
    if not parts.hostname:
        return f"{url!r} names no host"
    return None


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The system's authorities (and `$SSL_CERT_FILE`) for both profiles' TLS: loaded once, not
    for every stream and every upgrade (each SSE stream has a connection of its own)."""
    import ssl  # here: the config imports this module before the agent's head start

    return ssl.create_default_context()
