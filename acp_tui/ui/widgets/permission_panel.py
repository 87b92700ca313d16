"""The permission dialog: what the agent wants to do, and single-key answers.

Requests queue in the order they came. Each is bound to the turn it arrived in: a request
that was answered `cancelled` (the user cancelled the turn, or the turn ended) leaves the queue
and can never be approved afterwards, whatever key is pressed then.

Keys typed in the moment before a request appeared are not answers (`KeyGuard`). A rejection
is answered at once, then the dialog offers a line to say why: that reason becomes the next
prompt, before anything else queued, once the turn is over.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
from rich.console import Group, RenderableType
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input, Static

from acp_tui.protocol import methods as m
from acp_tui.protocol.content import ContentBlock, ToolCallContent, ToolCallLocation, block_text
from acp_tui.services.permissions import Rule
from acp_tui.ui.key_guard import KeyGuard
from acp_tui.ui.widgets.diff_view import DiffView
from acp_tui.ui.widgets.render_view import RenderView
from acp_tui.ui.widgets.tool_call import KIND_ICONS, inline_code, location_text

if TYPE_CHECKING:
    from acp_tui.session.session import PendingPermission, Session

OPTION_KEYS = {"allow_once": "a", "allow_always": "A", "reject_once": "r", "reject_always": "R"}
"""The key of the first option of each kind."""
OPTION_HINTS = {
    "allow_once": "allow",
    "allow_always": "always",
    "reject_once": "reject",
    "reject_always": "always reject",
}
"""The border's reminder of each key, for the kinds of option the request offers."""
OPTION_STYLES = {
    "allow_once": "$text-success",
    "allow_always": "$text-success",
    "reject_once": "$text-error",
    "reject_always": "$text-error",
}
RULE_KEYS = {"allow": "w", "reject": "W"}
"""Keys that answer once and save a rule for the tool's kind in this workspace."""
RULE_ANSWERS = {"allow": ("allow_once", "allow_always"), "reject": ("reject_once", "reject_always")}
FEEDBACK_WORDS = ("feedback", "differently", "instead", "reason", "tell ")
"""Words in an option's name that invite the user to say more (Codex's "No, provide feedback",
"No, and tell Codex what to do differently")."""


def option_keys(options: Sequence[m.PermissionOption]) -> list[str]:
    """Each option's own key: its kind's letter (`OPTION_KEYS`) for the first option of that
    kind, else its number. Claude offers several options of one kind (to leave plan mode: three
    ways to allow always), and one key must not stand for two of them. A tenth option on has
    no key: arrows and Enter reach it."""
    keys: list[str] = []
    for index, option in enumerate(options):
        key = OPTION_KEYS.get(option.kind, "")
        if not key or key in keys:
            key = str(index + 1) if index < 9 else ""
        keys.append(key)
    return keys


def asks_for_reason(option: m.PermissionOption) -> bool:
    """Whether answering with `option` lets the user type why: every rejection, and any option
    (of a kind that does not allow) whose name invites feedback."""
    if option.kind.startswith("allow"):
        return False
    name = option.name.lower()
    return option.kind.startswith("reject") or any(word in name for word in FEEDBACK_WORDS)


class Subject(msgspec.Struct):
    """What a request is about, as the dialog shows it."""

    title: str = ""
    kind: str | None = None
    content: list[ToolCallContent] = msgspec.field(default_factory=list)
    locations: list[ToolCallLocation] = msgspec.field(default_factory=list)
    raw_input: Any = None


def subject_of(pending: PendingPermission) -> Subject:
    """The tool call asked about, as the session knows it: what the request itself carried was
    merged into it as the request came (`Session.permission_asked`)."""
    call = pending.tool_call
    if call is None:
        return Subject()
    return Subject(call.title, call.kind, call.content, call.locations, call.raw_input)


class PermissionPanel(Widget, can_focus=True):
    """Shows the oldest waiting request; answers it with a key."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "choose_kind('allow_once')", "Allow once", show=False),
        Binding("A,shift+a", "choose_kind('allow_always')", "Allow always", show=False),
        Binding("r", "choose_kind('reject_once')", "Reject", show=False),
        Binding("R,shift+r", "choose_kind('reject_always')", "Reject always", show=False),
        Binding("w", "save_rule('allow')", "Always allow here", show=False),
        Binding("W,shift+w", "save_rule('reject')", "Always reject here", show=False),
        Binding("left,up,shift+tab", "move(-1)", "Previous option", show=False),
        Binding("right,down,tab", "move(1)", "Next option", show=False),
        Binding("enter", "choose_selected", "Choose", show=True),
        Binding("escape", "escape", "Skip", show=False),
    ]

    DEFAULT_CSS = """
    PermissionPanel {
        display: none;
        height: auto;
        max-height: 60%;
        margin: 0 1;
        padding: 0 1;
        border: round $warning;
        border-title-color: $text-warning;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $warning 6%;
    }
    PermissionPanel.-open { display: block; }
    PermissionPanel:focus { border: round $warning-lighten-1; }
    PermissionPanel.-reason { border: round $error 70%; border-title-color: $text-error; }
    PermissionPanel > .permission--title { text-style: bold; margin: 0 0 0 0; }
    PermissionPanel > .permission--description { color: $text-muted; }
    PermissionPanel > .permission--detail { margin: 1 0 0 0; max-height: 20; }
    PermissionPanel > DiffView { max-height: 20; }
    PermissionPanel > .permission--options { margin: 1 0 0 0; }
    PermissionPanel > .permission--reason { display: none; margin: 1 0 0 0; }
    PermissionPanel.-reason > .permission--reason { display: block; }
    PermissionPanel.-reason > .permission--options { display: none; }
    PermissionPanel.-reason > DiffView { display: none; }
    """

    selected: reactive[int] = reactive(0)
    """The option Enter would choose."""

    class Answered(Message):
        """A request was answered (or dropped): the panel may close, focus may move back."""

        def __init__(self, remaining: int) -> None:
            super().__init__()
            self.remaining = remaining

    class RuleWanted(Message):
        """Answer `pending` with `option_id`, and save `rule` so its kind is not asked again
        in this workspace. The screen does both (the rule first), then calls `prune`."""

        def __init__(self, pending: PendingPermission, option_id: str, rule: Rule) -> None:
            super().__init__()
            self.pending = pending
            self.option_id = option_id
            self.rule = rule

    class Feedback(Message):
        """The user is done saying why they rejected a request in `session`: `text` (empty
        when they skipped) is to be the next prompt there, before anything queued."""

        def __init__(self, session: Session, text: str) -> None:
            super().__init__()
            self.session = session
            self.text = text

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session: Session | None = None
        """The session whose waiting requests it shows (`Session.pending_permissions`: the
        one place they wait)."""
        self.root: Path | None = None
        self.guard = KeyGuard()
        """Keeps keys typed just before a request appeared from answering it."""
        self._shown: PendingPermission | None = None
        self._count = 0
        """How many requests waited when it was last drawn."""
        self._rejected: PendingPermission | None = None
        """The request just rejected, while the user may type why."""

    def compose(self) -> ComposeResult:
        yield Static(classes="permission--title")
        yield Static(classes="permission--description")
        yield RenderView(self._detail, classes="permission--detail")
        yield Static(classes="permission--options")
        yield Input(
            placeholder="Why? (optional) · Enter sends it to the agent · Esc skips",
            classes="permission--reason",
        )

    # -- the queue ----------------------------------------------------------------------------

    @property
    def queue(self) -> list[PendingPermission]:
        """The requests waiting for the user, oldest first."""
        session = self.session
        if session is None:
            return []
        return [pending for pending in session.pending_permissions if not pending.done]

    @property
    def current(self) -> PendingPermission | None:
        queue = self.queue
        return queue[0] if queue else None

    @property
    def asking_reason(self) -> bool:
        """Whether the user may be typing why they rejected a request: the prompts queued
        wait, so that the reason goes first."""
        return self._rejected is not None

    def add(self, pending: PendingPermission) -> None:
        """`pending` waits in its session for the user: show it (or count it)."""
        self.session = pending.session
        self._refresh()

    def prune(self) -> None:
        """Requests answered elsewhere (a cancel, the end of the turn) are no longer shown."""
        queue = self.queue
        if len(queue) != self._count or (queue and queue[0] is not self._shown):
            self._refresh()
            if self._rejected is None:  # else the reason's line keeps the focus and says so
                self.post_message(self.Answered(len(self.queue)))

    # -- showing ------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self._refresh()  # fills in what was added as the screen mounted it (on first use)
        if self.queue:
            # Focused before its styles applied (`display: none`), it was not focusable.
            self.call_after_refresh(self.focus)

    def _refresh(self) -> None:
        if self._rejected is not None:
            self._show_reason(self._rejected)
            return
        queue = self.queue
        self._count = len(queue)
        current = queue[0] if queue else None
        self.set_class(current is not None, "-open")
        if current is None:
            self._shown = None
            return
        if current is not self._shown:
            self._shown = current
            self.selected = 0
            self.guard.arm()
        request = current.request
        subject = subject_of(current)
        count = f" · 1 of {len(self.queue)}" if len(self.queue) > 1 else ""
        self.border_title = f"⚠ Permission needed{count}"
        offered = {option.kind for option in request.options}
        hints = [
            f"{OPTION_KEYS[kind]} {hint}" for kind, hint in OPTION_HINTS.items() if kind in offered
        ]
        hints.append("←→ enter" if request.options else "esc answers cancelled")
        if subject.kind and any(self._option_for(current, decision) for decision in RULE_KEYS):
            hints.append("w/W rule for this workspace")
        self.border_subtitle = " · ".join(hints)
        if not self.children:
            return  # not composed yet (guarded already, though): `on_mount` fills it in
        self._show_title(current)
        description = self.query_one(".permission--description", Static)
        description.display = bool(request.description)
        description.update(Content(request.description or ""))
        for old in self.query(DiffView):
            old.remove()
        detail = self.query_one(".permission--detail", RenderView)
        diffs = [item for item in subject.content if item.type == "diff"]
        if diffs:
            detail.display = False
            for item in diffs[:3]:
                self.mount(DiffView(item, self.root), before=self.query_one(".permission--options"))
        else:
            detail.display = True
            detail.invalidate()
        self._render_options()

    def _show_title(self, pending: PendingPermission) -> None:
        subject = subject_of(pending)
        icon = KIND_ICONS.get(subject.kind or "", "◆")
        title = pending.request.title or subject.title or "The agent asks for permission"
        kind = f"{subject.kind}  " if subject.kind else ""
        self.query_one(".permission--title", Static).update(
            Content.assemble((f"{icon} {kind}", "$text-accent not bold"), inline_code(title))
        )

    def _detail(self) -> RenderableType:
        current = self._shown
        if current is None:
            return Text("")
        request = current.request
        if request.subject is not None and request.subject.command:
            command = Text("$ ", "acp.accent")
            command.append(request.subject.command, "bold")
            parts: list[RenderableType] = [command]
            if request.subject.cwd:
                parts.append(Text(f"in {request.subject.cwd}", "acp.muted"))
            return Group(*parts)
        subject = subject_of(current)
        parts = []
        raw = subject.raw_input
        if isinstance(raw, dict) and isinstance(raw.get("command"), str | list):
            command_text = raw["command"]
            if isinstance(command_text, list):
                command_text = " ".join(map(str, command_text))
            parts.append(Text.assemble(("$ ", "acp.accent"), (command_text, "bold")))
            raw = None
        # What the agent wrote about the call (a request whose tool call has no card carries
        # its only copy), then where, then its input when nothing above says what it does.
        for item in subject.content:
            if item.type == "content" and isinstance(item.content, ContentBlock):
                parts.append(Text(block_text(item.content) or f"[{item.content.type}]"))
        if subject.locations:
            where = (location_text(location, self.root) for location in subject.locations)
            parts.append(Text("  ".join(where), "acp.muted"))
            raw = None
        if raw is not None:
            try:
                code = json.dumps(raw, indent=2, ensure_ascii=False, default=str)
            except (TypeError, ValueError):
                code = repr(raw)
            palette = self.query_one(".permission--detail", RenderView).palette
            from rich.syntax import Syntax  # on first use: see render.lexers

            parts.append(Syntax(code, "json", theme=palette.code_theme, word_wrap=True))
        if not parts and request.tool_call_update is None and request.subject is None:
            parts.append(Text("The agent said nothing more about what it wants.", "acp.muted"))
        return Group(*parts)

    def _render_options(self) -> None:
        current = self._shown
        if current is None:
            return
        parts: list[Content] = []
        offered = current.request.options
        for index, (option, key) in enumerate(zip(offered, option_keys(offered), strict=True)):
            style = OPTION_STYLES.get(option.kind, "$foreground")
            label = option.name or option.kind or option.option_id
            if index == self.selected:
                parts.append(
                    Content.assemble(
                        (f" {key} ", f"bold {style} reverse"),
                        (f" {label} ", f"bold {style} underline"),
                    )
                )
            else:
                parts.append(Content.assemble((f" {key} ", f"bold {style}"), f" {label} "))
        kind = subject_of(current).kind
        rules: list[Content] = []
        for decision, key in RULE_KEYS.items():
            if kind and self._option_for(current, decision) is not None:
                style = "$text-success" if decision == "allow" else "$text-error"
                label = f"always {decision} {kind} here"
                rules.append(Content.assemble((f" {key} ", f"bold {style}"), (f" {label} ", "")))
        options = Content("   ").join(parts)
        if not parts:
            options = Content.assemble(
                ("The agent offered no choice.", "bold $text-warning"),
                "  esc answers it cancelled; the turn goes on",
            )
        if rules:
            options = Content("\n").join([options, Content("   ").join(rules)])
        self.query_one(".permission--options", Static).update(options)

    @staticmethod
    def _option_for(pending: PendingPermission, decision: str) -> str | None:
        """The option that answers `decision` ("allow" / "reject") once (else always)."""
        for kind in RULE_ANSWERS[decision]:
            option = next((o for o in pending.request.options if o.kind == kind), None)
            if option is not None:
                return option.option_id
        return None

    def watch_selected(self) -> None:
        if self.children:
            self._render_options()

    # -- answering ----------------------------------------------------------------------------

    def _answer(self, option_id: str) -> None:
        current = self.current
        if current is None:
            return
        # `select` on a request cancelled meanwhile does nothing: a stale key approves nothing.
        current.select(option_id)
        option = next((o for o in current.request.options if o.option_id == option_id), None)
        outcome = current.future.result().outcome if current.done else None
        # Only when this key answered it (not a cancel that came first) is there a "why".
        answered = isinstance(outcome, m.SelectedOutcome) and outcome.option_id == option_id
        if answered and option is not None and asks_for_reason(option):
            self._ask_reason(current)
        self.prune()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While the reason is typed, the keys are the line's; Escape skips it. A request with
        # no option takes Escape as its answer; otherwise Escape goes on to the screen, where
        # it cancels the turn.
        if action == "escape":
            return self._rejected is not None or self._choiceless(self.current)
        return self._rejected is None

    @staticmethod
    def _choiceless(pending: PendingPermission | None) -> bool:
        return pending is not None and not pending.request.options

    def action_choose_kind(self, kind: str) -> None:
        current = self.current
        if current is None:
            return
        options = current.request.options
        keys = option_keys(options)
        if OPTION_KEYS[kind] in keys:
            self._answer(options[keys.index(OPTION_KEYS[kind])].option_id)

    def action_save_rule(self, decision: str) -> None:
        current = self.current
        kind = subject_of(current).kind if current is not None else None
        if current is None or not kind or self.root is None:
            return
        option_id = self._option_for(current, decision)
        if option_id is not None:
            rule = Rule(kind, decision, workspace=str(self.root))  # type: ignore[arg-type]
            self.post_message(self.RuleWanted(current, option_id, rule))

    def action_move(self, step: int) -> None:
        current = self.current
        if current is not None and current.request.options:
            self.selected = (self.selected + step) % len(current.request.options)

    def action_choose_selected(self) -> None:
        current = self.current
        if current is not None and current.request.options:
            self._answer(current.request.options[self.selected].option_id)

    def on_focus(self) -> None:
        # Focus moved here (a request arrived, perhaps while the user typed elsewhere): what
        # is typed next is still meant for the prompt until the guard time is over.
        if self._rejected is None:
            self.guard.arm()

    def on_key(self, event: events.Key) -> None:
        if self._rejected is not None:
            return  # the reason's line takes what it takes; Escape is a binding
        if self.guard.intercept(event):
            return
        # Any option answers to its number (the one shown, when it has no letter of its own).
        current = self.current
        if current is None or not event.character or not event.character.isdigit():
            return
        index = int(event.character) - 1
        if 0 <= index < len(current.request.options):
            event.stop()
            self._answer(current.request.options[index].option_id)

    # -- the reason for a rejection -----------------------------------------------------------

    def _ask_reason(self, pending: PendingPermission) -> None:
        self._rejected = pending
        reason = self.query_one(".permission--reason", Input)
        reason.value = ""
        self._show_reason(pending)
        reason.focus()

    def _show_reason(self, pending: PendingPermission) -> None:
        self.add_class("-open", "-reason")
        self.border_title = "✗ Rejected · tell the agent why (optional)"
        self.border_subtitle = "enter: your next prompt, once the turn is over · esc skips"
        self._show_title(pending)
        self.query_one(".permission--description", Static).display = False

    @on(Input.Submitted, ".permission--reason")
    def _reason_given(self, event: Input.Submitted) -> None:
        event.stop()
        self._end_reason(event.value)

    def action_escape(self) -> None:
        current = self.current
        if self._rejected is None and current is not None:
            current.cancel()  # the agent offered no choice: `cancelled` is the only answer
            self.prune()
            return
        self._end_reason("")

    def _end_reason(self, text: str) -> None:
        pending, self._rejected = self._rejected, None
        if pending is None:
            return
        self.remove_class("-reason")
        self.query_one(".permission--reason", Input).value = ""
        self._shown = None  # what comes next (if anything) is shown afresh, guarded
        self._refresh()
        if self.queue:
            self.focus()
        self.post_message(self.Feedback(pending.session, text.strip()))
        self.post_message(self.Answered(len(self.queue)))
