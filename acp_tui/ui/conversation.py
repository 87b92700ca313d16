"""One conversation of the app, as the TUI shows it: its chat screen (the base of a screen
stack of its own) and the `Conversation` behind it, to which it is the front end.

The app holds a list of them; each runs its own agent, so a turn in one never waits for
another, and a permission request waits in its own conversation's dialog.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from acp_tui.conversation.front_end import FrontEnd
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.ui.widgets.session_header import SessionHeader

if TYPE_CHECKING:
    from acp_tui.check.live import LiveCheck
    from acp_tui.config import AgentConfig, Need, Startup
    from acp_tui.conversation.agent_link import Opening
    from acp_tui.conversation.attention import Call
    from acp_tui.conversation.conversation import Conversation
    from acp_tui.conversation.opening import SessionEntry
    from acp_tui.conversation.prompt import Prompt
    from acp_tui.conversation.sign_in import AuthChoice
    from acp_tui.session.agent_info import AgentInfo
    from acp_tui.session.elicitation import PendingElicitation
    from acp_tui.session.options import ClientOptions
    from acp_tui.session.session import PendingPermission, Session
    from acp_tui.session.state import SessionState
    from acp_tui.ui.app import AcpApp
    from acp_tui.ui.chat_screen import ChatScreen

STATES = {
    "starting": "working",
    "running": "working",
    "cancelling": "working",
    "requires_action": "waiting",
    "idle": "idle",
    "exited": "stopped",
}
"""The session bar's state of a conversation, by its header's status."""


class ConversationView(FrontEnd):
    """A chat screen and the conversation it shows; the conversation's front end."""

    asks_permission = True
    answers_questions = True
    chooses_sign_in = True
    runs_terminal = True
    inspects_traffic = True

    def __init__(
        self, app: AcpApp, mode: str, number: int, agent: AgentConfig, options: ClientOptions
    ) -> None:
        self.app = app
        self.mode = mode
        """The app's screen mode that shows this conversation (its dialogs stack there)."""
        self.number = number
        """1 for the first conversation opened, then 2, 3…: its name in the session bar."""
        self.agent = agent
        """The agent it runs (its command, its env, its name in the records)."""
        self.options = options
        """What its agent is started with: the app's for the first conversation, a copy for
        each later one (an `env_var` sign-in changes only that conversation's env)."""
        self.chat: ChatScreen | None = None
        self.conversation: Conversation | None = None
        """Made as its agent starts, after the first frame (its modules are most of acp-tui)."""
        self.live_check: LiveCheck | None = None
        """Checks what the agent sends against the schema (kept across restarts)."""
        self.started = asyncio.Event()
        """Set once the session is open (or the agent failed to start)."""

    # -- what the app and the tests read ----------------------------------------------------

    @property
    def session(self) -> Session | None:
        return self.conversation.session if self.conversation is not None else None

    @property
    def agent_running(self) -> bool:
        """False once the agent exited or could not start: then it can be restarted."""
        return self.conversation is None or self.conversation.running

    @property
    def agent_unresponsive(self) -> bool:
        """The agent ignored a cancel: it can be stopped (and restarted)."""
        return self.conversation is not None and self.conversation.unresponsive

    @property
    def state(self) -> str:
        """`working`, `waiting` (for you), `idle` or `stopped`, as its header shows it (a
        prompt waiting for its checkpoint is work under way too)."""
        header = self._header()
        preparing = self.conversation is not None and self.conversation.preparing
        if header is None or preparing:
            return "working"
        status = header.status
        if self.session is not None and self.session.pending_permissions:
            status = "requires_action" if status != "exited" else status
        return STATES.get(status, "working")

    @property
    def need(self) -> Need | None:
        """What it needs of the user most (`acp_tui.conversation.attention`), if anything."""
        return self.conversation.attention.need if self.conversation is not None else None

    @property
    def label(self) -> str:
        """What the session bar calls it: the session title, else the agent's name."""
        header = self._header()
        name = (header.title or header.agent) if header is not None else ""
        return f"{self.number} {name}".strip()

    def _header(self) -> SessionHeader | None:
        """Its chat's header; None before the chat is mounted, and as the app shuts down (the
        chat still mounted, its widgets gone: a header's last change is handled then)."""
        if self.chat is None or not self.chat.is_mounted:
            return None
        return next(iter(self.chat.query(SessionHeader)), None)

    def opening(self, startup: Startup | None) -> Opening:
        """How the conversation opens its session, as `startup` (the command line) asks: the
        first conversation the session `--resume` names (`--fork`: a fork of it); any with the
        command line's agent signed in with its `--auth`, in its `--mode` and `--model`."""
        from acp_tui.conversation.agent_link import Opening

        if startup is None or self.agent is not startup.agent:
            return Opening()
        first = self.number == 1
        return Opening(
            startup.resume if first else None,
            startup.fork and first,
            startup.auth,
            startup.mode,
            startup.model,
            new_if_unavailable=True,
        )

    # -- the front end -------------------------------------------------------------------------

    def _chat(self) -> ChatScreen:
        chat = self.chat
        assert chat is not None
        return chat

    def agent_starting(self, label: str) -> None:
        header = self._chat().query_one(SessionHeader)
        if label:
            header.agent = label
        elif header.status != "reconnecting":  # a reconnection's restart says so already
            self._chat().agent_restarting()
        self.app.refresh_bindings()

    def agent_started(self, info: AgentInfo) -> None:
        self._chat().agent_started(info.label, info.protocol_version)

    def agent_down(self, message: str) -> None:
        self._chat().agent_failed(message)
        self.app.refresh_bindings()

    def agent_exited(self, description: str) -> None:
        self._chat().agent_exited(description)
        self.app.refresh_bindings()

    def connection_lost(self, description: str) -> None:
        self._chat().query_one(SessionHeader).status = "reconnecting"
        session = self.session
        timeline = session.state.timeline if session is not None else []
        # A turn the drop cut short said how already, as its last line.
        said = bool(timeline) and getattr(timeline[-1], "title", None) == description
        self.say(
            "warning",
            "Reconnecting: acp-tui connects again by itself and reopens the session (Ctrl+R: "
            "at once); what the agent sent meanwhile is lost",
            None if said else description,
        )
        self.app.notify(description, title="Reconnecting", severity="warning")
        self.app.refresh_bindings()

    def cancel_ignored(self) -> None:
        self.app.refresh_bindings()
        self.say(
            "warning",
            "The agent may be stuck: Ctrl+R stops and restarts it (your draft stays); "
            "Ctrl+P, Stop the agent: only stops it",
        )
        self.app.notify("Ctrl+R stops and restarts it.", title="The agent ignored the cancel")

    def prompt_held(self, prompt: Prompt | None) -> None:
        self._chat().prompt_held(prompt)
        self.app.refresh_session_bars()

    def session_shown(self, session: Session) -> None:
        header = self._chat().query_one(SessionHeader)
        if header.status == "reconnecting":  # back: the session's own status, as after a start
            header.status = "starting"
        self._chat().attach(session)

    def needs_you(self, call: Call) -> None:
        self.app.inbox.heard(self, call)

    def say(self, severity: str, title: str, detail: str | None = None) -> None:
        session = self.session
        if session is not None:
            session.notice(severity, title, detail)
        else:
            self.app.notify(detail or title, title=title, severity="warning")

    def warn(self, message: str, *, title: str | None = None) -> None:
        self.app.notify(message, title=title or "", severity="warning", timeout=8)

    def inspect(self, kind: str, text: str) -> None:
        with contextlib.suppress(Exception):
            self._chat().inspector.add(kind, text)

    def violation(self, problem: str) -> None:
        """The live check found a message that breaks the schema: shown in the inspector and
        counted in the status line, never in the conversation itself."""
        with contextlib.suppress(Exception):
            self._chat().protocol_violation(problem)

    async def ask_permission(self, pending: PendingPermission) -> None:
        """In this conversation's own dialog, shown or not: the request waits there, and the
        session bar says the conversation waits for you."""
        self._chat().ask_permission(pending)

    async def ask_question(self, pending: PendingElicitation) -> None:
        """In this conversation's own question dialog; only the user can answer (or dismiss)."""
        self._chat().ask_question(pending)

    async def choose_sign_in(
        self, choices: list[AuthChoice], remembered: str | None
    ) -> AuthChoice | None:
        """Ask which method to sign in with (from the worker opening the session: the dialog
        is waited for there); None when the user gives up."""
        from acp_tui.ui.screens import SignInScreen

        return await self.app.push_screen(SignInScreen(choices, remembered), wait_for_dismiss=True)

    async def run_terminal(self, argv: list[str], env: dict[str, str]) -> int:
        """Run a sign-in command on the real terminal, the app suspended around it."""
        from acp_tui.conversation.sign_in import run_in_terminal

        with self.app.suspend():
            return await asyncio.to_thread(run_in_terminal, argv, env, self.options.cwd)

    # -- its sessions ------------------------------------------------------------------------

    async def pick_session(self) -> None:
        """The session picker; the chosen session replaces the one shown (or is forked)."""
        from acp_tui.ui.screens import SessionsScreen

        conversation = self.conversation
        if conversation is None:
            return
        app = self.app
        entries = await conversation.list_sessions()
        session = conversation.session
        current = session.id if session is not None else None
        elsewhere = frozenset(
            c.session.id for c in app.conversations if c.session is not None and c is not self
        )
        picker = SessionsScreen(
            entries,
            current,
            delete=conversation.delete_session,
            agent_deletes=conversation.deletes_sessions,
            open_elsewhere=elsewhere,
            forks=conversation.forks,
        )
        picked = await app.push_screen_wait(picker)
        if picked is None:
            return
        entry = picked.entry
        if picked.fork:
            self.fork(entry.session_id, await conversation.fork_history(entry))
        elif entry.session_id != current:
            await self.open_session(entry)

    async def open_session(self, entry: SessionEntry) -> None:
        """Open `entry` instead of the session shown."""
        from acp_tui.conversation.agent_link import NotNow

        if self.conversation is None:
            return
        try:
            await self.conversation.open(entry)
        except NotNow as refused:
            self.app.notify(str(refused), title=refused.title)
        except RpcError as error:
            self.app.notify(
                error.message, title="The session could not be opened", severity="error"
            )

    @property
    def can_fork(self) -> bool:
        conversation = self.conversation
        return conversation is not None and conversation.session is not None and conversation.forks

    def fork_shown(self) -> None:
        """Go on in a fork of the session shown."""
        session = self.session
        if session is not None:
            self.fork(session.id, session.state)

    def fork(self, source_id: str, history: SessionState) -> None:
        """Show a fork of session `source_id` (the one shown, or one picked in Ctrl+O), with
        `history`, in place of the session shown, which stays as it is."""
        # A worker of its own: opening the session picker (the "sessions" group's) must not
        # cancel a fork the agent is making.
        self.app.run_worker(self._fork(source_id, history), group="fork", exit_on_error=False)

    async def _fork(self, source_id: str, history: SessionState) -> None:
        from acp_tui.conversation.agent_link import NotNow

        if self.conversation is None:
            return
        try:
            shown = await self.conversation.fork(source_id, history)
        except NotNow as refused:
            self.app.notify(str(refused), title=refused.title)
            return
        except RpcError as error:
            self.app.notify(
                error.message, title="The session could not be forked", severity="error"
            )
            return
        if not shown:
            self.app.notify("The fork is kept: Ctrl+O opens it.", title="Not switched to the fork")

    def continue_before(self, turn: int) -> None:
        """Rewound to before `turn`: go on from there in a new session (the app's worker: the
        changes view that asked is dismissed meanwhile)."""
        self.app.run_worker(self._continue_before(turn), group="continue", exit_on_error=False)

    async def _continue_before(self, turn: int) -> None:
        from acp_tui.conversation.agent_link import STARTUP_ERRORS, NotNow

        conversation = self.conversation
        if conversation is None:
            return
        try:
            await conversation.continue_before(turn)
        except NotNow as refused:
            self.app.notify(str(refused), title=refused.title)
        except STARTUP_ERRORS as error:
            message = conversation.failure(error)
            self.app.notify(message, title="No new session", severity="error")

    def export(self) -> None:
        """Write the session as Markdown in the workspace; a notification says where."""
        from acp_tui.conversation.agent_link import NotNow

        if self.conversation is None:
            return
        try:
            path = self.conversation.export()
        except NotNow:
            return
        except OSError as error:
            self.app.notify(str(error), title="Not exported", severity="error")
            return
        self.app.notify(str(path), title="Exported to Markdown", timeout=4)
