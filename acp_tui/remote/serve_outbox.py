"""What the agent said for one stream of a remote connection, kept until a stream takes it.

A stream that drops (a WebSocket lost, an SSE response cut) leaves its outbox filling; the
stream that takes its place, within the grace period, is given what was said meanwhile, in
order. A message a stream failed to send is put back first: the next stream sends it again.

Each message has a number, in order (an SSE event's `id`). What was sent last is kept a while
(`RESENDABLE` bytes): sent into a connection that was already dying, it never arrived, and a
stream that comes back saying the last it had (`Last-Event-ID`) is sent the rest again.
"""

from __future__ import annotations

import asyncio
from collections import deque

RESENDABLE = 1024 * 1024
"""Bytes of sent messages kept, newest first, for a stream that comes back for them."""

Numbered = tuple[int, bytes]
"""A message and its number."""


class Outbox:
    """Messages for one stream, in order; taken by one stream at a time (the latest)."""

    def __init__(self) -> None:
        self._items: deque[Numbered] = deque()
        self._sent: deque[Numbered] = deque()
        self._sent_size = 0
        self._numbered = 0
        self._ready = asyncio.Event()
        self._taker: object | None = None
        self._closed = False
        self.size = 0
        """Bytes kept."""
        self.streams = 0
        """How many streams have taken from it: more than one, and a client came back."""

    def put(self, item: bytes) -> None:
        self._numbered += 1
        self._items.append((self._numbered, item))
        self.size += len(item)
        self._ready.set()

    def put_back(self, items: list[Numbered]) -> None:
        """`items`, taken but not sent, first again."""
        self._items.extendleft(reversed(items))
        self.size += sum(len(item) for _, item in items)
        self._ready.set()

    def sent(self, items: list[Numbered]) -> None:
        """`items` were sent: kept a while, for `resend`."""
        self._sent.extend(items)
        self._sent_size += sum(len(item) for _, item in items)
        while self._sent_size > RESENDABLE and len(self._sent) > 1:
            self._sent_size -= len(self._sent.popleft()[1])

    def resend(self, after: int) -> None:
        """Send again what was sent after message `after` (the last one a stream that comes
        back had), as far as it is kept."""
        again = [numbered for numbered in self._sent if numbered[0] > after]
        self._sent.clear()
        self._sent_size = 0
        self.put_back(again)

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

    async def take(self, token: object, most: int = 0) -> list[Numbered] | None:
        """The next messages for the stream of `token`: one, and more while they come to
        less than `most` bytes (a stream that sends many at once sends them together); None
        once that stream is replaced, or once the outbox is closed and all it held taken."""
        while self._taker is token:
            if self._items:
                taken = [self._items.popleft()]
                size = len(taken[0][1])
                while self._items and size + len(self._items[0][1]) < most:
                    taken.append(self._items.popleft())
                    size += len(taken[-1][1])
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
