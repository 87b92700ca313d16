"""Drives an agent process: start it and agree on a protocol version, open sessions on it,
route what it sends, shut it down.

`AgentClient` is acp-tui's side of one agent process. It answers what the agent asks (session
updates go through the reducer; permission requests go to the policy, then to whoever shows
them to the user; fs and terminal requests to the client services) and knows which protocol
version the agent really speaks. `Session` (`acp_tui.session.session`) is one ACP session on
it. Front ends reach both through a conversation (`acp_tui.conversation`), never JSON-RPC.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from acp_tui.protocol import methods as m
from acp_tui.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    ConnectionClosed,
    RpcError,
    method_not_found,
)
from acp_tui.protocol.updates import (
    SessionNotification,
    UnknownUpdate,
    decode_session_notification,
)
from acp_tui.services.dispatch import ClientServices
from acp_tui.session.agent_end import start_agent
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.elicitation import PendingElicitation, describe_answer, parse_form
from acp_tui.session.handshake import (
    ELICITATION_MODES,
    ProtocolMismatch,
    agent_info_from,
    initialize_request,
    shape_version,
)
from acp_tui.session.joined_chunks import join_chunks
from acp_tui.session.options import SUPPORTED_VERSIONS, ClientOptions
from acp_tui.session.session import PendingPermission, Session, build_services
from acp_tui.session.state import Notice, SessionState
from acp_tui.transport.codec import TypedNotifications
from acp_tui.transport.connection import Connection
from acp_tui.transport.launcher import AgentProcess
from acp_tui.transport.transcript import Transcript

if TYPE_CHECKING:
    from acp_tui.remote.client import RemoteAgent

_ORPHAN_LIMIT = 1000
_ORPHAN_SESSIONS = 16
"""Updates kept for a session id we do not know yet (agents may send them before answering
`session/new`); beyond this they are reported and dropped."""


class AgentClient:
    """acp-tui's end of the conversation with one agent process."""

    def __init__(
        self,
        argv: list[str],
        options: ClientOptions,
        *,
        decide_permission: Callable[[PendingPermission], Awaitable[None]],
        decide_elicitation: Callable[[PendingElicitation], Awaitable[None]] | None = None,
        services_factory: Callable[[Session], ClientServices] | None = build_services,
        on_problem: Callable[[str], None] | None = None,
        on_traffic: Callable[[str, bytes | bytearray], None] | None = None,
        on_wire: Callable[[str, bytes | bytearray], None] | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
    ) -> None:
        self.argv = argv
        self.options = options
        self.info = AgentInfo()
        self.sessions: dict[str, Session] = {}
        self.process: AgentProcess | RemoteAgent | None = None
        self.connection: Connection | None = None
        self.decide_permission = decide_permission
        self.decide_elicitation = decide_elicitation
        """Shows an agent's question to the user (or answers it by policy); without it,
        elicitation is not advertised."""
        self.pending_elicitations: list[PendingElicitation] = []
        """Questions outside any session (scoped to a request, e.g. during sign-in)."""
        self._opened_pages: dict[str, tuple[Session | None, PendingElicitation]] = {}
        """URL elicitations the user opened, by id, until the agent says they are complete."""
        self._services_factory = services_factory
        self._on_problem = on_problem
        self._on_traffic = on_traffic
        self._on_wire = on_wire
        """The wire in bulk (see `Connection`'s `tap`): the live protocol check."""
        self._on_stderr = on_stderr
        self._transcript: Transcript | None = None
        self._reader: asyncio.Task[None] | None = None
        self._orphans: dict[str, list[Any]] = {}
        self._warnings: list[str] = []
        self.exited = asyncio.Event()

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> AgentInfo:
        """Spawn the agent and agree on a protocol version.

        We offer the version the user asked for. An agent may answer another one we also speak
        (in that version's shape, or echoing ours with the other's shape); then we start afresh
        in the version its answer shows, since the first `initialize` described us in the wrong
        shape. Raises `ProtocolMismatch` if it speaks nothing we do."""
        if self.options.transcript is not None and self._transcript is None:
            self._transcript = Transcript(self.options.transcript, on_error=self._warn)
        offered = self.options.protocol_version
        for _attempt in range(2):
            await self._spawn()
            try:
                response = await asyncio.wait_for(
                    self._initialize(offered), self.options.startup_timeout
                )
            except TimeoutError:
                await self.close()
                raise ConnectionClosed(
                    f"the agent did not answer initialize within {self.options.startup_timeout:g} s"
                ) from None
            except RpcError as error:
                if offered != 1 and not isinstance(error, ConnectionClosed):
                    # Strict agents reject a shape they do not speak instead of negotiating.
                    await self.close()
                    offered = 1
                    continue
                raise
            spoken = shape_version(response)
            if spoken == offered and response.protocol_version == offered:
                self._take(response, spoken)
                await self._route_providers()
                return self.info
            await self.close()
            if spoken not in SUPPORTED_VERSIONS or spoken == offered:
                break
            offered = spoken
        raise ProtocolMismatch(
            f"the agent answered protocol version {response.protocol_version}; "
            f"acp-tui speaks {' and '.join(map(str, SUPPORTED_VERSIONS))}"
        )

    async def _route_providers(self) -> None:
        """Point the agent's LLM providers where the config says (`providers/set`, or
        `providers/disable`), before any session uses them. One the agent refuses is
        reported, and the agent goes on as it was set up."""
        routes = self.options.providers
        if routes and not self.info.supports("providers"):
            self._warn("provider settings left out: the agent does not take them (providers)")
            return
        for route in routes:
            method = "providers/disable"
            params: Any = m.DisableProviderRequest(route.provider_id)
            if route.api_type is not None and route.base_url is not None:
                headers = route.headers or msgspec.UNSET
                method = "providers/set"
                params = m.SetProviderRequest(
                    route.provider_id, route.api_type, route.base_url, headers
                )
            try:
                await self._request_in_time(method, params)
            except RpcError as error:
                self._warn(f"provider {route.provider_id!r} not set: {error.message}")

    async def list_providers(self) -> list[m.ProviderInfo]:
        """The agent's LLM providers and where each sends requests (`providers/list`, when
        it `supports("providers")`)."""
        response: m.ListProvidersResponse = await self._request_in_time(
            "providers/list", {}, m.ListProvidersResponse
        )
        return response.providers

    async def _request_in_time(
        self, method: str, params: Any, result_type: Any = msgspec.Raw
    ) -> Any:
        """`request`, for what comes before the user's first prompt (setting a session up):
        an agent that never answers must not hang acp-tui, so no answer within the start-up
        timeout is an RpcError."""
        timeout = self.options.startup_timeout
        try:
            return await asyncio.wait_for(self.request(method, params, result_type), timeout)
        except TimeoutError:
            message = f"the agent did not answer {method} within {timeout:g} s"
            raise RpcError(INTERNAL_ERROR, message) from None

    async def _spawn(self) -> None:
        self.exited.clear()
        self.process = await start_agent(self.argv, self.options, self._on_stderr)
        self.connection = Connection(
            self.process.stdout,
            self.process.stdin,
            self,
            transcript=self._transcript,
            on_problem=self._problem,
            on_traffic=self._on_traffic,
            tap=self._on_wire,
            typed_notifications=self.typed_notifications,
            explain_eof=self._explain_exit,
        )
        if self.options.max_line is not None:
            self.connection.max_line = self.options.max_line
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.connection is not None
        connection = self.connection
        try:
            await connection.run()
        finally:
            if connection is self.connection:
                for session in self.sessions.values():
                    session.abandon_turn(self.process.exit_description() if self.process else "")
                self.exited.set()

    async def _explain_exit(self) -> str:
        """How the agent went away, once its stdout closed: its exit status and last words."""
        process = self.process
        if process is None:
            return "the agent closed the connection"
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), 2.0)
        return process.exit_description()

    async def _initialize(self, version: int) -> m.InitializeResponse:
        params = initialize_request(
            self.options,
            version,
            questions=self.decide_elicitation is not None,
            services=self._services_factory is not None,
        )
        result: m.InitializeResponse = await self.request(
            "initialize", params, m.InitializeResponse
        )
        return result

    def _take(self, response: m.InitializeResponse, version: int) -> None:
        self.info = agent_info_from(response, version)
        for quirk in self.info.quirks:
            self._note(f"quirk {quirk.key} applies to {self.info.label}: {quirk.summary}")

    async def close(self) -> None:
        """Close every session the agent lets us close, then stop the agent process."""
        for session in list(self.sessions.values()):
            if session.services is not None:
                await session.services.close()
        if self.info.protocol_version >= 2 or self.info.supports("close"):
            for session in list(self.sessions.values()):
                with contextlib.suppress(RpcError, TimeoutError):
                    await asyncio.wait_for(
                        self.request("session/close", m.SessionIdParams(session.id)), 2.0
                    )
        if self.process is not None:
            await self.process.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._reader, 2.0)
        if self._transcript is not None:
            self._transcript.flush()

    async def close_session(self, session: Session) -> None:
        """Leave one session, the agent process running on: stop its terminals, send
        `session/close` if the agent takes it (it also cancels the session's work), forget it."""
        self.sessions.pop(session.id, None)
        if session.services is not None:
            await session.services.close()
        if self.info.protocol_version >= 2 or self.info.supports("close"):
            with contextlib.suppress(RpcError, TimeoutError):
                await asyncio.wait_for(
                    self.request("session/close", m.SessionIdParams(session.id)), 2.0
                )

    async def delete_session(self, session_id: str) -> None:
        """Remove a session from the agent's list (`session/delete`, when `supports` it)."""
        await self.request("session/delete", m.SessionIdParams(session_id))

    async def restart(self) -> AgentInfo:
        """Stop the agent and start it afresh (after a sign-in outside the protocol, or with
        new `options.env`): its sessions are gone, the new process knows none."""
        await self.close()
        self.sessions.clear()
        self._orphans.clear()
        return await self.start()

    # -- sessions -----------------------------------------------------------------------------

    async def authenticate(self, method_id: str) -> None:
        method = "auth/login" if self.info.protocol_version >= 2 else "authenticate"
        await self.request(method, m.AuthenticateRequest(method_id))

    async def logout(self) -> None:
        """Sign out of the agent (only when it `supports("logout")`): its sessions may end or
        ask for sign-in again, as the agent decides."""
        method = "auth/logout" if self.info.protocol_version >= 2 else "logout"
        await self.request(method, {})

    async def new_session(self, *, state: SessionState | None = None) -> Session:
        """Start a session in the workspace. `state` (a conversation recorded earlier, to show
        above the new one) becomes the session's state."""
        cwd, servers, roots = self._where()
        params = m.NewSessionRequest(cwd, servers, roots)
        return await self._set_up("session/new", params, state)

    async def fork_session(self, source_id: str, state: SessionState) -> Session:
        """A new session that starts where session `source_id` is (`session/fork`, when
        `supports` it; open here or not): the agent carries its context over, and `state` (a
        copy of the source's history) is what the new session shows of it. The source goes
        on as it was."""
        cwd, servers, roots = self._where()
        params = m.ForkSessionRequest(source_id, cwd, servers, roots)
        return await self._set_up("session/fork", params, state)

    def _where(self) -> tuple[str, list[dict[str, Any]] | msgspec.UnsetType, Any]:
        """A new session's workspace, MCP servers (v2 leaves an empty list out) and other
        roots."""
        servers: list[dict[str, Any]] | msgspec.UnsetType = self._mcp_servers()
        if self.info.protocol_version >= 2:
            servers = servers or msgspec.UNSET
        return str(self.options.cwd), servers, self._additional_directories()

    async def _set_up(self, method: str, params: Any, state: SessionState | None) -> Session:
        """Send `method` (`session/new` or `session/fork`) and register the session it makes,
        with `state` as its state."""
        setup = await self._request_in_time(method, params, m.SessionSetup)
        if not setup.session_id:
            raise RpcError(INVALID_PARAMS, f"the agent answered {method} without a sessionId")
        session = self._register(setup.session_id, state)
        session.apply_setup(setup)
        return session

    def reopen_method(self, *, replay: bool = True) -> str | None:
        """How `open_session` reopens a session: `load` (v1, replays the history), `resume`
        (no replay), `replay` (v2 `session/resume` with `replayFrom`), or None when the agent
        can do neither. With `replay` False (acp-tui shows its own record), resuming is
        preferred; else replaying."""
        if self.info.protocol_version >= 2:
            return "replay" if replay else "resume"
        load, resume = self.info.supports("load"), self.info.supports("resume")
        if replay:
            return "load" if load else "resume" if resume else None
        return "resume" if resume else "load" if load else None

    async def open_session(
        self, session_id: str, *, replay: bool = True, state: SessionState | None = None
    ) -> Session:
        """Open a session the agent served before, the way `reopen_method(replay=...)` says.
        A replay rebuilds the history as updates; without one, `state` (acp-tui's record of
        the conversation, if any) becomes the session's state. Raises RpcError, with
        METHOD_NOT_FOUND when the agent cannot reopen sessions at all."""
        how = self.reopen_method(replay=replay)
        if how is None:
            raise RpcError(
                METHOD_NOT_FOUND, "the agent cannot reopen sessions (no session/load or resume)"
            )
        cwd = str(self.options.cwd)
        servers = self._mcp_servers()
        replays = how in ("load", "replay")
        session = self._register(session_id, None if replays else state)
        try:
            params: Any
            # The whole list every time: an agent does not restore a session's roots itself.
            roots = self._additional_directories()
            if how == "load":
                params = m.LoadSessionRequest(session_id, cwd, servers, roots)
            elif self.info.protocol_version >= 2:
                replay_from = m.ReplayFrom() if how == "replay" else msgspec.UNSET
                params = m.ResumeSessionRequest(
                    session_id, cwd, servers or msgspec.UNSET, replay_from, roots
                )
            else:
                params = m.ResumeSessionRequest(
                    session_id, cwd, servers, additional_directories=roots
                )
            method = "session/load" if how == "load" else "session/resume"
            setup = await self.request(method, params, m.SessionSetup | None)
        except RpcError:
            self.sessions.pop(session_id, None)
            raise
        session.apply_setup(setup)
        return session

    def _additional_directories(self) -> list[str] | msgspec.UnsetType:
        """The directories the user allowed beyond the workspace (`--allow-path`), as the
        session's other roots, for an agent that takes them: its own tools may then work
        there too. Absolute, as the protocol asks."""
        if not self.options.allow_paths or not self.info.supports("additional_directories"):
            return msgspec.UNSET
        return [str(path.absolute()) for path in self.options.allow_paths]

    def _mcp_servers(self) -> list[dict[str, Any]]:
        """The configured MCP servers the agent can take, shaped for its version (v2 names
        every server's `type`); the others are left out and reported."""
        servers = []
        for server in self.options.mcp_servers:
            kind = server.get("type", "stdio")
            if not self.info.supports(f"mcp_{kind}"):
                name = server.get("name", "?")
                self._problem(f"MCP server {name!r} left out: the agent does not take {kind}")
                continue
            if self.info.protocol_version >= 2:
                server = {**server, "type": kind}
            servers.append(server)
        return servers

    async def list_sessions(self, *, pages: int = 20) -> list[m.SessionInfo]:
        """The agent's sessions in the workspace (following `nextCursor`, up to `pages`)."""
        if not self.info.supports("list"):
            return []
        sessions: list[m.SessionInfo] = []
        cursor: str | msgspec.UnsetType = msgspec.UNSET
        for _page in range(pages):
            params = m.ListSessionsRequest(cwd=str(self.options.cwd), cursor=cursor)
            response = await self.request("session/list", params, m.ListSessionsResponse)
            sessions += response.sessions
            if not response.next_cursor:
                break
            cursor = response.next_cursor
        return sessions

    def _register(self, session_id: str, state: SessionState | None = None) -> Session:
        session = Session(self, session_id)
        if state is not None:
            state.session_id = session_id
            session.state = state
        if self._services_factory is not None and self.info.protocol_version < 2:
            session.services = self._services_factory(session)
        self.sessions[session_id] = session
        for update in self._orphans.pop(session_id, []):
            session.apply(update)
        if self._warnings:
            # A state already showing a warning (a fork's copy, a record of an earlier run)
            # keeps the one it has.
            shown = {i.title for i in session.state.timeline if isinstance(i, Notice)}
            for warning in self._warnings:
                if warning not in shown:
                    session.notice("warning", warning)
        return session

    # -- the wire -----------------------------------------------------------------------------

    async def request(self, method: str, params: Any, result_type: Any = msgspec.Raw) -> Any:
        if self.connection is None:
            raise ConnectionClosed("the agent is not running")
        return await self.connection.request(method, params, result_type)

    async def notify(self, method: str, params: Any) -> None:
        if self.connection is None:
            raise ConnectionClosed("the agent is not running")
        await self.connection.notify(method, params)

    async def handle_request(self, method: str, params: msgspec.Raw) -> Any:
        if method == "session/request_permission":
            request = _decode(params, m.PermissionRequest)
            return await self._session(request.session_id).request_permission(request)
        if method == "elicitation/create":
            return await self._elicit(_decode(params, m.ElicitationRequest))
        if method.startswith(("fs/", "terminal/")) and self.info.protocol_version < 2:
            session = self._session(_decode(params, m.SessionIdParams).session_id)
            if session.services is not None:
                return await session.services.handle_request(method, params)
        raise method_not_found(method)

    async def _elicit(self, request: m.ElicitationRequest) -> m.ElicitationResponse:
        """Ask the user (through `decide_elicitation`); a question in a session is bound to
        its turn like a permission request."""
        if self.decide_elicitation is None or request.mode not in ELICITATION_MODES:
            raise RpcError(INVALID_PARAMS, f"acp-tui does not offer elicitation {request.mode!r}")
        if request.mode == "url" and not (request.url and request.elicitation_id):
            raise RpcError(INVALID_PARAMS, "a url elicitation needs a url and an elicitationId")
        session = self._session(request.session_id) if request.session_id is not None else None
        if session is not None and session.turn_cancelled:
            return m.ElicitationResponse("cancel")
        future: asyncio.Future[m.ElicitationResponse] = asyncio.get_running_loop().create_future()
        pending = PendingElicitation(request, future, parse_form(request.requested_schema))
        waiting = session.pending_elicitations if session is not None else self.pending_elicitations
        waiting.append(pending)
        try:
            await self.decide_elicitation(pending)
            response = await future
        except asyncio.CancelledError:
            self._tell(session, "warning", f"The agent withdrew its question: {pending.about}")
            raise
        finally:
            with contextlib.suppress(ValueError):
                waiting.remove(pending)
        if response.action == "accept" and request.mode == "url" and request.elicitation_id:
            self._opened_pages[request.elicitation_id] = (session, pending)
        self._tell(session, "answer", *describe_answer(pending, response))
        return response

    def _elicitation_complete(self, params: msgspec.Raw) -> None:
        try:
            elicitation_id = _decode(params, m.CompleteElicitation).elicitation_id
        except RpcError as error:
            self._problem(f"elicitation/complete: {error.message}")
            return
        # Unknown and already completed ids are ignored, as the spec asks.
        if elicitation_id in self._opened_pages:
            session, pending = self._opened_pages.pop(elicitation_id)
            self._tell(session, "info", f"Done: {pending.about}")

    def _tell(
        self, session: Session | None, severity: str, title: str, detail: str | None = None
    ) -> None:
        """A notice in `session`, or (outside any session) in the inspector."""
        if session is not None:
            session.notice(severity, title, detail)
        else:
            self._note(title)

    @property
    def typed_notifications(self) -> TypedNotifications:
        return {"session/update": (SessionNotification, self._session_updates)}

    def _session_updates(self, notifications: list[SessionNotification]) -> None:
        sessions = self.sessions
        for notification in join_chunks(notifications):
            try:
                session = sessions.get(notification.session_id)
                if session is not None:
                    session.apply(notification.update)
                else:
                    self._route_update(notification.session_id, notification.update)
            except Exception as exc:  # a bad update must never lose the ones after it
                self._problem(f"could not handle a notification: {exc!r}")

    def handle_notification(self, method: str, params: msgspec.Raw) -> None:
        """Notifications the typed path could not read: updates of unknown kinds or with
        unreadable fields (read leniently), and notifications we have no use for."""
        if method == "elicitation/complete":
            self._elicitation_complete(params)
            return
        if method != "session/update":
            return  # Unknown notifications (e.g. `_` extensions) are ignored, as the spec says.
        try:
            session_id, update = decode_session_notification(params)
        except msgspec.DecodeError as error:
            self._problem(f"session/update without a usable sessionId: {error}")
            return
        self._route_update(session_id, update)

    def _route_update(self, session_id: str, update: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.apply(update)
            return
        if session_id not in self._orphans and len(self._orphans) >= _ORPHAN_SESSIONS:
            self._problem(f"dropped an update for unknown session {session_id!r}")
            return
        orphans = self._orphans.setdefault(session_id, [])
        if len(orphans) < _ORPHAN_LIMIT:
            orphans.append(update)
        elif len(orphans) == _ORPHAN_LIMIT:
            self._problem(f"updates for unknown session {session_id!r} are being dropped")
            orphans.append(UnknownUpdate("", None, "dropped"))

    def _session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError(INVALID_PARAMS, f"unknown session: {session_id}")
        return session

    def _note(self, message: str) -> None:
        """Something the user may want to know about the wire, that is not a problem."""
        if self._on_traffic is not None:
            self._on_traffic("note", message.encode())

    def _problem(self, message: str) -> None:
        if self._on_problem is not None:
            self._on_problem(message)

    @property
    def warnings(self) -> list[str]:
        """What went wrong that the user should know (the transcript lost, a provider not
        set), as every session shows it."""
        return list(self._warnings)

    def _warn(self, message: str) -> None:
        """A problem that is the user's business, not only the inspector's (the transcript
        lost, a provider not set): every session shows it, including the ones opened after
        it happened."""
        self._problem(message)
        if message in self._warnings:  # the same again, after a restart
            return
        self._warnings.append(message)
        for session in self.sessions.values():
            session.notice("warning", message)


def _decode(params: msgspec.Raw, kind: type[Any]) -> Any:
    try:
        return msgspec.json.decode(params or b"null", type=kind)
    except msgspec.DecodeError as error:
        raise RpcError(INVALID_PARAMS, f"Invalid params: {error}") from error
