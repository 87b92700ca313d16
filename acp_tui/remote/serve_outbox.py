"""What the agent said for one stream of a remote connection, kept until a stream takes it.

A stream that drops (a WebSocket lost, an SSE response cut) leaves its outbox filling; the
stream that takes its place, within the grace period, is given what was said meanwhile, in
order. A message a stream failed to send is put back first: the next stream sends it again.
"""

from __future__ import annotations

import asyncio
from collections import deque


class Outbox:
    """Messages for one stream, in order; taken by one stream at a time (the latest)."""

    def __init__(self) -> None:
        self._items: deque[bytes] = deque()
        self._ready = asyncio.Event()
        self._taker: object | None = None
        self._closed = False
        self.size = 0
        """Bytes kept."""
        self.streams = 0
        """How many streams have taken from it: more than one, and a client came back."""

    def put(self, item: bytes) -> None:
        self._items.append(item)
        self.size += len(item)
        self._ready.set()

    def put_back(self, items: list[bytes]) -> None:
        """`items`, taken but not sent, first again."""
        self._items.extendleft(reversed(items))
        self.size += sum(map(len, items))
        self._ready.set()

    def attach(self) -> object:
        """Make a new stream the taker (a stream still taking, from before a reconnect, is
        told to stop); returns its token for `take`."""
        self._taker = token = object()
        self.streams += 1
        self._ready.set()
        return token

    def detach(self, token: object) -> None:
        """The stream of `token` is gone (its `take` returns None)."""
        if self._taker is token:
            self._taker = None
            self._ready.set()

    async def take(self, token: object, most: int = 0) -> list[bytes] | None:
        """The next messages for the stream of `token`: one, and more while they come to
        less than `most` bytes (a stream that sends many at once sends them together); None
        once that stream is replaced, or once the outbox is closed and all it held taken."""
        while self._taker is token:
            if self._items:
                taken = [self._items.popleft()]
                size = len(taken[0])
                while self._items and size + len(self._items[0]) < most:
                    taken.append(self._items.popleft())
                    size += len(taken[-1])
                self.size -= size
                return taken
            if self._closed:
                return None
            self._ready.clear()
            await self._ready.wait()
        return None

    def close(self) -> None:
        """No more messages: what is kept is still taken, then `take` returns None."""
        self._closed = True
        self._ready.set()
