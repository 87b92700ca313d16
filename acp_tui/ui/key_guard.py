"""A guard for dialogs that answer to single keys: keys typed just before one appeared are
not answers.

A permission dialog opens while the user is typing a prompt; without a guard the next letters
of the prompt answer it (`a` allows, `r` rejects, Enter picks the selected option). So a dialog
arms a `KeyGuard` when it shows something new: for `KEY_GUARD_SECONDS` after that, and after
every key it swallows (someone in the middle of a word has not read the dialog yet), answer
keys do nothing. Printable characters it swallows go on into the draft they were meant for, so
the prompt does not lose letters either. Escape, control and function keys pass: they never
answer, and Escape must still cancel a turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import events
from textual.widgets import TextArea

KEY_GUARD_SECONDS = 0.4
"""How long a freshly shown dialog ignores answer keys: longer than the gap between two
keystrokes of someone typing, shorter than reading the dialog and deciding. Tests may set it."""
GUARDED_KEYS = frozenset({"enter", "space", "tab", "shift+tab", "up", "down", "left", "right"})
"""Keys without a character that may still answer (choose, move between options)."""


class KeyGuard:
    """Swallows answer keys for a short while after `arm`."""

    def __init__(
        self, seconds: float | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seconds = seconds
        """The guard time; None: `KEY_GUARD_SECONDS` as it is when armed."""
        self.draft: TextArea | None = None
        """Where swallowed characters go: the prompt the user was typing, if any."""
        self._clock = clock
        self._until = 0.0

    @property
    def duration(self) -> float:
        return KEY_GUARD_SECONDS if self.seconds is None else self.seconds

    @property
    def armed(self) -> bool:
        return self._clock() < self._until

    def arm(self) -> None:
        """Something new is shown: ignore answer keys for the guard time from now."""
        self._until = self._clock() + self.duration

    def disarm(self) -> None:
        self._until = 0.0

    def intercept(self, event: events.Key) -> bool:
        """Whether `event` was swallowed: the guard is armed and the key could answer. It is
        then stopped, its character handed to `draft`, and the guard held a while longer,
        since the user is still typing."""
        if not self.armed:
            return False
        printable = event.is_printable and bool(event.character)
        if not printable and event.key not in GUARDED_KEYS:
            return False
        event.stop()
        event.prevent_default()
        self.arm()
        if printable and self.draft is not None and event.character is not None:
            self.draft.insert(event.character)
        return True
