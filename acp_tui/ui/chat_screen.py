"""The chat screen: header, transcript, permission dialog, queued prompts, the prompt, usage.

It reads one session's state (through the session's listeners) and turns keys into intents
for the app, which owns the agent. It never speaks JSON-RPC.
"""

from __future__ import annotations

import contextvars
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual._context import active_app
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Static

from acp_tui.conversation.attachments import Attachment, clipboard_image, image_from_file
from acp_tui.conversation.mentions import NO_IMAGES, rank, workspace_files
from acp_tui.conversation.prompt import Prompt, only_refused_images
from acp_tui.protocol.images import ImageError
from acp_tui.session.change import Change
from acp_tui.text import money
from acp_tui.ui.browser import open_in_browser
from acp_tui.ui.dialogs import Dialogs
from acp_tui.ui.history import PromptHistory
from acp_tui.ui.widgets.attachment_bar import AttachmentBar
from acp_tui.ui.widgets.block import Block
from acp_tui.ui.widgets.completion_menu import Completion, CompletionMenu, command_completions
from acp_tui.ui.widgets.inspector import Inspector
from acp_tui.ui.widgets.key_footer import KeyFooter
from acp_tui.ui.widgets.notice import NoticeLine, failure_line
from acp_tui.ui.widgets.prompt_input import PromptInput
from acp_tui.ui.widgets.queued_prompts import QueuedPrompts
from acp_tui.ui.widgets.session_bar import SessionBar
from acp_tui.ui.widgets.session_header import SessionHeader, short_path
from acp_tui.ui.widgets.transcript import Transcript
from acp_tui.ui.widgets.usage_bar import UsageBar, settings_summary, turn_summary

if TYPE_CHECKING:
    from acp_tui.conversation.budget import Budget
    from acp_tui.conversation.conversation import Conversation
    from acp_tui.session.elicitation import PendingElicitation
    from acp_tui.session.session import PendingPermission, Session
    from acp_tui.ui.app import AcpApp
    from acp_tui.ui.widgets.elicitation_panel import ElicitationPanel
    from acp_tui.ui.widgets.permission_panel import PermissionPanel

CANCEL_GRACE = 10.0
"""Seconds an agent gets to confirm a cancel before the turn is ended without it."""


class ChatScreen(Screen[None]):
    """One session, full screen."""

    app: AcpApp

    # The prompt has the keys from the start: Textual would focus the first focusable widget
    # (the hidden queue), then `on_mount` the prompt, and the footer recomposes at each change.
    AUTO_FOCUS = "#prompt"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "escape", "Cancel", show=False),
        # Priority: the prompt would take them to move its cursor.
        Binding("pageup", "scroll_transcript(-1)", "Page up", show=False, priority=True),
        Binding("pagedown", "scroll_transcript(1)", "Page down", show=False, priority=True),
        Binding("ctrl+end", "follow", "Follow", show=False),
        Binding("alt+up,ctrl+up", "browse", "Blocks", show=False),
        Binding("f2", "app.settings", "Mode/model"),
        Binding("f3", "changes", "Changes", show=False),
        Binding("shift+tab", "app.cycle_mode", "Next mode", show=False),
        Binding("ctrl+f", "app.search", "Search"),
        # Priority: terminals send it as "v" with Alt, which the prompt would type.
        Binding("alt+v", "paste_image", "Paste image", show=False, priority=True),
        Binding("f12", "toggle_inspector", "Inspector"),
    ]

    def __init__(self, workspace: Path, history: PromptHistory) -> None:
        super().__init__()
        self.workspace = workspace
        self.history = history
        self.session: Session | None = None
        self.conversation: Conversation | None = None
        """The conversation shown, once its agent starts (`follow`)."""
        self.queue: list[Prompt] = []
        self.files: list[str] = []
        self._sending: Prompt | None = None
        """The prompt handed to the agent whose turn has not ended."""
        self._held: Prompt | None = None
        """That prompt, while it waits long for its checkpoint (`prompt_held`)."""
        self.dialogs = Dialogs(self, self._waiting_questions)
        """The permission and question dialogs, mounted when the agent first asks."""
        self.transcript = Transcript(id="transcript")
        self.inspector = Inspector(id="inspector")
        """Both held, not queried: each update the agent sends reaches them (two queries an
        update were ~6 of the ~25 us the TUI spends on one while a flood is read)."""

    def compose(self) -> ComposeResult:
        yield SessionBar(id="sessions")
        yield SessionHeader(id="header")
        with Horizontal(id="main"):
            with Vertical(id="conversation"):
                yield self.transcript
                yield Static(
                    "↓ not following the stream · ctrl+end follows", id="paused", markup=False
                )
                # The permission and question dialogs go here when the agent first asks.
                yield QueuedPrompts(id="queue")
                yield CompletionMenu(id="completions")
                yield AttachmentBar(id="attachments")
                yield PromptInput(id="prompt", placeholder="Ask the agent…  (Enter sends)")
                yield UsageBar(id="usage")
            yield self.inspector
        yield KeyFooter(id="footer")

    def on_mount(self) -> None:
        self._app_context = contextvars.copy_context()
        prompt = self.query_one(PromptInput)
        prompt.menu = self.query_one(CompletionMenu)
        prompt.workspace = self.workspace
        prompt.focus()
        header = self.query_one(SessionHeader)
        header.workspace = short_path(self.workspace)

    # -- the agent's side ---------------------------------------------------------------------

    def agent_started(self, label: str, protocol: int) -> None:
        header = self.query_one(SessionHeader)
        header.agent = label
        header.protocol = protocol

    def agent_failed(self, message: str) -> None:
        header = self.query_one(SessionHeader)
        header.status = "exited"
        self.app.notify(
            message.splitlines()[0], title="The agent could not start", severity="error"
        )
        self.transcript.mount(failure_line(message))

    def agent_exited(self, description: str) -> None:
        self.query_one(SessionHeader).status = "exited"
        if self.session is None:
            return
        self.session.notice("error", "The agent stopped", description)
        self.session.notice("info", "Ctrl+R restarts the agent (your draft stays)")

    def agent_restarting(self) -> None:
        self.query_one(SessionHeader).status = "starting"

    def follow(self, conversation: Conversation) -> None:
        """Show `conversation`: every change of its session, whichever it is (`attach`)."""
        self.conversation = conversation
        conversation.subscribe(self._on_change)

    def attach(self, session: Session) -> None:
        """Show `session` (the conversation's now), instead of the one shown, if any."""
        self.session = session
        header = self.query_one(SessionHeader)
        if header.status in ("exited", "starting"):
            header.status = session.state.status
        transcript = self.transcript
        transcript.attach(session.state, self.workspace)
        if not session.state.timeline:
            transcript.welcome(self.query_one(SessionHeader).agent)
        self._sync_busy()
        self._sync_settings()
        self._sync_usage()
        self._send_next()

    def _on_change(self, session: Session, change: Change) -> None:
        if active_app.get(None) is None:
            # Terminal output arrives in subprocess pipe callbacks, outside Textual's context;
            # timers started there would not know their app.
            self._app_context.copy().run(self._apply_safely, change)
        else:
            self._apply_safely(change)

    def _apply_safely(self, change: Change) -> None:
        # Called inside the connection's reader: a display problem must never stop it.
        try:
            self._apply(change)
        except Exception as error:  # pragma: no cover - a safety net, reported on screen
            self.app.log.error(f"display error for {change.kind}: {error!r}")
            self.app.notify(f"Display error: {error!r}", severity="error")

    def _apply(self, change: Change) -> None:
        kind = change.kind
        self.transcript.show(change)
        if kind in ("status", "notice"):
            # A turn's end, or a notice that the agent withdrew a request: both answer
            # requests elsewhere than in the dialogs.
            self.dialogs.prune()
        if kind == "status":
            self._sync_busy()
            self._sync_usage()  # a turn's end may say what it took
        elif kind == "info":
            self._sync_header()
        elif kind == "usage":
            self._sync_usage()
        elif kind in ("modes", "config"):
            self._sync_settings()

    def _sync_busy(self) -> None:
        """The turn started or ended: header, prompt frame and the keys that apply."""
        self._sync_header()
        busy = self.session is not None and self.session.busy
        self.query_one(PromptInput).set_class(busy, "-busy")
        self.refresh_bindings()

    def _sync_header(self) -> None:
        header = self.query_one(SessionHeader)
        state = self.session.state if self.session is not None else None
        if state is None:
            return
        header.title = state.title or ""
        if header.status in ("exited", "reconnecting"):  # until the agent is back
            return
        header.status = "requires_action" if self.dialogs.waiting() else state.status

    def _sync_usage(self) -> None:
        if self.session is None:
            return
        state = self.session.state
        usage = self.query_one(UsageBar)
        usage.used, usage.window = state.usage_used, state.usage_size
        usage.turn = turn_summary(state.turn_usage) if state.turn_usage is not None else ()
        cost = state.cost
        usage.cost = money(cost.amount, cost.currency) if cost is not None else ""

    def _sync_settings(self) -> None:
        if self.session is None:
            return
        self.query_one(UsageBar).settings = settings_summary(self.session.state)

    # -- prompts ------------------------------------------------------------------------------

    @property
    def sending(self) -> bool:
        """A prompt was handed to the agent and its turn has not ended."""
        return self._sending is not None

    @on(PromptInput.Submitted)
    def _submitted(self, event: PromptInput.Submitted) -> None:
        text = event.text
        bar = self.query_one(AttachmentBar)
        if not text.strip() and not bar.attachments:
            return
        prompt = self.query_one(PromptInput)
        if text.strip():
            self.history.add(text)
        prompt.clear()
        self.send(Prompt(text, bar.take()))

    def send(self, prompt: Prompt) -> None:
        """Send `prompt` as the next turn, or queue it behind those waiting."""
        self.queue.append(prompt)
        self._show_queue()
        self._send_next()

    def _send_next(self) -> None:
        """Send the oldest queued prompt if the agent is free: one `session/prompt` at a time."""
        session = self.session
        if session is None or self.sending or session.busy or not self.queue:
            return
        if self.dialogs.asking_reason:
            return  # the reason for a rejection, being typed, goes first
        if self.query_one(SessionHeader).status == "exited":
            return
        reached = self.conversation.budget_reached() if self.conversation is not None else None
        if reached is not None:
            self.app.notify(
                f"{reached.describe()}: the prompt waits until you raise the budget "
                "(Ctrl+P: Raise the budget).",
                title="Budget reached",
                severity="warning",
            )
            return
        queued = self.queue.pop(0)
        self._show_queue()
        if self._images_refused(session, queued):
            self._send_next()
            return
        self._sending = queued
        self._run_turn(queued)

    @work(group="turn", exit_on_error=False)
    async def _run_turn(self, prompt: Prompt) -> None:
        conversation = self.conversation
        assert conversation is not None
        try:  # whatever fails, later prompts are still sent (`_sending` is reset)
            end = await conversation.run_turn(prompt)
        finally:
            self._sending = None
        if end.withdrawn:
            self._withdrawn(prompt)
        self.transcript.turn_ended()
        self._sync_busy()
        self._send_next()

    def raise_budget(self, budget: Budget) -> None:
        """The user's new budget: what waited for it is sent."""
        if self.conversation is not None:
            self.conversation.raise_budget(budget)
            self.app.refresh_session_bars()  # no longer stopped by its budget
            self._send_next()

    def _show_queue(self) -> None:
        self.query_one(QueuedPrompts).show(self.queue, self._held)

    def prompt_held(self, prompt: Prompt | None) -> None:
        """Show `prompt` waiting for its checkpoint, above those queued (None: no longer)."""
        if not self.is_mounted:  # its turn was cancelled as the conversation closed
            return
        self._held = prompt
        self._show_queue()
        self.refresh_bindings()

    def _into_draft(self, prompt: Prompt) -> bool:
        """`prompt`'s text and images into the draft; False (left out) if one is written."""
        draft, bar = self.query_one(PromptInput), self.query_one(AttachmentBar)
        if draft.text.strip() or bar.attachments:
            return False
        draft.set_text(prompt.text)
        bar.add(*prompt.attachments)
        return True

    def _withdrawn(self, prompt: Prompt) -> None:
        """A prompt withdrawn before it was sent goes back into an empty draft; beside one
        being written, its text goes to the history (↑) and its images to the draft's."""
        said = "It was not sent: it is back in the prompt"
        if not self._into_draft(prompt):
            self.history.add(prompt.text)  # not typed, it may not be there (a rejection's reason)
            self.query_one(AttachmentBar).add(*prompt.attachments)
            said = "It was not sent: ↑ in the prompt brings it back"
        self.app.notify(said, title="Prompt withdrawn")

    @on(QueuedPrompts.Edit)
    def _edit_queued(self, event: QueuedPrompts.Edit) -> None:
        if event.index >= len(self.queue):
            return
        if not self._into_draft(self.queue[event.index]):
            self.app.notify("Send or clear the draft first, then edit the queued prompt.")
            return
        del self.queue[event.index]
        self._show_queue()
        self.query_one(PromptInput).focus()

    @on(QueuedPrompts.Remove)
    def _remove_queued(self, event: QueuedPrompts.Remove) -> None:
        if event.index < len(self.queue):
            del self.queue[event.index]
        self._show_queue()
        if not self.queue:
            self.query_one(PromptInput).focus()

    # -- images -------------------------------------------------------------------------------

    def _takes_images(self) -> bool:
        """Whether the agent takes images (before it has said, it is given the benefit)."""
        conversation = self.conversation
        return conversation is None or conversation.agent_info.supports("image")

    def _images_refused(self, session: Session, queued: Prompt) -> bool:
        """Whether `queued` is only images, for an agent that takes none (they were attached
        before it said so): sent, it would be an empty text. The images go back to the
        attachment bar, not lost, and the transcript says why."""
        conversation = self.conversation
        if conversation is None or not only_refused_images(queued, conversation.agent_info):
            return False
        self.query_one(AttachmentBar).add(*queued.attachments)
        names = ", ".join(attachment.name for attachment in queued.attachments)
        session.notice("warning", f"{NO_IMAGES}: {names} not sent, kept in the draft")
        return True

    def attach_image(self, attachment: Attachment) -> None:
        """Add an image to the prompt being written."""
        if not self.is_attached or all(c.chat is not self for c in self.app.conversations):
            return  # read from the clipboard for a conversation closed meanwhile
        self.query_one(AttachmentBar).add(attachment)
        self.app.notify(f"Attached {attachment.name} ({attachment.info.pixels})", timeout=3)

    @on(PromptInput.ImagePasted)
    def _image_pasted(self, event: PromptInput.ImagePasted) -> None:
        prompt = self.query_one(PromptInput)
        if not self._takes_images():
            prompt.insert_pasted(event.text)  # the path, as text: nothing the user pasted is lost
            self.app.notify(f"{NO_IMAGES}: the path is pasted as text.", severity="warning")
            return
        try:
            self.attach_image(image_from_file(event.path))
        except ImageError as error:
            prompt.insert_pasted(event.text)
            self.app.notify(str(error), title="Not attached", severity="warning")

    @on(PromptInput.ImagesMentioned)
    def _images_mentioned(self, event: PromptInput.ImagesMentioned) -> None:
        takes = self._takes_images()
        self.query_one(AttachmentBar).mention(event.images, takes_images=takes)

    @on(PromptInput.BackspaceOnEmpty)
    def _remove_attachment(self) -> None:
        removed = self.query_one(AttachmentBar).pop()
        if removed is not None:
            self.app.notify(f"Removed {removed.name}", timeout=2)

    def action_paste_image(self) -> None:
        """Attach the image on the system clipboard (terminals paste only text)."""
        if not self._takes_images():
            self.app.notify(f"{NO_IMAGES}.", severity="warning")
            return
        self._read_clipboard()

    # Not exit_on_error: the conversation may be closed while the clipboard tool runs.
    @work(thread=True, exclusive=True, group="clipboard", exit_on_error=False)
    def _read_clipboard(self) -> None:
        # In a thread: the clipboard tool may take a moment (or its timeout) to answer.
        try:
            attachment = clipboard_image()
        except ImageError as error:
            self.app.call_from_thread(self.app.notify, str(error), severity="warning")
        else:
            self.app.call_from_thread(self.attach_image, attachment)

    @on(PromptInput.HistoryMove)
    def _history(self, event: PromptInput.HistoryMove) -> None:
        prompt = self.query_one(PromptInput)
        text = self.history.move(event.step, prompt.text)
        if text is not None:
            prompt.set_text(text)

    @on(PromptInput.CompletionWanted)
    def _complete(self, event: PromptInput.CompletionWanted) -> None:
        menu = self.query_one(CompletionMenu)
        query = event.query
        if query is None:
            menu.display = False
            return
        if query.kind == "command":
            commands = self.session.state.commands if self.session is not None else []
            menu.show(command_completions(commands, query.query), "/")
        else:
            if not self.files:
                self._load_files()
            self._show_files(query.query)

    def _show_files(self, query: str) -> None:
        menu = self.query_one(CompletionMenu)
        menu.show([Completion(path) for path in rank(self.files, query)], "@")

    def protocol_violation(self, problem: str) -> None:
        self.inspector.add("violation", problem)
        self.query_one(UsageBar).violations += 1

    @work(thread=True, exclusive=True, group="files")
    def _load_files(self) -> None:
        files = workspace_files(self.workspace)
        self.app.call_from_thread(self._files_loaded, files)

    def _files_loaded(self, files: list[str]) -> None:
        """The workspace's files, listed: a mention typed while they were being listed
        (`@my` typed, or pasted, in one go) gets its menu now."""
        self.files = files
        query = self.query_one(PromptInput).completion_query()
        if query is not None and query.kind == "path":
            self._show_files(query.query)

    # -- permissions and questions ----------------------------------------------------------

    def _waiting_questions(self) -> list[PendingElicitation]:
        conversation = self.conversation
        return conversation.waiting_questions if conversation is not None else []

    # The user is told they are asked by the app's inbox (the bars' marks, the title, a
    # notification when they are not looking).

    def ask_permission(self, pending: PendingPermission) -> None:
        self.dialogs.ask_permission(pending)
        self._sync_header()

    def ask_question(self, pending: PendingElicitation) -> None:
        self.dialogs.ask_question(pending, self.query_one(SessionHeader).agent or "The agent")
        self._sync_header()

    def on_permission_panel_answered(self, event: PermissionPanel.Answered) -> None:
        self._after_answer(self.dialogs.permission_panel().has_focus)

    def on_elicitation_panel_answered(self, event: ElicitationPanel.Answered) -> None:
        self._after_answer(event.had_focus)

    def _after_answer(self, had_focus: bool) -> None:
        """Nothing left to answer: the prompt gets the keys back (unless the user moved on)."""
        self._sync_header()
        if self.dialogs.waiting():
            return
        if had_focus or self.focused is None:
            self.query_one(PromptInput).focus()

    def on_elicitation_panel_open_url(self, event: ElicitationPanel.OpenUrl) -> None:
        self.app.copy_to_clipboard(event.url)
        if event.copy:
            self.app.notify(event.url, title="URL copied to the clipboard")
        else:
            self._open_in_browser(event.url)

    @work(thread=True, group="browser")
    def _open_in_browser(self, url: str) -> None:
        # In a thread: starting a browser can take a while, and the screen must not stall.
        if not open_in_browser(url):
            title = "No browser here: open this URL yourself (it is copied)"
            self.app.call_from_thread(self.app.notify, url, title=title, timeout=30)

    def on_permission_panel_feedback(self, event: PermissionPanel.Feedback) -> None:
        """Why the user rejected a request: the next prompt in that session, ahead of the
        queue, sent once the turn is over (Codex, for one, ends the turn at a rejection)."""
        if event.text and event.session is self.session:
            self.queue.insert(0, Prompt(event.text))
            self._show_queue()
        if not self.dialogs.permission_panel().queue:
            self.query_one(PromptInput).focus()
        self._send_next()

    def on_permission_panel_rule_wanted(self, event: PermissionPanel.RuleWanted) -> None:
        conversation = self.conversation
        if conversation is None:
            return
        # The rule first: the agent's next request of this kind must find it.
        conversation.save_rule(event.rule)
        event.pending.select(event.option_id)
        conversation.answer_waiting_by_policy()  # others waiting that the new rule answers
        self.dialogs.permission_panel().prune()

    # -- actions ------------------------------------------------------------------------------

    @property
    def cancellable(self) -> bool:
        """A turn runs, or its prompt waits for its checkpoint: a cancel stops it."""
        if self.session is not None and self.session.busy:
            return True
        return self.conversation is not None and self.conversation.preparing

    def action_escape(self) -> None:
        if self.cancellable:
            self.cancel_turn()
            return
        if not isinstance(self.focused, PromptInput):
            self.query_one(PromptInput).focus()

    def cancel_turn(self) -> bool:
        """Cancel the running turn (the draft stays). False if there is none. The queued
        prompts go at once after it; cancelled again before the first has run, they are
        dropped (`QueuedPrompts.cancelled`)."""
        conversation = self.conversation
        if conversation is None or not conversation.cancel(CANCEL_GRACE):
            return False
        self.dialogs.prune()
        if self.query_one(QueuedPrompts).cancelled(self.queue, self._sending):
            self.queue.clear()
            self._show_queue()
        return True

    def action_scroll_transcript(self, direction: int) -> None:
        self.transcript.scroll_pages(direction)

    def action_follow(self) -> None:
        self.transcript.action_follow()

    def action_browse(self) -> None:
        self.transcript.focus_last()

    def action_toggle_inspector(self) -> None:
        self.inspector.toggle()

    def action_changes(self, turn: int | None = None) -> None:
        """The changes view: what each turn changed in the workspace, and undo."""
        from acp_tui.ui.screens.changes import ChangesScreen

        changes = self.conversation.changes() if self.conversation is not None else None
        if changes is not None:
            self.app.push_screen(ChangesScreen(changes, turn))

    @on(NoticeLine.ChangesWanted)
    def _changes_wanted(self, event: NoticeLine.ChangesWanted) -> None:
        self.action_changes(event.turn)

    @on(Transcript.FollowChanged)
    def _follow_changed(self, event: Transcript.FollowChanged) -> None:
        self.query_one("#paused").display = not event.following

    @on(Transcript.FocusReleased)
    def _focus_released(self) -> None:
        if self.focused is None:
            self.query_one(PromptInput).focus(scroll_visible=False)

    @on(Block.CopyRequested)
    def _copy(self, event: Block.CopyRequested) -> None:
        self.app.copy_to_clipboard(event.text)
        self.app.notify(f"Copied {len(event.text)} characters", timeout=2)
