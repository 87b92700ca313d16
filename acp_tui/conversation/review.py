"""Reviewing what a turn changed, hunk by hunk: the user accepts or rejects each (or a whole
file at once); the rejected ones are reverted, and the agent is told which, and why, in the
next prompt, so that it does not build on lines that are gone (or write them again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from acp_tui.checkpoints.hunks import HunkLines
from acp_tui.text import fence

Verdict = Literal["accepted", "rejected"]

LINES_SHOWN = 20
"""At most this many lines of one hunk in the prompt: enough to say what went, the agent
reads the rest in its own file if it wants it."""


class Review:
    """The user's verdicts on the hunks of one turn, by file and hunk index (as `hunks`
    numbers them). A hunk not judged yet is neither accepted nor rejected."""

    def __init__(self, turn: int) -> None:
        self.turn = turn
        self.verdicts: dict[str, dict[int, Verdict]] = {}

    def judge(self, path: str, index: int, verdict: Verdict) -> None:
        """Give hunk `index` of `path` this verdict; the same one again takes it back."""
        verdicts = self.verdicts.setdefault(path, {})
        if verdicts.get(index) == verdict:
            del verdicts[index]
        else:
            verdicts[index] = verdict

    def judge_file(self, path: str, count: int, verdict: Verdict) -> None:
        """Every one of the `count` hunks of `path`; again, when they all have it already,
        takes it back from all."""
        verdicts = self.verdicts.setdefault(path, {})
        if all(verdicts.get(index) == verdict for index in range(count)):
            verdicts.clear()
        else:
            verdicts.update(dict.fromkeys(range(count), verdict))

    def verdict(self, path: str, index: int) -> Verdict | None:
        return self.verdicts.get(path, {}).get(index)

    def count(self, path: str, verdict: Verdict) -> int:
        return sum(1 for given in self.verdicts.get(path, {}).values() if given == verdict)

    def rejected(self) -> dict[str, list[int]]:
        """The rejected hunks' indexes, by file (files in the order they were judged)."""
        found = {
            path: sorted(i for i, verdict in verdicts.items() if verdict == "rejected")
            for path, verdicts in self.verdicts.items()
        }
        return {path: indexes for path, indexes in found.items() if indexes}

    def forget(self, paths: Sequence[str]) -> None:
        """The verdicts on `paths`, acted on: gone."""
        for path in paths:
            self.verdicts.pop(path, None)


def where(path: str, lines: HunkLines) -> str:
    """`app.py:12-14`, `app.py:12`: where the hunk's lines are in the file as the turn left it."""
    span = f"{lines.first}" if lines.last == lines.first else f"{lines.first}-{lines.last}"
    return f"{path}:{span}"


def review_prompt(reverted: Sequence[tuple[str, HunkLines]], reason: str = "") -> str:
    """What the agent is told of the hunks the user reverted: where each was (its lines as
    the agent wrote them), what it took out and put in, and the user's reason if any."""
    what = "this change" if len(reverted) == 1 else "these changes"
    files = "file has" if len({path for path, _lines in reverted}) == 1 else "files have"
    parts = [f"I reverted {what} of yours: the {files} the - lines again, not your + lines."]
    for path, lines in reverted:
        body = [f"-{line}" for line in lines.removed] + [f"+{line}" for line in lines.added]
        if len(body) > LINES_SHOWN:
            body = [*body[:LINES_SHOWN], f"… {len(body) - LINES_SHOWN} more lines"]
        diff = fence("\n".join(body), "diff")
        parts.append(f"{where(path, lines)}\n{diff}")
    if reason.strip():
        parts.append(f"Because: {reason.strip()}")
    return "\n\n".join(parts)


__all__ = ["Review", "Verdict", "review_prompt", "where"]
