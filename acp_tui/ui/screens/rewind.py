"""Asks before a rewind: the files it puts back or deletes, the ones someone changed after the
turn ended picked out, and how to undo it."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from acp_tui.checkpoints.rewind import RewindPlan
from acp_tui.ui.screens.dialog import Dialog

Answer = Literal["all", "keep", "continue", "cancel"]
SHOWN = 30
"""Files listed before `… and N more`."""


class RewindScreen(Dialog[Answer]):
    """`Rewind turn 3?` y (everything) · k (keep what changed after the turn) · n / esc."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer('all')", "Rewind"),
        Binding("k", "answer('keep')", "Keep later changes"),
        Binding("c", "answer('continue')", "Rewind and continue from here"),
        Binding("n,escape", "answer('cancel')", "Cancel"),
    ]

    DEFAULT_CSS = """
    RewindScreen > Vertical { width: 80; }
    RewindScreen VerticalScroll { height: auto; max-height: 16; }
    RewindScreen .rewind--intro { margin: 1 0 0 0; }
    RewindScreen .rewind--warning { color: $text-warning; margin: 1 0 0 0; }
    RewindScreen .rewind--undo { color: $text-muted; margin: 1 0 0 0; }
    RewindScreen .rewind--keys { color: $text-muted; margin: 1 0 1 0; }
    """

    def __init__(self, plan: RewindPlan, title: str, *, can_continue: bool = False) -> None:
        super().__init__()
        self.plan = plan
        self.title_text = title
        self.can_continue = can_continue
        """A whole turn: the conversation can go on from before it, in a new session."""

    def compose(self) -> ComposeResult:
        plan = self.plan
        conflicts = plan.conflicts
        with Vertical() as box:
            box.border_title = self.title_text
            count = len(plan.files)
            noun = "file" if count == 1 else "files"
            yield Static(
                f"{count} {noun} {'goes' if count == 1 else 'go'} back to how "
                f"{'it was' if count == 1 else 'they were'} before {plan.label}:",
                classes="rewind--intro",
            )
            with VerticalScroll():
                yield Static(_file_list(plan))
            if conflicts:
                yield Static(
                    f"! {len(conflicts)} of them changed after the turn ended: by you, or "
                    "by anyone but the agent in its turns.",
                    classes="rewind--warning",
                )
            yield Static(
                "What is there now is kept first: U in the changes view (or Ctrl+P, Undo the "
                "last rewind) brings it back.",
                classes="rewind--undo",
            )
            keys = "y / enter  rewind     n / esc  cancel"
            if conflicts:
                keys = "y / enter  rewind all     k  keep the later changes     n / esc  cancel"
            if self.can_continue:
                keys += (
                    "\nc  rewind, and continue the conversation from here in a new session "
                    "(the agent gets a summary of the turns before; it does not remember "
                    "them, nor anything after)"
                )
            yield Static(keys, classes="rewind--keys")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer" and parameters == ("keep",):
            return bool(self.plan.conflicts)
        if action == "answer" and parameters == ("continue",):
            return self.can_continue
        return True

    def action_answer(self, answer: Answer) -> None:
        self.dismiss(answer)


def _file_list(plan: RewindPlan) -> Content:
    lines: list[Content] = []
    for restore in plan.files[:SHOWN]:
        if restore.action == "delete":
            verb = ("delete  ", "$text-error")
        else:
            verb = ("restore ", "$text-success")
        parts: list[tuple[str, str] | str] = [verb, restore.path]
        if restore.user_changed:
            parts.append(("  changed since the turn: yours?", "bold $text-warning"))
        lines.append(Content.assemble(*parts))
    hidden = len(plan.files) - SHOWN
    if hidden > 0:
        lines.append(Content.styled(f"… and {hidden} more", "$text-muted"))
    for path, reason in plan.not_put_back[:SHOWN]:
        lines.append(
            Content.assemble(
                ("keep    ", "$text-warning"), path, (f"  not put back: {reason}", "$text-muted")
            )
        )
    return Content("\n").join(lines)
