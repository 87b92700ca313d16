"""A file's change cut into hunks, as the diff view shows them, and undoing some of them in the
file as it is now (which may hold other changes since: the rest of it is left as it is).

Pure text in, text out: reading and writing the file is `rewind`'s.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Hunk:
    """One hunk of a file's diff: lines `[old_start, old_end)` of the old text became lines
    `[new_start, new_end)` of the new one (three lines of context included, as shown)."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int


@dataclass(frozen=True, slots=True)
class HunkLines:
    """What a hunk changed, without its context: the lines it took out and put in, and where
    those are in the new text (`first`, 1-based; for lines only taken out, the line they
    were before)."""

    first: int
    removed: tuple[str, ...]
    added: tuple[str, ...]

    @property
    def last(self) -> int:
        """The last line it put in (`first` when it only took lines out)."""
        return self.first + max(len(self.added), 1) - 1


def hunks(old: str, new: str, context: int = 3) -> list[Hunk]:
    """The hunks of the diff from `old` to `new`, grouped as the diff view shows them."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return [
        Hunk(group[0][1], group[-1][2], group[0][3], group[-1][4])
        for group in matcher.get_grouped_opcodes(context)
    ]


def hunk_lines(old: str, new: str, hunk: Hunk) -> HunkLines:
    """The changed part of `hunk`: its context (the lines both sides share at its ends) cut
    off."""
    removed = old.splitlines()[hunk.old_start : hunk.old_end]
    added = new.splitlines()[hunk.new_start : hunk.new_end]
    head = 0
    while head < min(len(removed), len(added)) and removed[head] == added[head]:
        head += 1
    tail = 0
    most = min(len(removed), len(added)) - head
    while tail < most and removed[-1 - tail] == added[-1 - tail]:
        tail += 1
    return HunkLines(
        hunk.new_start + head + 1,
        tuple(removed[head : len(removed) - tail]),
        tuple(added[head : len(added) - tail]),
    )


def unapply_hunks(current: str, old: str, new: str, chosen: Sequence[Hunk]) -> str | None:
    """`current` with every hunk of `chosen` (of the change from `old` to `new`) undone: the
    new lines of each (and its context) found in `current`, where they were or, failing that,
    once elsewhere, and put back as they were. None (nothing undone) when any of them is not
    there any more: a file is reverted as asked, or left alone."""
    lines = current.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    found: list[tuple[int, Hunk]] = []
    for hunk in chosen:
        at = _found_at(lines, new_lines, hunk)
        if at is None:
            return None
        found.append((at, hunk))
    found.sort(key=lambda pair: pair[0])
    for (at, hunk), (following, _) in itertools.pairwise(found):
        if at + hunk.new_end - hunk.new_start > following:
            return None  # two hunks found on the same lines: which was meant?
    # From the last one up, so that where each earlier one lies does not move.
    for at, hunk in reversed(found):
        lines = _unapplied(lines, at, old, hunk)
    return "".join(lines)


def line_now(current: str, old: str, new: str, hunk: Hunk) -> int:
    """Where the changed part of `hunk` starts in `current`, the file as it is now (moved
    with the lines added or taken out above it since); where the turn left it when the hunk
    is not found as it was."""
    first = hunk_lines(old, new, hunk).first
    at = _found_at(current.splitlines(keepends=True), new.splitlines(keepends=True), hunk)
    return first if at is None else first + at - hunk.new_start


def _found_at(lines: list[str], new_lines: list[str], hunk: Hunk) -> int | None:
    """Where the hunk's new lines (and context) are in `lines`: where they were, else the one
    place elsewhere; None when they are nowhere or in several places."""
    wanted = [line.rstrip("\r\n") for line in new_lines[hunk.new_start : hunk.new_end]]
    size = len(wanted)

    def matches(at: int) -> bool:
        return [line.rstrip("\r\n") for line in lines[at : at + size]] == wanted

    if 0 <= hunk.new_start <= len(lines) - size and matches(hunk.new_start):
        return hunk.new_start
    found = [i for i in range(len(lines) - size + 1) if matches(i)]
    return found[0] if len(found) == 1 else None


def _unapplied(lines: list[str], at: int, old: str, hunk: Hunk) -> list[str]:
    size = hunk.new_end - hunk.new_start
    restored = old.splitlines(keepends=True)[hunk.old_start : hunk.old_end]
    if restored and at + size < len(lines) and not restored[-1].endswith(("\n", "\r")):
        restored[-1] += "\n"  # the old text ended there; the current one goes on
    return [*lines[:at], *restored, *lines[at + size :]]


__all__ = ["Hunk", "HunkLines", "hunk_lines", "hunks", "line_now", "unapply_hunks"]
