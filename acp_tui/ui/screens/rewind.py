"""Asks before a rewind: the files it puts back or deletes, the ones someone changed after the
turn ended picked out (rewind them too, or keep them), and how to undo it.

Rewinding a whole turn may also go on from before it in a new session (`c`); with files
changed after the turn, that asks the same question again, keep them or not, before it goes.
Then the rewind is done and said (`confirm_and_apply`, `report`), or undone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import var
from textual.widgets import Static

from acp_tui.checkpoints.rewind import RewindPlan, RewindResult, Stale
from acp_tui.conversation.changes import FAILURES, NoCheckpoints, SessionChanges
from acp_tui.ui.screens.dialog import Dialog

if TYPE_CHECKING:
    from textual.app import App

SHOWN = 30
"""Files listed before `… and N more`."""


@dataclass(frozen=True, slots=True)
class RewindChoice:
    """What the user chose (None: nothing, cancelled)."""

    keep_later: bool = False
    """Leave the files changed after the turn as they are."""
    go_on: bool = False
    """Then continue the conversation from before the turn, in a new session."""


class RewindScreen(Dialog[RewindChoice | None]):
    """`Rewind turn 3?` y (everything) · k (keep what changed after the turn) · c (and go on
    from there) · n / esc; `Revert app.py?` for one file."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer('all')", "Rewind"),
        Binding("k", "answer('keep')", "Keep later changes"),
        Binding("c", "go_on", "Rewind and continue from here"),
        Binding("n,escape", "answer('cancel')", "Cancel"),
    ]

    DEFAULT_CSS = """
    RewindScreen > Vertical { width: 80; }
    RewindScreen VerticalScroll { height: auto; max-height: 16; }
    RewindScreen .rewind--intro { margin: 1 0 0 0; }
    RewindScreen .rewind--warning { color: $text-warning; margin: 1 0 0 0; }
    RewindScreen .rewind--undo { color: $text-muted; margin: 1 0 0 0; }
    RewindScreen .rewind--keys { color: $text-muted; margin: 1 0 1 0; }
    RewindScreen.-going-on .rewind--keys { color: $text; }
    """

    going_on: var[bool] = var(False, init=False, toggle_class="-going-on")
    """`c` was pressed with files changed after the turn: asking whether to keep them."""

    def __init__(self, plan: RewindPlan, title: str, *, can_continue: bool = False) -> None:
        super().__init__()
        self.plan = plan
        self.title_text = title
        self.can_continue = can_continue
        """A whole turn: the conversation can go on from before it, in a new session."""
        self.verb = "revert" if plan.paths else "rewind"

    def compose(self) -> ComposeResult:
        plan = self.plan
        conflicts = plan.conflicts
        with Vertical() as box:
            box.border_title = self.title_text
            yield Static(self._intro(), classes="rewind--intro")
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
            yield Static(self._keys(), classes="rewind--keys")

    def _intro(self) -> str:
        plan = self.plan
        if len(plan.paths) == 1:
            return f"{plan.paths[0]} goes back to how it was before {plan.label}:"
        count = len(plan.files)
        if count == 1:
            return f"1 file goes back to how it was before {plan.label}:"
        return f"{count} files go back to how they were before {plan.label}:"

    def _keys(self) -> str:
        verb = self.verb
        if self.going_on:
            them = "it" if len(self.plan.conflicts) == 1 else "them"
            return (
                f"Continue from before {self.plan.label} in a new session. And the files "
                f"changed after the turn?\ny / enter  {verb} {them} too     k  keep {them}     "
                "esc  back"
            )
        keys = f"y / enter  {verb}     n / esc  cancel"
        if self.plan.conflicts:
            keys = f"y / enter  {verb} all     k  keep the later changes     n / esc  cancel"
        if self.can_continue:
            keys += (
                f"\nc  {verb}, and continue the conversation from here in a new session "
                "(the agent gets a summary of the turns before; it does not remember "
                "them, nor anything after)"
            )
        return keys

    def watch_going_on(self) -> None:
        self.query_one(".rewind--keys", Static).update(self._keys())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer" and parameters == ("keep",):
            return bool(self.plan.conflicts)
        if action == "go_on":
            return self.can_continue and not self.going_on
        return True

    def action_go_on(self) -> None:
        if self.plan.conflicts:
            self.going_on = True  # whether to keep them is asked again, for this
        else:
            self.dismiss(RewindChoice(go_on=True))

    def action_answer(self, answer: Literal["all", "keep", "cancel"]) -> None:
        if answer == "cancel":
            if self.going_on:
                self.going_on = False
            else:
                self.dismiss(None)
            return
        self.dismiss(RewindChoice(keep_later=answer == "keep", go_on=self.going_on))


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


async def confirm_and_apply(
    app: App[object],
    changes: SessionChanges,
    plan: RewindPlan,
    title: str,
    *,
    can_continue: bool = False,
) -> tuple[RewindChoice | None, RewindResult | None]:
    """Ask (the files, those changed after the turn picked out), then rewind; the answer,
    and the result (None when nothing was done)."""
    if not plan.files and not can_continue:
        if plan.not_put_back:
            app.notify(
                "\n".join(f"{path}: {reason}" for path, reason in plan.not_put_back[:5]),
                title="Nothing can be put back",
                severity="warning",
            )
        else:
            app.notify(
                f"The files are as they were before {plan.label} already.", title="Nothing to do"
            )
        return None, None
    answer = await app.push_screen_wait(RewindScreen(plan, title, can_continue=can_continue))
    if answer is None:
        return answer, None
    try:
        result = await changes.apply(plan, skip_conflicts=answer.keep_later)
    except Stale as error:
        app.notify(str(error), title="Not rewound", severity="warning")
    except FAILURES as error:
        app.notify(str(error), title="Not rewound", severity="error")
    else:
        return answer, result
    return answer, None


def report(
    app: App[object],
    changes: SessionChanges,
    result: RewindResult,
    what: str,
    verb: str = "Rewound",
    before: str = "",
    *,
    told: bool = False,
) -> None:
    """Say in the conversation, and in a notification, what a rewind did (`before`: the turn
    the files `what` names went back to; `told`: the agent is told in the next prompt)."""
    title, line = changes.said(result, what, verb, before, told=told)
    severity = "warning" if result.failed or result.not_put_back else "information"
    app.notify(line, title=title, severity=severity)


async def undo_last_rewind(app: App[object], changes: SessionChanges) -> None:
    """Put back what the session's last rewind replaced (asking first)."""
    if changes.busy:
        app.notify("Wait for the turn to end, or cancel it.", title="A turn is running")
        return
    try:
        plan = await changes.undo_plan()
    except NoCheckpoints as error:
        app.notify(str(error), title="No checkpoints", severity="warning")
        return
    except FAILURES as error:
        app.notify(str(error), title="Not undone", severity="error")
        return
    if plan is None:
        app.notify("This session has no rewind to undo.", title="Nothing to undo")
        return
    _answer, result = await confirm_and_apply(app, changes, plan, "Undo the last rewind?")
    if result is not None:
        report(app, changes, result, "the last rewind", verb="Undid")
