"""Sending a review (`s` in the changes view): the hunks rejected, which are reverted on disk,
and a line for why, which goes to the agent with them as the next prompt. And `e`: the file
opened in the user's editor, the app suspended meanwhile, and what they changed kept as theirs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Static

from acp_tui.checkpoints.hunks import HunkLines, hunk_lines, hunks
from acp_tui.conversation.changes import FAILURES, SessionChanges
from acp_tui.conversation.editor import editor_argv
from acp_tui.conversation.review import Review, review_prompt, where
from acp_tui.conversation.sign_in import run_in_terminal
from acp_tui.text import shorten
from acp_tui.ui.screens.dialog import Dialog
from acp_tui.ui.screens.rewind import report

if TYPE_CHECKING:
    from textual.app import App

SHOWN = 12
"""Hunks listed before `… and N more`."""


class ReviewScreen(Dialog[str | None]):
    """`Revert 3 hunks and tell the agent?` with a line for the reason: Enter sends (the
    reason may stay empty), Esc goes back to the review. Its answer: the reason."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Back to the review")]

    DEFAULT_CSS = """
    ReviewScreen > Vertical { width: 84; }
    ReviewScreen VerticalScroll { height: auto; max-height: 14; margin: 1 0 0 0; }
    ReviewScreen .review--intro { margin: 1 0 0 0; }
    ReviewScreen Input { margin: 1 0 0 0; border: tall $surface-lighten-1; }
    ReviewScreen Input:focus { border: tall $accent; }
    ReviewScreen .review--keys { color: $text-muted; margin: 1 0 1 0; }
    """

    def __init__(self, rejected: Sequence[tuple[str, HunkLines]], turn: int) -> None:
        super().__init__()
        self.rejected = list(rejected)
        self.turn = turn

    def compose(self) -> ComposeResult:
        count = len(self.rejected)
        noun = "hunk" if count == 1 else "hunks"
        with Vertical() as box:
            box.border_title = f"Revert {count} {noun} and tell the agent?"
            yield Static(
                f"Rejected in turn {self.turn}: put back as they were before it, in the files "
                "as they are now (a file changed there since is left alone).",
                classes="review--intro",
            )
            with VerticalScroll():
                yield Static(_hunk_list(self.rejected))
            yield Input(placeholder="Why? (optional: the agent reads it)", id="review-reason")
            yield Static(
                Content.assemble(
                    ("enter", "bold"),
                    "  revert, and send this as your next prompt     ",
                    ("esc", "bold"),
                    "  back to the review",
                ),
                classes="review--keys",
            )

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _send(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _hunk_list(rejected: Sequence[tuple[str, HunkLines]]) -> Content:
    rows = []
    for path, lines in rejected[:SHOWN]:
        taken = f"-{len(lines.removed)}" if lines.removed else ""
        put = f"+{len(lines.added)}" if lines.added else ""
        first = next(iter(lines.added or lines.removed), "")
        rows.append(
            Content.assemble(
                ("✗ ", "bold $text-error"),
                (where(path, lines), "bold"),
                "  ",
                (put, "$text-success"),
                " " if put and taken else "",
                (taken, "$text-error"),
                ("  " + shorten(first.strip(), 40), "$text-muted"),
            )
        )
    if len(rejected) > SHOWN:
        rows.append(Content.styled(f"… and {len(rejected) - SHOWN} more", "$text-muted"))
    return Content("\n").join(rows)


async def send_review(
    app: App[object],
    changes: SessionChanges,
    review: Review,
    versions: Mapping[str, tuple[str, str]],
) -> str | None:
    """Ask why, revert the hunks `review` rejected (`versions`: each file's text before and
    after the turn), say so, and forget their verdicts; the prompt that tells the agent (None
    when nothing was reverted, or the user went back)."""
    rejected = review.rejected()
    listed = []
    for path, indexes in rejected.items():
        old, new = versions[path]
        found = hunks(old, new)
        listed += [(path, hunk_lines(old, new, found[index])) for index in indexes]
    reason = await app.push_screen_wait(ReviewScreen(listed, review.turn))
    if reason is None:
        return None
    try:
        result = await changes.revert_hunks(review.turn, rejected)
    except FAILURES as error:
        app.notify(str(error), title="Nothing reverted", severity="error")
        return None
    if result is None:
        return None
    count = len(listed)
    what = f"{count} {'hunk' if count == 1 else 'hunks'} of {', '.join(rejected)}"
    report(app, changes, result, what, "Reverted", f"turn {review.turn}", told=True)
    if result.failed:
        left = "\n".join(f"{path}: {reason}" for path, reason in result.failed)
        app.notify(left, title="Left alone, and not told", severity="warning", timeout=10)
    review.forget(result.restored)
    reverted = [(path, lines) for path, lines in listed if path in result.restored]
    return review_prompt(reverted, reason) if reverted else None


async def edit_in_editor(app: App[object], changes: SessionChanges, path: str, line: int) -> None:
    """Open `path` at `line` in the user's editor, the app suspended until it closes; what
    they changed meanwhile is checkpointed as theirs (and said in the conversation)."""
    try:
        before = await changes.edit_begins()
    except FAILURES as error:
        app.notify(f"{error}", title="Your edit will count as no one's", severity="warning")
        before = None
    argv = editor_argv(path, line)
    try:
        with app.suspend():
            status = await asyncio.to_thread(run_in_terminal, argv, {}, changes.workspace)
    except SuspendNotSupported:
        app.notify("This terminal cannot be handed to an editor.", severity="error")
        return
    if status != 0:
        app.notify(f"{argv[0]} ended with status {status}.", title="Editor", severity="warning")
    if before is not None:
        try:
            await changes.edit_ends(before)
        except FAILURES as error:
            app.notify(str(error), title="Your edit was not checkpointed", severity="warning")
