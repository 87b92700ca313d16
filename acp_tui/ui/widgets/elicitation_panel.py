"""The question dialog: an agent's `elicitation/create`, as a form or as a page to open.

Form mode shows every field at once (so the answers are reviewed where they are typed) and
sends nothing until the user presses Send (ctrl+s); answers are checked first, and a field
that is wrong says why. URL mode shows the full URL with its host picked out and any warning,
and opens it (or copies it) only when the user says so. Decline (ctrl+d) and cancel (esc) are
always a key away. Like the permission dialog, requests queue in order and each is bound to
its turn: one answered elsewhere (the turn was cancelled, the agent withdrew it) leaves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual import events, on
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import (
    Button,
    Checkbox,
    Input,
    RadioButton,
    RadioSet,
    SelectionList,
    Static,
)

from acp_tui.session.elicitation import (
    Entered,
    Form,
    FormField,
    PendingElicitation,
    check_answers,
    initial_value,
    url_host,
    url_warnings,
)
from acp_tui.ui.key_guard import KeyGuard


class ChoiceSet(RadioSet):
    """A single-choice field: Enter picks the highlighted choice and says so (`Chosen`), to
    answer a question that asks only that; Space just picks it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter", "choose", "Choose", show=False)]

    class Chosen(Message):
        """Enter picked the choice at `index`."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def action_choose(self) -> None:
        index = self._selected  # the highlighted choice, which RadioSet keeps to itself
        if index is not None:
            self.action_toggle_button()  # shown picked (a picked choice stays picked)
            self.post_message(self.Chosen(index))


def answers_on_enter(form: Form) -> bool:
    """Whether Enter on a choice sends the form: it asks one single choice, and whatever else
    it has may be left empty (Claude's question with its optional "Other" answer)."""
    choices = [f for f in form.fields if f.kind == "choice"]
    return len(choices) == 1 and not any(f.required for f in form.fields if f is not choices[0])


class ElicitationPanel(Vertical, can_focus=True):
    """Shows the oldest waiting question; Send, Decline or Cancel answers it.

    A new question takes focus itself, behind a `KeyGuard`: what the user was typing goes on
    into their draft, and only once they stop does the first field get the keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "send", "Send", priority=True),
        Binding("ctrl+d", "decline", "Decline", priority=True),
        Binding("escape", "dismiss", "Cancel question"),
    ]

    DEFAULT_CSS = """
    ElicitationPanel {
        display: none;
        height: auto;
        max-height: 85%;
        margin: 0 1;
        padding: 0 1;
        border: round $accent;
        border-title-color: $text-accent;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $accent 6%;
    }
    ElicitationPanel.-open { display: block; }
    ElicitationPanel:focus-within { border: round $accent-lighten-1; }
    ElicitationPanel > .question--message { text-style: bold; margin: 0 0 1 0; }
    ElicitationPanel > .question--about { color: $text-muted; }
    ElicitationPanel > .question--fields { height: auto; max-height: 50vh; }
    ElicitationPanel .field--label { margin: 1 0 0 0; }
    ElicitationPanel .field--label.-first { margin: 0; }
    ElicitationPanel .field--error { color: $text-error; display: none; }
    ElicitationPanel .field--error.-shown { display: block; }
    ElicitationPanel Input { margin: 0; width: 1fr; max-width: 80; }
    ElicitationPanel Input.-invalid { border: tall $error 60%; }
    ElicitationPanel RadioSet, ElicitationPanel SelectionList {
        width: auto; min-width: 30; max-width: 80; height: auto; max-height: 10;
    }
    ElicitationPanel Checkbox { width: auto; }
    /* An unpicked choice's mark: Textual's own ($panel-darken-2) is all but invisible. */
    ElicitationPanel ToggleButton > .toggle--button,
    ElicitationPanel RadioSet > RadioButton > .toggle--button,
    ElicitationPanel SelectionList > .selection-list--button,
    ElicitationPanel SelectionList > .selection-list--button-highlighted {
        color: $foreground 45%;
    }
    ElicitationPanel > .question--url { margin: 0 0 1 0; }
    ElicitationPanel > .question--warnings { color: $text-warning; }
    ElicitationPanel > .question--buttons { height: auto; margin: 1 0 0 0; }
    ElicitationPanel .question--buttons Button { margin: 0 2 0 0; min-width: 12; }
    """

    class Answered(Message):
        """A question was answered (or dropped): the panel may close, focus may move back."""

        def __init__(self, remaining: int, *, had_focus: bool) -> None:
            super().__init__()
            self.remaining = remaining
            self.had_focus = had_focus

    class OpenUrl(Message):
        """The user consented to open `url` (`copy`: copy it instead)."""

        def __init__(self, url: str, *, copy: bool) -> None:
            super().__init__()
            self.url = url
            self.copy = copy

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.waiting: Callable[[], list[PendingElicitation]] = list
        """Where the questions wait (the conversation's, its session's and its agent's own,
        the one place they wait); the dialog keeps no list of its own."""
        self.agent = "The agent"
        self._shown: PendingElicitation | None = None
        self._inputs: dict[str, Widget] = {}
        self._checked = False
        """Whether Send was pressed once: from then on, answers are checked as they change."""
        self.guard = KeyGuard()

    # -- the queue ----------------------------------------------------------------------------

    @property
    def queue(self) -> list[PendingElicitation]:
        """The questions waiting for the user, oldest first."""
        return [pending for pending in self.waiting() if not pending.done]

    @property
    def current(self) -> PendingElicitation | None:
        queue = self.queue
        return queue[0] if queue else None

    def add(self, pending: PendingElicitation) -> None:
        """A new question waits (where `waiting` reads): show it, or count it."""
        if self._shown is None:
            self._show()
        else:
            self._sync_title()

    def prune(self) -> None:
        """Drop questions answered elsewhere (a cancel, the end of the turn, a withdrawal)."""
        if self.current is not self._shown:
            had_focus = self.has_focus_within
            self._show()
            self.post_message(self.Answered(len(self.queue), had_focus=had_focus))
        else:
            self._sync_title()

    def focus_first(self) -> None:
        """Focus the first field (or, for a URL, the Open button)."""
        for widget in self.query("Input, RadioSet, SelectionList, Checkbox, Button").results():
            if widget.focusable:
                widget.focus()
                return

    # -- showing ------------------------------------------------------------------------------

    def _show(self) -> None:
        current = self.current
        self._shown = current
        self._checked = False
        self._inputs = {}
        self.remove_children()
        self.set_class(current is not None, "-open")
        if current is None:
            return
        self._sync_title()
        request = current.request
        self.mount(Static(Content(request.message or current.about), classes="question--message"))
        if current.mode == "url":
            self._show_url(request.url or "")
        else:
            self._show_form(current)
        if self.is_mounted:
            self._take_keys()

    def on_mount(self) -> None:
        # Mounted on the first question (`ChatScreen._question_panel`), which it was given
        # before: focused before its styles applied (`display: none`), it was not focusable.
        if self._shown is not None:
            self._take_keys()

    def _take_keys(self) -> None:
        """Take the focus, guarded: the first field gets it once the user stopped typing."""
        self.guard.arm()
        # After the refresh: just shown (`-open`), the panel is focusable once its styles are.
        self.call_after_refresh(self._focus_guarded)

    def _focus_guarded(self) -> None:
        self.focus()
        self.set_timer(self.guard.duration, self._settle)

    def _settle(self) -> None:
        """Give the first field the keys once the user has stopped typing elsewhere."""
        if self.guard.armed:
            self.set_timer(self.guard.duration, self._settle)
        elif self.has_focus and self._shown is not None:
            self.focus_first()

    def on_key(self, event: events.Key) -> None:
        self.guard.intercept(event)

    def _sync_title(self) -> None:
        current = self._shown
        if current is None:
            return
        count = f" · 1 of {len(self.queue)}" if len(self.queue) > 1 else ""
        verb = "asks you to open a page" if current.mode == "url" else "asks"
        self.border_title = f"? {self.agent} {verb}{count}"
        if current.mode == "url":
            self.border_subtitle = "enter open · ctrl+d decline · esc cancel"
        elif answers_on_enter(current.form):
            self.border_subtitle = "↑↓ enter answers · tab next · ctrl+d decline · esc cancel"
        else:
            self.border_subtitle = "tab next · ctrl+s send · ctrl+d decline · esc cancel"

    def _show_form(self, pending: PendingElicitation) -> None:
        form = pending.form
        if form.title or form.description:
            about = " — ".join(x for x in (form.title, form.description) if x)
            self.mount(Static(Content(about), classes="question--about"))
        fields = VerticalScroll(classes="question--fields")
        self.mount(fields)
        for index, form_field in enumerate(pending.form.fields):
            label = Static(_label(form_field), classes="field--label")
            label.set_class(index == 0, "-first")
            widget = _input_for(form_field)
            self._inputs[form_field.name] = widget
            fields.mount(label, widget, Static(classes="field--error", id=f"error-{index}"))
        if not pending.form.fields:
            fields.mount(Static(Content.styled("(no fields: send to confirm)", "$text-muted")))
        self._mount_buttons(("send", "Send", "success"), ("decline", "Decline", "error"))

    def _show_url(self, url: str) -> None:
        host = url_host(url)
        start = url.find(host) if host else -1
        if start >= 0:
            shown = Content.assemble(
                ("→ ", "$text-accent"),
                (url[:start], "$text-muted"),
                (host, "bold $text-accent underline"),
                (url[start + len(host) :], "$text-muted"),
            )
        else:
            shown = Content.assemble(("→ ", "$text-accent"), url)
        self.mount(Static(shown, classes="question--url", markup=False))
        warnings = url_warnings(url)
        if warnings:
            text = "\n".join(f"! Look twice: {warning}" for warning in warnings)
            self.mount(Static(Content(text), classes="question--warnings"))
        self._mount_buttons(
            ("open", f"Open {host or 'URL'}", "primary"),
            ("copy", "Copy URL", "default"),
            ("decline", "Decline", "error"),
        )

    def _mount_buttons(self, *buttons: tuple[str, str, str]) -> None:
        row = Horizontal(classes="question--buttons")
        self.mount(row)
        for name, label, variant in buttons:
            row.mount(Button(label, id=f"question-{name}", variant=variant, compact=True))  # type: ignore[arg-type]
        row.mount(Button("Cancel", id="question-cancel", compact=True))

    # -- answers ------------------------------------------------------------------------------

    def _entered(self) -> dict[str, Entered]:
        fields = self._shown.form.fields if self._shown is not None else ()
        return {f.name: _value_of(self._inputs[f.name], f) for f in fields}

    def _show_problems(self, problems: dict[str, str]) -> None:
        current = self._shown
        if current is None:
            return
        for index, form_field in enumerate(current.form.fields):
            problem = problems.get(form_field.name)
            error = self.query_one(f"#error-{index}", Static)
            error.update(Content(f"✗ {problem}" if problem else ""))
            error.set_class(problem is not None, "-shown")
            self._inputs[form_field.name].set_class(problem is not None, "-invalid")

    @on(Input.Changed)
    @on(Checkbox.Changed)
    @on(RadioSet.Changed)
    @on(SelectionList.SelectedChanged)
    def _changed(self, event: Message) -> None:
        if self._checked and self._shown is not None:
            self._show_problems(check_answers(self._shown.form, self._entered())[1])

    @on(Input.Submitted)
    def _next_field(self, event: Input.Submitted) -> None:
        # Enter moves on; only the Send button (or ctrl+s) sends, after the answers are seen.
        event.stop()
        self.screen.focus_next()

    @on(ChoiceSet.Chosen)
    def _chosen(self, event: ChoiceSet.Chosen) -> None:
        # The one choice a question asks answers it; in a longer form, Enter moves on.
        event.stop()
        current = self._shown
        if current is None or not answers_on_enter(current.form):
            self.screen.focus_next()
            return
        choice = next(f for f in current.form.fields if f.kind == "choice")
        self._send({**self._entered(), choice.name: choice.choices[event.index].value})

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        action = (event.button.id or "").removeprefix("question-")
        if action == "cancel":
            self.action_dismiss()
        elif action in ("open", "copy"):
            self._open(copy=action == "copy")
        elif action == "decline":
            self.action_decline()
        elif action == "send":
            self.action_send()

    def action_send(self) -> None:
        self._send(self._entered())

    def _send(self, entered: dict[str, Entered]) -> None:
        current = self.current
        if current is None:
            return
        if current.mode == "url":
            self._open(copy=False)
            return
        self._checked = True
        content, problems = check_answers(current.form, entered)
        self._show_problems(problems)
        if problems:
            count = len(problems)
            self.border_subtitle = f"✗ {count} answer{'s' if count > 1 else ''} to fix"
            first = next(f.name for f in current.form.fields if f.name in problems)
            self._inputs[first].focus()
            return
        self._answer(lambda: current.accept(content))

    def _open(self, *, copy: bool) -> None:
        current = self.current
        if current is None or current.mode != "url":
            return
        self.post_message(self.OpenUrl(current.request.url or "", copy=copy))
        self._answer(current.accept)

    def action_decline(self) -> None:
        current = self.current
        if current is not None:
            self._answer(current.decline)

    def action_dismiss(self) -> None:
        current = self.current
        if current is not None:
            self._answer(current.cancel)

    def _answer(self, answer: Any) -> None:
        # An answer to a question cancelled meanwhile does nothing: `answer` is once only.
        answer()
        self.prune()


def _label(form_field: FormField) -> Content:
    parts: list[Content | tuple[str, str] | str] = [(form_field.title, "bold")]
    if form_field.required:
        parts.append((" *", "bold $text-error"))
    detail = " · ".join(x for x in (form_field.description, form_field.hint()) if x)
    if detail:
        parts.append((f"  {detail}", "$text-muted"))
    return Content.assemble(*parts)


def _input_for(form_field: FormField) -> Widget:
    initial = initial_value(form_field)
    if form_field.kind == "boolean":
        return Checkbox("yes", value=bool(initial), compact=True)
    if form_field.kind == "choice":
        buttons = [
            RadioButton(_choice_label(c.title, c.description), value=c.value == initial)
            for c in form_field.choices
        ]
        return ChoiceSet(*buttons, compact=True)
    if form_field.kind == "choices":
        picked = initial if isinstance(initial, list) else []
        options = [
            (_choice_label(c.title, c.description), c.value, c.value in picked)
            for c in form_field.choices
        ]
        return SelectionList[str](*options, compact=True)
    kind = {"number": "number", "integer": "integer"}.get(form_field.kind, "text")
    return Input(
        value=str(initial or ""),
        placeholder=_PLACEHOLDERS.get(form_field.format or "", ""),
        type=kind,  # type: ignore[arg-type]
        max_length=form_field.max_length or 0,
        compact=True,
    )


_PLACEHOLDERS = {
    "email": "name@example.com",
    "uri": "https://…",
    "date": "YYYY-MM-DD",
    "date-time": "YYYY-MM-DDTHH:MM:SS",
}


def _choice_label(title: str, description: str | None) -> Content:
    if not description:
        return Content(title)
    return Content.assemble(title, (f" — {description}", "$text-muted"))


def _value_of(widget: Widget, form_field: FormField) -> Entered:
    if isinstance(widget, Checkbox):
        return widget.value
    if isinstance(widget, SelectionList):
        return [str(value) for value in widget.selected]
    if isinstance(widget, RadioSet):
        index = widget.pressed_index
        return form_field.choices[index].value if index >= 0 else None
    if isinstance(widget, Input):
        return widget.value
    return None
