"""One ACP session on a running agent: its state, its prompt turns, and the permission
requests the agent makes in it.

Every change to the state goes through the reducer (`acp_tui.session.reducer`) and is passed
to the session's `listeners`, which front ends (through the conversation) subscribe to.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from acp_tui.protocol import methods as m
from acp_tui.protocol.content import ContentBlock
from acp_tui.protocol.jsonrpc import INVALID_PARAMS, ConnectionClosed, RpcError
from acp_tui.protocol.updates import (
    ConfigOption,
    TurnUsage,
    turn_usage,
)
from acp_tui.services.dispatch import ClientServices
from acp_tui.services.fs import FileSystemService, WriteRecord
from acp_tui.services.permissions import Decision
from acp_tui.services.terminals import TerminalService
from acp_tui.session import reducer, terminals
from acp_tui.session.change import Change
from acp_tui.session.elicitation import PendingElicitation
from acp_tui.session.guard import GUARDED, Grants, Guard
from acp_tui.session.quirks import MISSING_FILE_READS_EMPTY
from acp_tui.session.state import Mode, PermissionAnswer, SessionState, ToolCallState
from acp_tui.workspace import Workspace

if TYPE_CHECKING:
    from acp_tui.session.client import AgentClient


class PendingPermission(msgspec.Struct, eq=False):
    """A permission request waiting for an answer, bound to the turn it arrived in."""

    session: Session
    request: m.PermissionRequest
    tool_call_id: str | None
    future: asyncio.Future[m.PermissionResponse]

    @property
    def done(self) -> bool:
        return self.future.done()

    @property
    def tool_call(self) -> ToolCallState | None:
        """The tool call asked about, as the session knows it (a v1 request often repeats
        only its id)."""
        return self.session.state.tool_calls.get(self.tool_call_id or "")

    @property
    def about(self) -> str:
        """What is asked about, in a few words: the tool call's title."""
        call = self.tool_call
        return call.title if call is not None and call.title else "permission"

    def answer(
        self,
        response: m.PermissionResponse,
        *,
        by: Literal["user", "policy", "turn"] = "user",
        reason: str | None = None,
        said: str | None = None,
    ) -> None:
        """Answer once (`by` whom; `reason`: the policy's; `said`: a line saying so in the
        session); an answer after the turn moved on (cancelled) is ignored."""
        if self.future.done():
            return
        outcome = response.outcome
        option_id = outcome.option_id if isinstance(outcome, m.SelectedOutcome) else None
        option = next((o for o in self.request.options if o.option_id == option_id), None)
        if option_id is not None and option is None:
            raise ValueError(f"{option_id!r} is not one of the options the agent offered")
        self.future.set_result(response)
        # Whoever answered (the user, a rule, headless policy): a call left open after a
        # rejection is shown rejected when the turn ends, not merely cancelled.
        rejected = option is not None and option.kind.startswith("reject")
        if option is not None and option.kind.startswith("allow"):
            call = self.tool_call
            kind = call.kind if call is not None else None
            always = option.kind == "allow_always"
            turn = self.session.state.turn
            self.session.grants.allowed(self.tool_call_id, kind, always=always, turn=turn)
        answer = PermissionAnswer(self.tool_call_id, option_id, by, reason, rejected)
        self.session.emit(reducer.permission_answered(self.session.state, answer, said))

    def answer_by_policy(self, decision: Decision, said: str) -> None:
        """Answer as a rule or the `--permission` mode decided, `said` in the session."""
        self.answer(decision.response(), by="policy", reason=decision.reason, said=said)

    def select(self, option_id: str) -> None:
        self.answer(m.PermissionResponse(m.SelectedOutcome(option_id)))

    def cancel(self, *, by: Literal["user", "policy", "turn"] = "user") -> None:
        self.answer(m.PermissionResponse(m.CancelledOutcome()), by=by)


class Session:
    """One ACP session: its state, and the turns the user runs in it."""

    def __init__(self, client: AgentClient, session_id: str) -> None:
        self.client = client
        self.state = SessionState(session_id=session_id)
        self.listeners: list[Callable[[Session, Change], None]] = []
        self.pending_permissions: list[PendingPermission] = []
        self.pending_elicitations: list[PendingElicitation] = []
        self.services: ClientServices | None = None
        self.grants = Grants()
        """What the user allowed in this session, for the guard (`acp_tui.session.guard`)."""
        self.guard: Guard | None = None
        self._turn_done: asyncio.Future[str | None] | None = None

    @property
    def id(self) -> str:
        return self.state.session_id

    @property
    def version(self) -> int:
        return self.client.info.protocol_version

    @property
    def busy(self) -> bool:
        return self._turn_done is not None

    @property
    def turn_cancelled(self) -> bool:
        """Whether the running (or just ended) turn was cancelled: what the agent asks now is
        answered `cancelled` at once, never shown."""
        return self.state.status == "cancelling" or (
            self._turn_done is None and self.state.stop_reason == "cancelled"
        )

    # -- state changes ------------------------------------------------------------------------

    def emit(self, change: Change) -> None:
        for listener in self.listeners:
            listener(self, change)

    def emit_all(self, changes: Iterable[Change]) -> None:
        for change in changes:
            self.emit(change)

    def apply(self, update: Any) -> None:
        """Apply one update from the agent (the hot path of a streaming turn)."""
        change = reducer.REDUCERS[update.__class__](self.state, update)
        for listener in self.listeners:
            listener(self, change)
        if change.kind == "tool_call":
            meta = getattr(update, "meta", None)
            if isinstance(meta, dict) and not terminals.TERMINAL_META_KEYS.isdisjoint(meta):
                self.emit_all(terminals.meta_terminal(self.state, change.item, meta))
        if change.kind == "status" and self.state.status == "idle" and self.version >= 2:
            self._finish_turn(self.state.stop_reason)

    def notice(self, severity: str, title: str, detail: str | None = None) -> None:
        self.emit(reducer.add_notice(self.state, severity, title, detail))

    # -- what the client services did for the agent --------------------------------------------

    def terminal_started(self, terminal_id: str, command: str, cwd: str) -> None:
        self.emit(terminals.terminal_started(self.state, terminal_id, command, cwd))

    def terminal_output(self, terminal_id: str, data: bytes) -> None:
        self.emit(terminals.terminal_output(self.state, terminal_id, data))

    def terminal_exited(self, terminal_id: str, code: int | None, signal: str | None) -> None:
        self.emit(terminals.terminal_exited(self.state, terminal_id, code, signal))
        if self.guard is not None:
            self.guard.terminal_exited(terminal_id, code)

    def file_written(self, record: WriteRecord) -> None:
        """Show an agent's write as a diff against what was there (or why it was refused)."""
        if record.written:
            self.notice("write", f"wrote {record.path}", record.diff)
        else:
            self.notice(
                "warning", f"refused to write {record.path}: {record.conflict}", record.diff
            )

    def apply_setup(self, setup: m.SessionSetup | None) -> None:
        """Take the modes and config options a session/new, load or resume answered with."""
        if setup is None:
            return
        modes = current = None
        if setup.modes is not None:
            modes = [Mode(x.id, x.name, x.description) for x in setup.modes.available_modes]
            current = setup.modes.current_mode_id
        options = list(setup.config_options) if setup.config_options is not None else None
        self.emit_all(reducer.session_setup(self.state, modes, current, options))

    # -- prompt turns -------------------------------------------------------------------------

    async def prompt(self, content: list[ContentBlock]) -> str | None:
        """Run one prompt turn; return its stop reason (`cancelled` after a cancel)."""
        if self._turn_done is not None:
            raise RuntimeError("a turn is already running in this session")
        done: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._turn_done = done
        self.emit_all(reducer.begin_turn(self.state, content))
        request = m.PromptRequest(self.id, content)
        call = asyncio.ensure_future(
            self.client.request("session/prompt", request, m.PromptResponse)
        )
        try:
            # The turn can end without the agent's answer (`abandon_turn`: it ignored a
            # cancel, or died); then the request is withdrawn.
            await asyncio.wait((call, done), return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not call.done():
                call.cancel()
                call.add_done_callback(_ignore_outcome)
        if call.done():
            try:
                response = call.result()
            except RpcError:
                if self.state.status == "cancelling":
                    # Agents whose abort surfaces as an error still mean "cancelled".
                    self._finish_turn("cancelled")
                else:
                    self._finish_turn(None)
                    raise
            else:
                if self.version < 2:
                    self._finish_turn(response.stop_reason, turn_usage(response.usage))
        return await done

    def _finish_turn(self, stop_reason: str | None, usage: TurnUsage | None = None) -> None:
        done, self._turn_done = self._turn_done, None
        if done is not None:
            # Whatever the agent left open in this turn will not move any more.
            self.emit_all(reducer.close_tool_calls(self.state))
        self._cancel_pending()
        if self.state.status != "idle" or self.state.stop_reason != stop_reason:
            self.emit(reducer.end_turn(self.state, stop_reason, usage))
        if done is not None and not done.done():
            done.set_result(stop_reason)

    async def cancel(self) -> None:
        """Cancel the running turn: tell the agent, answer its pending permission requests
        `cancelled`, and show unfinished tool calls cancelled. The turn ends when the agent
        confirms; until then its updates keep coming in."""
        if self._turn_done is None or self.state.status == "cancelling":
            return
        self.emit_all(reducer.cancel_turn(self.state))
        self._cancel_pending()
        with contextlib.suppress(ConnectionClosed):
            await self.client.notify("session/cancel", m.SessionIdParams(self.id))

    def _cancel_pending(self) -> None:
        """Answer what the agent asked in this turn and the user has not answered:
        `cancelled`."""
        for pending in self.pending_permissions:
            pending.cancel(by="turn")
        self.pending_permissions.clear()
        for question in self.pending_elicitations:
            question.cancel()
        self.pending_elicitations.clear()

    def abandon_turn(self, reason: str) -> None:
        """End the turn without the agent (it died or stopped answering)."""
        if self._turn_done is not None:
            self.notice("error", reason)
            self._finish_turn(None)

    # -- modes and config ---------------------------------------------------------------------

    async def set_mode(self, mode_id: str) -> None:
        await self.client.request("session/set_mode", m.SetModeRequest(self.id, mode_id))
        self.emit(reducer.mode_set(self.state, mode_id))

    async def set_config_option(self, option: ConfigOption, value: str | bool) -> None:
        if self.version >= 2:
            kind: str | msgspec.UnsetType = "boolean" if isinstance(value, bool) else "id"
        else:
            kind = "boolean" if isinstance(value, bool) else msgspec.UNSET
        request = m.SetConfigOptionRequest(self.id, option.key, value, kind)
        response = await self.client.request(
            "session/set_config_option", request, m.SetConfigOptionResponse | None
        )
        options = None
        if response is not None and response.config_options is not None:
            options = list(response.config_options)
        self.emit(reducer.config_set(self.state, option, value, options))

    async def select(self, category: str, value: str) -> None:
        """Switch the session's `mode` or `model` (a config option category) to `value`: by
        the config option of that category (the spec prefers those), else, for a mode, the
        v1 modes API. Raises ValueError naming what the agent offers; RpcError if it refuses."""
        for option in self.state.config_options:
            if option.category == category and any(c.value == value for c in option.choices()):
                await self.set_config_option(option, value)
                return
        if category == "mode" and any(mode.id == value for mode in self.state.modes):
            await self.set_mode(value)
            return
        options = [o for o in self.state.config_options if o.category == category]
        offered = [str(c.value) for o in options for c in o.choices()]
        if category == "mode" and not offered:
            offered = [mode.id for mode in self.state.modes]
        listed = ", ".join(offered) or "none"
        raise ValueError(f"unknown {category} {value!r}; the agent offers: {listed}")

    # -- requests from the agent --------------------------------------------------------------

    def permission_asked(self, request: m.PermissionRequest) -> PendingPermission:
        """The agent asks `request`: its tool call (as the request carries it) merged into
        the state, and the request waiting in `pending_permissions`, the one place requests
        wait for an answer. A request after a cancel (even after the cancelled turn ended) is
        answered cancelled at once: never shown, never approved, nor may it revive a
        cancelled call."""
        tool_call = request.tool_call_update
        future: asyncio.Future[m.PermissionResponse] = asyncio.get_running_loop().create_future()
        tool_call_id = tool_call.tool_call_id if tool_call is not None else None
        if tool_call_id is None and request.subject is not None:
            tool_call_id = request.subject.tool_call_id  # v2: a command for a shown call
        pending = PendingPermission(self, request, tool_call_id, future)
        if self.turn_cancelled:
            pending.cancel(by="turn")
            return pending
        if tool_call is not None:
            self.emit(reducer.patch_tool_call(self.state, tool_call))
        self.pending_permissions.append(pending)
        return pending

    async def request_permission(self, request: m.PermissionRequest) -> m.PermissionResponse:
        ids = [option.option_id for option in request.options]
        repeated = sorted({option_id for option_id in ids if ids.count(option_id) > 1})
        if repeated:
            # Whichever was meant, the answer would say both: refused before anyone sees it.
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params: the options repeat the optionId {', '.join(repeated)}",
            )
        pending = self.permission_asked(request)
        asked = not pending.done
        try:
            if asked:
                await self.client.decide_permission(pending)
            return await pending.future
        except asyncio.CancelledError:
            if asked:
                self.notice("warning", f"The agent withdrew its request: {pending.about}")
            raise
        finally:
            with contextlib.suppress(ValueError):
                self.pending_permissions.remove(pending)


def build_services(session: Session) -> ClientServices:
    """The fs and terminal services a v1 session offers its agent, confined to the workspace
    and whatever the user allowed on purpose; their results are shown in the session."""
    options = session.client.options
    workspace = Workspace([options.cwd], allowed=options.allow_paths)
    fs = None
    if options.fs:
        limit = {"max_write_bytes": options.max_write} if options.max_write is not None else {}
        fs = FileSystemService(
            workspace,
            **limit,
            on_write=session.file_written,
            missing_reads_empty=session.client.info.has_quirk(MISSING_FILE_READS_EMPTY),
        )
    terminals = None
    if options.terminal:
        terminals = TerminalService(
            workspace,
            on_start=session.terminal_started,
            on_output=session.terminal_output,
            on_exit=session.terminal_exited,
        )
    services = ClientServices(fs, terminals)
    session.guard = Guard(session, asks=options.guard)
    services.put_in_front(GUARDED, session.guard.run)
    return services


def _ignore_outcome(task: asyncio.Future[Any]) -> None:
    """Collect the outcome of a request nobody waits for any more, so that its failure (the
    agent was stopped) is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()
