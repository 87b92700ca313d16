"""A conversation: one agent process, its session, and what the user holds with them.

`Conversation` owns the agent's client and its session, the permission policy (the app's saved
rules plus the agent's own), the record and the checkpoints around each turn. It starts,
restarts and closes the agent; opens a session (new, resumed, loaded, picked, forked, or new
after a rewind) signed in; runs a prompt turn; answers permission requests by policy. Front
ends drive it and hear from it: through `subscribe` (every `Change` of the session shown, across
sessions) and through their `FrontEnd`. It never imports Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec

from acp_tui.config import AgentConfig
from acp_tui.conversation import opening as o
from acp_tui.conversation.changes import SessionChanges
from acp_tui.conversation.front_end import FrontEnd
from acp_tui.conversation.permissions import answered_title, without_asking
from acp_tui.conversation.prompt import Prompt, prompt_content
from acp_tui.conversation.shared import Shared
from acp_tui.conversation.sign_in import (
    AuthFailed,
    AuthRequired,
    Chooser,
    TerminalRunner,
    pick_sign_in,
    sign_in,
)
from acp_tui.protocol.jsonrpc import AUTH_REQUIRED, ConnectionClosed, RpcError
from acp_tui.records.export import export_path, session_markdown
from acp_tui.services.permissions import Rule
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.client import AgentClient
from acp_tui.session.elicitation import PendingElicitation
from acp_tui.session.handshake import ProtocolMismatch
from acp_tui.session.options import ClientOptions
from acp_tui.session.reducer import Change
from acp_tui.session.session import PendingPermission, Session
from acp_tui.session.state import SessionState
from acp_tui.session.summary import kept_turns_summary
from acp_tui.transport.launcher import LaunchError

Listener = Callable[[Session, Change], None]

STARTUP_ERRORS: tuple[type[Exception], ...] = (
    LaunchError,
    ProtocolMismatch,
    RpcError,
    OSError,
    AuthFailed,
    o.NothingToResume,
)
"""What starting an agent and opening its session may fail with, for the user to read."""


class Opening(msgspec.Struct, frozen=True):
    """How a conversation opens its session: what the command line asked of its agent."""

    resume: str | None = None
    """`--resume`: a session id (or prefix), "" for the latest; None for a new session."""
    fork: bool = False
    """`--fork`: go on in a fork of the session `resume` names."""
    auth: str | None = None
    """`--auth`: sign in with this method first."""
    mode: str | None = None
    """`--mode` (the agent's default from the config applies without it)."""
    model: str | None = None
    strict: bool = False
    """A `mode` or `model` the agent does not take is an error (`NotSelected`), not a notice."""
    new_if_unavailable: bool = False
    """A session `resume` names that cannot be opened gives a new session that says why."""

    def again(self) -> Opening:
        """The opening of another session on the same running agent: a new one, in the mode
        and model asked for, not signed in twice."""
        return msgspec.structs.replace(self, resume=None, fork=False, auth=None)


class NotSelected(Exception):
    """A mode or model asked for strictly (`Opening.strict`) that the agent does not take."""


class NotNow(Exception):
    """What the user asked for cannot be done now; `title` and the message say why."""

    def __init__(self, title: str, message: str) -> None:
        super().__init__(message)
        self.title = title


class TurnEnd(msgspec.Struct):
    """How a prompt turn ended."""

    stop_reason: str | None
    """The agent's stop reason (`cancelled` after a cancel); None when it gave none."""
    error: RpcError | None = None
    """The agent failed the prompt (or went away: `ConnectionClosed`)."""
    changes: Any = None
    """What the turn changed in the workspace (`TurnChanges`), when checkpointed."""


class Conversation:
    """One agent process and its session, driven by a front end (see the module docstring)."""

    def __init__(
        self,
        agent: AgentConfig,
        options: ClientOptions,
        shared: Shared,
        front_end: FrontEnd,
        *,
        opening: Opening | None = None,
        on_wire: Callable[[str, bytes], None] | None = None,
        started: asyncio.Event | None = None,
    ) -> None:
        self.agent = agent
        """The agent it runs (its command, env, name in the records); a restart starts it
        again."""
        self.options = options
        self.shared = shared
        self.front_end = front_end
        self.opening = opening or Opening()
        self.policy = shared.policy_for(agent.rules)
        self.client: AgentClient | None = None
        self.session: Session | None = None
        self.opened: o.Opened | None = None
        self.running = True
        """False once the agent exited or could not start: then it can be restarted."""
        self.unresponsive = False
        """The agent ignored a cancel: it can be stopped (and restarted)."""
        self.closing = False
        """Being closed: the agent's exit is expected, not reported."""
        self.forking = False
        """A fork (`session/fork`) is on its way, to be shown in place of the session."""
        self.sending = False
        """A turn is under way (its checkpoint, its prompt, its end): one at a time."""
        self.context: str | None = None
        """Sent ahead of the next prompt (a new session's summary of the turns it continues)."""
        self.started = started or asyncio.Event()
        """Set once the first session is open, or the agent failed to start."""
        self._listeners: list[Listener] = []
        self._on_wire = on_wire
        self._tasks: set[asyncio.Future[Any]] = set()
        self._watcher: asyncio.Task[None] | None = None
        self._restarting = False

    @property
    def name(self) -> str:
        """The agent's name in the records and the remembered sign-in."""
        return self.agent.name

    @property
    def workspace(self) -> Path:
        return self.options.cwd

    @property
    def agent_info(self) -> AgentInfo:
        """What the agent said of itself (nothing before it started)."""
        return self.client.info if self.client is not None else AgentInfo()

    # -- what the front ends hear ---------------------------------------------------------------

    def subscribe(self, listener: Listener) -> None:
        """Call `listener` with every change of the conversation's session, whichever it is."""
        self._listeners.append(listener)
        if self.session is not None:
            self.session.listeners.append(listener)

    def _show(self, session: Session) -> None:
        """Make `session` the conversation's: its subscribers follow it."""
        old = self.session
        if old is not None and old is not session:
            for listener in self._listeners:
                with contextlib.suppress(ValueError):
                    old.listeners.remove(listener)
        self.session = session
        for listener in self._listeners:
            if listener not in session.listeners:
                session.listeners.append(listener)
        self.front_end.session_shown(session)

    def _show_opened(self, opened: o.Opened) -> None:
        self.opened = opened
        self._show(opened.session)

    def _leave(self) -> None:
        """Write the rest of the record of the session being left."""
        if self.opened is not None:
            self.opened.close()
            self.opened = None

    # -- the agent ------------------------------------------------------------------------------

    def _new_client(self) -> AgentClient:
        front_end = self.front_end
        traffic = front_end.inspect if getattr(front_end, "inspects_traffic", False) else None
        return AgentClient(
            self.agent.command,
            self.options,
            decide_permission=self._decide_permission,
            decide_elicitation=self._decide_elicitation if front_end.answers_questions else None,
            on_problem=lambda message: front_end.inspect("problem", message),
            on_traffic=(
                (lambda direction, line: traffic(direction, line.decode(errors="replace")))
                if traffic is not None
                else None
            ),
            on_wire=self._on_wire,
            on_stderr=(
                (lambda chunk: traffic("stderr", chunk.decode(errors="replace")))
                if traffic is not None
                else None
            ),
        )

    async def start(self) -> None:
        """Start the agent and open the session `opening` asks for; from then on, an exit of
        the agent's own is said (`FrontEnd.agent_exited`). Raises one of `STARTUP_ERRORS` (or
        `NotSelected`); `fail` says it to the user."""
        client = self.client = self.client or self._new_client()
        if self.agent.starting:
            self.front_end.agent_starting(self.agent.starting)
        self.front_end.agent_started(await client.start())
        try:
            await self._open(self.opening)
        except STARTUP_ERRORS as error:
            if not await self._new_instead(error):
                raise
        self._watch()
        self.started.set()

    def _watch(self) -> None:
        """Say how the agent exits, when it does by itself (not stopped to close or restart)."""
        client = self.client
        if self._watcher is not None:
            self._watcher.cancel()
        if client is not None:
            self._watcher = asyncio.ensure_future(self._exit_of(client))

    async def _exit_of(self, client: AgentClient) -> None:
        await client.exited.wait()
        if not self.closing and not self._restarting:
            self.running = False
            process = client.process
            self.front_end.agent_exited(
                process.exit_description() if process is not None else "agent exited"
            )

    def fail(self, error: Exception) -> None:
        """Starting (or restarting) failed with `error`: the agent is down, and says why."""
        self.running = False
        self.front_end.agent_down(self.failure(error))
        self.started.set()

    def failure(self, error: Exception) -> str:
        """`error`, from starting the agent or opening its session, in words for the user."""
        if isinstance(error, AuthRequired):
            return f"{error} (start acp-tui with --auth METHOD)"
        if isinstance(error, RpcError) and error.code == AUTH_REQUIRED:
            return "the agent requires sign-in (start acp-tui with --auth METHOD)"
        message = getattr(error, "message", None) or str(error) or type(error).__name__
        process = self.client.process if self.client is not None else None
        gone = process is not None and process.returncode is not None
        if isinstance(error, ConnectionClosed | RpcError) and gone:
            return process.exit_description()  # type: ignore[union-attr]
        return message

    async def restart(self, how: Callable[[], Awaitable[None]] | None = None) -> None:
        """Stop the agent (if it still runs: it may be deaf) and start it again (`how`, when
        not simply so); reopen the session if the agent can, else a new one with the old one's
        history above. Raises as `start` does."""
        client, old = self.client, self.session
        if client is None:
            return
        self.running, self.unresponsive = True, False
        self.front_end.agent_starting("")
        self._leave()
        self._restarting = True
        try:
            await (how() if how is not None else client.restart())
        finally:
            self._restarting = False
        self.front_end.agent_started(client.info)
        await self._reopen(old)
        self._watch()

    async def stop(self) -> None:
        """Stop the agent process (its exit is then reported as any other)."""
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()

    async def close(self) -> None:
        """Close the session and stop the agent (its terminals too), for good."""
        self.closing = True
        session = self.session
        if session is not None and session.busy:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.cancel(), 1.0)
        self._leave()
        if self.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.close(), 10.0)
        if self._watcher is not None:
            self._watcher.cancel()

    # -- opening sessions -------------------------------------------------------------------------

    def _sign_in_hooks(self) -> tuple[Chooser | None, TerminalRunner | None]:
        front_end = self.front_end
        choose = front_end.choose_sign_in if front_end.chooses_sign_in else None
        run_terminal = front_end.run_terminal if front_end.runs_terminal else None
        return choose, run_terminal

    async def _open(self, opening: Opening) -> o.Opened:
        """A session opened as `opening` says, signed in, shown, then switched to the mode
        and model asked for."""
        client = self.client
        assert client is not None
        choose, run_terminal = self._sign_in_hooks()
        opened = await o.start_conversation(
            client,
            self.shared.store,
            self.name,
            resume=opening.resume,
            fork=opening.fork,
            auth=opening.auth,
            choose=choose,
            run_terminal=run_terminal,
            # The config's defaults, unless the command line names them (then as asked).
            mode=None if opening.mode else self.agent.mode,
            model=None if opening.model else self.agent.model,
        )
        self._show_opened(opened)
        session = opened.session
        for category, value in (("mode", opening.mode), ("model", opening.model)):
            if not value:
                continue
            try:
                await session.select(category, value)
            except ValueError as error:
                if opening.strict:
                    raise NotSelected(str(error)) from error
                session.notice("warning", f"{category} {value!r} not set", str(error))
            except RpcError as error:
                if opening.strict:
                    refused = f"the agent refused {category} {value!r}: {error.message}"
                    raise NotSelected(refused) from error
                session.notice("warning", f"{category} {value!r} not set", str(error))
        return opened

    async def _new_instead(self, error: Exception) -> bool:
        """The session `--resume` named could not be opened (or forked), but the agent runs: a
        new session, which says why at its top, rather than none. False if that is not the
        case, or a new session fails too."""
        opening, client = self.opening, self.client
        process = client.process if client is not None else None
        if not opening.new_if_unavailable or opening.resume is None or self.session is not None:
            return False
        if process is None or process.returncode is not None:  # the agent is gone too
            return False
        try:
            opened = await self._open(opening.again())
        except STARTUP_ERRORS:
            return False
        what = "fork" if opening.fork else "open"
        named = f" {opening.resume}" if opening.resume else ""
        opened.session.notice(
            "error",
            f"Could not {what} the session{named}",
            f"{self.failure(error)}. This is a new session: Ctrl+O lists this workspace's "
            "sessions.",
        )
        return True

    async def _reopen(self, old: Session | None) -> None:
        """After a restart: show the session `old` again, or a new one with its history."""
        client = self.client
        assert client is not None
        if old is None:
            await self._open(self.opening.again())
            return
        if self.shared.store is not None:
            opened = await o.open_conversation(
                client, self.shared.store, self.name, session_id=old.id
            )
            self._show_opened(opened)
            return
        if client.reopen_method(replay=False) is not None:
            try:
                self._show(await client.open_session(old.id, replay=False, state=old.state))
                return
            except RpcError as error:
                if isinstance(error, ConnectionClosed):
                    raise
                reason = error.message
        else:
            reason = "it cannot reopen sessions"
        session = await client.new_session(state=old.state)
        session.notice(
            "warning",
            f"The agent could not reopen the session ({reason}): the conversation goes on in "
            "a new session, and the agent does not remember what is above.",
        )
        self._show(session)

    def _check_ready(self) -> AgentClient:
        """The running client, for something that needs the agent idle. Raises NotNow."""
        client = self.client
        if client is None or not self.running:
            raise NotNow("The agent is not running", "Restart the agent first (Ctrl+R).")
        if self.busy:
            raise NotNow("A turn is running", "Wait for the turn to end, or cancel it.")
        return client

    @property
    def busy(self) -> bool:
        """A turn runs, or a prompt is on its way to the agent."""
        return self.sending or (self.session is not None and self.session.busy)

    async def list_sessions(self) -> list[o.SessionEntry]:
        """This agent's sessions in the workspace: its own list (if it runs) and the records."""
        client = self.client if self.running else None
        return await o.list_sessions(client, self.shared.store, self.name, self.workspace)

    async def delete_session(self, entry: o.SessionEntry) -> None:
        """Delete `entry` from the agent's list (if it can) and from the records. RpcError."""
        client = self.client if self.running else None
        await o.delete_session(client, self.shared.store, self.name, self.workspace, entry)

    @property
    def deletes_sessions(self) -> bool:
        return self.running and o.agent_deletes(self.client)

    @property
    def forks(self) -> bool:
        """Whether the agent runs and forks sessions (`session/fork`)."""
        client = self.client
        return client is not None and self.running and client.info.supports("fork")

    @property
    def signs_out(self) -> bool:
        client = self.client
        return client is not None and self.running and client.info.supports("logout")

    async def open(self, entry: o.SessionEntry) -> None:
        """Open `entry` instead of the conversation's session. Raises NotNow; RpcError when
        the agent cannot open it (the session before is then reopened)."""
        client = self._check_ready()
        old = self.session
        self._leave()
        if old is not None:
            with contextlib.suppress(Exception):
                await client.close_session(old)
        try:
            opened = await o.open_conversation(
                client,
                self.shared.store,
                self.name,
                session_id=entry.session_id,
                record=entry.record,
            )
        except RpcError:
            if old is not None:
                await self._reopen(old)
            raise
        self._show_opened(opened)

    async def fork_history(self, entry: o.SessionEntry) -> SessionState:
        """What a fork of `entry` shows of its history: the session shown's, or the record's."""
        shown = self.session
        if shown is not None and shown.id == entry.session_id:
            return shown.state
        return await o.fork_history(self.shared.store, entry.record, entry.session_id)

    async def fork(self, source_id: str, history: SessionState) -> bool:
        """Go on in a fork of session `source_id` (the one shown, or another), showing
        `history`; the source stays as it is. False when the fork is kept but not shown (a
        prompt went to the session meanwhile). Raises NotNow, RpcError."""
        client = self._check_ready()
        if not client.info.supports("fork"):
            raise NotNow("No fork", "This agent cannot fork sessions.")
        if self.forking:
            raise NotNow("Forking", "One fork at a time: it is on its way.")
        shown = self.session
        self.forking = True
        try:
            opened = await o.fork_conversation(
                client, self.shared.store, self.name, source_id, history
            )
        finally:
            self.forking = False
        if self.busy or self.session is not shown:
            # A prompt went to the session (or another was opened) while the agent forked.
            opened.close()
            with contextlib.suppress(Exception):
                await client.close_session(opened.session)
            return False
        left = self.opened
        self._show_opened(opened)
        if left is not None:
            left.close()
        if shown is not None:
            with contextlib.suppress(Exception):
                await client.close_session(shown)
        return True

    async def continue_before(self, turn: int) -> None:
        """After a rewind to before `turn`: go on in a new session with the same agent (ACP
        cannot make an agent forget turns), its first prompt carrying a summary of the turns
        kept. Raises NotNow, or one of `STARTUP_ERRORS`."""
        client, old = self.client, self.session
        if client is None or old is None or not self.running:
            raise NotNow("The agent is not running", "Restart the agent first (Ctrl+R).")
        summary = kept_turns_summary(old.state, turn)
        self._leave()
        with contextlib.suppress(Exception):
            await client.close_session(old)
        opened = await self._open(self.opening.again())
        self.context = summary
        kept = f"turns 1 to {turn - 1}" if turn > 2 else "turn 1" if turn == 2 else "no turn"
        opened.session.notice(
            "info",
            f"A new session, from before turn {turn} of the last one",
            f"The files are as they were before that turn. The agent does not remember the "
            f"earlier session: your next prompt carries a short summary of {kept} (what you "
            "asked, the tools it used, what it answered). Ctrl+O opens the earlier session.",
        )

    def changes(self) -> SessionChanges | None:
        """What each turn of the session changed in the workspace, to see and undo."""
        if self.session is None:
            return None
        return SessionChanges(self.shared.checkpoints, self.session)

    def export(self) -> Path:
        """Write the session as Markdown in the workspace; where. Raises OSError."""
        session = self.session
        if session is None:
            raise NotNow("Nothing to export", "No session is open yet.")
        state = session.state
        label = self.client.info.label if self.client is not None else None
        text = session_markdown(state, agent=label, workspace=str(self.workspace))
        path = export_path(self.workspace, state.title, state.session_id)
        path.write_text(text, encoding="utf-8")
        session.notice("info", f"Exported to {path}")
        return path

    # -- signing in and out ---------------------------------------------------------------------

    async def sign_in_again(self) -> None:
        """The agent answered a prompt with -32000 mid-session (a lapsed token, a sign-out):
        sign in again (the remembered method, else the front end's choice). An agent method
        signs this process in; a key or a login command restarts the agent, and the session
        is reopened. The prompt is not sent again by itself: the user sends it (↑)."""
        session, client = self.session, self.client
        if session is None or client is None:
            return
        choose, run_terminal = self._sign_in_hooks()
        store = self.shared.store
        try:
            choice = await pick_sign_in(client, agent=self.name, store=store, choose=choose)
        except AuthFailed as error:
            session.notice("error", "Not signed in", str(error))
            return

        async def signed_in() -> None:
            await sign_in(client, choice, run_terminal=run_terminal)
            if store is not None:
                store.remember_auth(self.name, choice.id)

        again = "send your prompt again (↑ brings it back)"
        if choice.type != "agent":
            session.notice(
                "info",
                f"Signing in with {choice.name or choice.id}",
                f"The agent restarts with it and the session is reopened: then {again}.",
            )
            try:
                await self.restart(signed_in)
            except STARTUP_ERRORS as error:
                self.fail(error)
            return
        try:
            await signed_in()
        except AuthFailed as error:
            session.notice("error", "Not signed in", str(error))
            return
        session.notice("info", f"Signed in again: {again}")

    async def sign_out(self) -> str:
        """`logout`: the agent ends the signed-in state; acp-tui forgets the remembered
        method, so the next start asks rather than signing straight back in. What happened,
        in words. Raises RpcError."""
        client, session = self.client, self.session
        if client is None:
            raise NotNow("The agent is not running", "Restart the agent first (Ctrl+R).")
        await client.logout()
        store = self.shared.store
        if store is not None:
            store.forget_auth(self.name)
        message = f"Signed out of {client.info.label}."
        if session is not None:
            session.notice("info", message, "New sessions may ask you to sign in again.")
        return message

    # -- turns ----------------------------------------------------------------------------------

    async def run_turn(self, prompt: Prompt) -> TurnEnd:
        """One prompt turn: its blocks, a checkpoint before, the prompt, a checkpoint after.
        The agent failing the prompt is said in the session and returned, not raised."""
        session, client = self.session, self.client
        if session is None or client is None:
            raise NotNow("No session", "The agent has no session open.")
        self.sending = True
        checkpoints = self.shared.checkpoints
        end = TurnEnd(None)
        try:
            content = prompt_content(prompt, self.workspace, client.info, context=self.context)
            self.context = None
            for problem in content.problems:
                self.front_end.say("warning", problem)
            await checkpoints.before_turn(session, prompt.text)
            try:
                end.stop_reason = await session.prompt(content.blocks)
            except ConnectionClosed as error:
                end.error = error  # the agent is gone; the session has said so
            except RpcError as error:
                end.error = error
                if error.code == AUTH_REQUIRED:
                    session.notice("warning", "The agent asks you to sign in again", error.message)
                else:
                    session.notice("error", "The agent failed the prompt", error.message)
            finally:
                task = asyncio.current_task()
                if task is None or not task.cancelling():  # a second Ctrl+C stops at once
                    end.changes = await checkpoints.after_turn(session)
        finally:
            self.sending = False
        auth = isinstance(end.error, RpcError) and end.error.code == AUTH_REQUIRED
        if auth and not isinstance(end.error, ConnectionClosed) and self.front_end.chooses_sign_in:
            await self.sign_in_again()
        return end

    def cancel(self, grace: float) -> bool:
        """Cancel the running turn (`session/cancel`); an agent that has not confirmed within
        `grace` seconds has its turn ended without it. False if no turn runs."""
        session = self.session
        if session is None or not session.busy:
            return False
        if session.state.status != "cancelling":
            self._spawn(session.cancel())
            asyncio.get_running_loop().call_later(grace, self._cancel_ignored, session, grace)
        return True

    def _cancel_ignored(self, session: Session, grace: float) -> None:
        if session.busy and session.state.status == "cancelling":
            session.abandon_turn(f"The agent ignored the cancel for {grace:g} s")
            self.unresponsive = True
            self.front_end.cancel_ignored()

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- what the agent asks --------------------------------------------------------------------

    async def _decide_permission(self, pending: PendingPermission) -> None:
        """By a rule or the mode; else the user, if the front end asks them (else refused)."""
        if self.answer_by_policy(pending, ask=self.front_end.asks_permission):
            return
        await self.front_end.ask_permission(pending)

    def answer_by_policy(self, pending: PendingPermission, *, ask: bool = True) -> bool:
        """Answer `pending` by a saved rule or the `--permission` mode, saying which; False
        when it is the user's to decide (`ask`: there is a user to ask)."""
        call = pending.tool_call
        kind = call.kind if call is not None else None
        decision = self.policy.decide(pending.request, kind, workspace=self.workspace)
        if decision.ask and ask:
            return False
        decision = without_asking(decision, pending.request)
        pending.answer_by_policy(decision, answered_title(decision, pending.request))
        return True

    def answer_waiting_by_policy(self) -> None:
        """A rule was saved: the requests waiting that it answers are answered."""
        session = self.session
        if session is not None:
            for pending in list(session.pending_permissions):
                if not pending.done:
                    self.answer_by_policy(pending)

    def save_rule(self, rule: Rule) -> None:
        """Save `rule` for every conversation (a failure is said: the rule holds for now)."""
        try:
            path = self.shared.save_rule(rule)
        except OSError as error:
            self.front_end.warn(str(error), title="Rule not saved")
            return
        if self.session is not None:
            self.session.notice("auto", f"rule saved: {rule.describe()}", str(path))

    async def _decide_elicitation(self, pending: PendingElicitation) -> None:
        await self.front_end.ask_question(pending)
