"""Text appended to a view and not yet taken in: the chunks as given, read from an offset."""

from __future__ import annotations

from collections import deque


class PendingText:
    """Chunks of text waiting to be taken in, first in first out.

    Only what is taken (or peeked at) is copied: in a flood the text waiting for the frames to
    come is megabytes (all of an answer's rest, for a view that goes on from another), and
    joining and cutting all of it every frame made a frame cost the answer's length, and left
    the heap holding as many freed copies (bench/README.md, "Long answers (issue 29)")."""

    __slots__ = ("chunks", "done", "size", "taken")

    def __init__(self, text: str = "") -> None:
        self.chunks: deque[str] = deque([text] if text else [])
        self.taken = 0
        """Characters at the start of `chunks[0]` already taken."""
        self.size = len(text)
        """Characters pending (a flood's frame asks, with tens of thousands of chunks)."""
        self.done = 0
        """Characters taken out or cleared so far: where the pending text starts in all of it."""

    def __bool__(self) -> bool:
        return self.size > 0

    def __len__(self) -> int:
        return self.size

    def append(self, text: str) -> None:
        self.chunks.append(text)
        self.size += len(text)

    def clear(self) -> None:
        self.chunks.clear()
        self.done += self.size
        self.taken = self.size = 0

    def text(self) -> str:
        """All of it, left pending."""
        return "".join(self.chunks)[self.taken :]

    def peek(self, budget: int) -> str:
        """The first `budget` characters, left pending."""
        peeked: list[str] = []
        size, start = 0, self.taken
        for chunk in self.chunks:
            if size >= budget:
                break
            peeked.append(chunk[start : start + budget - size])
            size += len(peeked[-1])
            start = 0
        return "".join(peeked)

    def take(self, budget: int | None = None) -> str:
        """The first `budget` characters (all of them without one), taken out."""
        if budget is None:
            text = self.text()
            self.clear()
            return text
        taken: list[str] = []
        size = 0
        while self.chunks and size < budget:
            first = self.chunks[0]
            end = min(len(first), self.taken + budget - size)
            taken.append(first[self.taken : end])
            size += end - self.taken
            if end == len(first):
                self.chunks.popleft()
                self.taken = 0
            else:
                self.taken = end
        self.size -= size
        self.done += size
        return "".join(taken)
