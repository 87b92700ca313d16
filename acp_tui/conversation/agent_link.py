"""The agent side of a conversation: one agent process and the session it shows.

`AgentLink` starts the agent, opens the session the command line asks for (signed in, in the
mode and model asked for), reopens it after a restart, says how the agent exits, and answers
what the agent asks (permission requests by policy, else through the front end). `Conversation`
(`acp_tui.conversation.conversation`) builds on it with what the user does: turns, other
sessions, sign-in, rules.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from acp_tui.config import AgentConfig
from acp_tui.conversation import opening as o
from acp_tui.conversation.front_end import FrontEnd
from acp_tui.conversation.permissions import answered_title, without_asking
from acp_tui.conversation.shared import Shared
from acp_tui.conversation.sign_in import (
    AuthFailed,
    AuthRequired,
    Chooser,
    TerminalRunner,
)
from acp_tui.protocol.jsonrpc import AUTH_REQUIRED, ConnectionClosed, RpcError
from acp_tui.services.permissions import Rule
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.change import Change
from acp_tui.session.client import AgentClient
from acp_tui.session.elicitation import PendingElicitation
from acp_tui.session.handshake import ProtocolMismatch
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission, Session
from acp_tui.text import human_size
from acp_tui.transport.launcher import LaunchError

if TYPE_CHECKING:
    from acp_tui.conversation.attention import Attention

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


RECONNECT_DELAYS = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 30.0, 30.0)
"""Seconds before each attempt to connect again to a remote agent whose connection dropped
(about two minutes in all, for a server being restarted); then it is said to be down."""


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


class AgentLink:
    """One agent process and the session it shows: started, opened, restarted, closed; what
    the agent asks, answered (see the module docstring)."""

    attention: Attention
    """What the conversation needs of the user: told here what the agent asks, and how it
    goes down; made by `Conversation`, which knows the rest (its turns, its budget)."""

    def __init__(
        self,
        agent: AgentConfig,
        options: ClientOptions,
        shared: Shared,
        front_end: FrontEnd,
        *,
        opening: Opening | None = None,
        on_wire: Callable[[str, bytes | bytearray], None] | None = None,
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
        self._reconnecting: asyncio.Task[bool] | None = None
        """A remote agent's dropped connection being made good (`back`)."""

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

    @property
    def waiting_questions(self) -> list[PendingElicitation]:
        """The agent's questions waiting for an answer: those asked outside any session (as
        it signs in), then the session's."""
        client, session = self.client, self.session
        outside = client.pending_elicitations if client is not None else []
        return [*outside, *(session.pending_elicitations if session is not None else [])]

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
        traffic = front_end.inspect if front_end.inspects_traffic else None
        return AgentClient(
            self.agent.command,
            self.options,
            decide_permission=self._decide_permission,
            decide_elicitation=self._decide_elicitation if front_end.answers_questions else None,
            on_problem=lambda message: front_end.inspect("problem", message),
            on_traffic=(
                (lambda direction, line: traffic(direction, _shown_line(line)))
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
            remote = self.agent.remote is not None
            watch = self._connection_of(client) if remote else self._exit_of(client)
            self._watcher = asyncio.ensure_future(watch)

    async def _exit_of(self, client: AgentClient) -> None:
        await client.exited.wait()
        if not self.closing and not self._restarting:
            self.running = False
            process = client.process
            description = process.exit_description() if process is not None else "agent exited"
            self.front_end.agent_exited(description)
            self.attention.agent_down(description)

    def fail(self, error: Exception) -> None:
        """Starting (or restarting) failed with `error`: the agent is down, and says why."""
        self.running = False
        message = self.failure(error)
        self.front_end.agent_down(message)
        self.attention.agent_down(message)
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
        if self._reconnecting is not None:  # no new connection to a remote agent from now on
            self._reconnecting.cancel()
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

    # -- a remote agent's connection --------------------------------------------------------------

    async def _connection_of(self, client: AgentClient) -> None:
        """A remote agent's watcher: a connection that drops by itself is made good."""
        await client.exited.wait()
        if not self.closing and not self._restarting and client.exited.is_set():
            self._reconnection()

    def _reconnection(self) -> asyncio.Task[bool]:
        if self._reconnecting is None or self._reconnecting.done():
            self._reconnecting = asyncio.ensure_future(self._reconnect())
        return self._reconnecting

    async def back(self) -> bool:
        """Wait until a remote agent's dropped connection is back, its session reopened (True),
        or acp-tui gave up on it (False; False at once for an agent that is not remote)."""
        client = self.client
        if self.agent.remote is None or client is None or self.closing:
            return False
        task = self._reconnecting
        if task is not None and not task.done():
            return await asyncio.shield(task)
        if not client.exited.is_set():
            return self.running  # back already, or never lost
        return await asyncio.shield(self._reconnection())

    async def _reconnect(self) -> bool:
        """Say the connection was lost; connect again (waiting longer after each failure) and
        reopen the session as a restart does, until `RECONNECT_DELAYS` run out."""
        client = self.client
        assert client is not None
        self.running = False
        process = client.process
        lost = process.exit_description() if process is not None else "the connection was lost"
        self.front_end.connection_lost(lost)
        error: Exception = ConnectionClosed(lost)
        for delay in RECONNECT_DELAYS:
            await asyncio.sleep(delay)
            if self.closing:
                return False
            if self.running and not client.exited.is_set():
                return True  # restarted meanwhile (Ctrl+R)
            try:
                await self.restart()
            except STARTUP_ERRORS as failed:
                self.running, error = False, failed
                continue
            url = self.agent.remote.url if self.agent.remote is not None else self.name
            self.front_end.say("info", f"Reconnected to {url}: the session goes on")
            return True
        self.fail(error)
        return False

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

    # -- what the agent asks --------------------------------------------------------------------

    async def _decide_permission(self, pending: PendingPermission) -> None:
        """By a rule or the mode; else the user, if the front end asks them (else refused)."""
        if self.answer_by_policy(pending, ask=self.front_end.asks_permission):
            return
        await self.front_end.ask_permission(pending)
        self.attention.asked("permission", f"Permission: {pending.about}")

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
        self.attention.asked("question", f"Question: {pending.about}")


_SHOWN_TRAFFIC = 1 << 16
"""How much of one line the traffic inspector gets: a big write is shown cut, not decoded and
kept whole."""


def _shown_line(line: bytes | bytearray) -> str:
    if len(line) <= _SHOWN_TRAFFIC:
        return line.decode(errors="replace")
    start = line[:_SHOWN_TRAFFIC].decode(errors="replace")
    return f"{start} … ({human_size(len(line))} in all)"
