"""What carries a remote agent's messages: one of the RFD's two profiles, behind one face."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Channel(Protocol):
    """One of the RFD's two profiles, carrying whole JSON-RPC messages both ways."""

    async def send(self, message: bytes) -> None:
        """Send one message; raises `ConnectionError` when the connection is gone."""
        ...

    async def run(self) -> str:
        """Deliver the server's messages until the connection ends; why it ended."""
        ...

    async def close(self) -> None:
        """End the connection (the server is told, where the profile can tell it)."""
        ...


Deliver = Callable[[list[bytes]], None]
"""Where a channel puts the messages the server sent, in order: as many at once as it has
(a WebSocket's TCP read may bring thousands)."""
