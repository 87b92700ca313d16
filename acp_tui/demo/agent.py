"""The demo agent's ACP methods: `initialize`, the session lifecycle, configuration, prompts.

`DemoAgent` is the `Handler` behind a `Connection`: each client request arrives in
`handle_request` (in its own task) and each notification in `handle_notification` (in order,
never blocking). After `initialize` it speaks the version the client asked for, if it is 1 or 2,
and otherwise its latest, as the negotiation rules say.

How a prompt turn ends is the biggest difference between the versions:

- v1: `session/prompt` stays pending for the whole turn; its result carries the `stopReason`.
- v2: `session/prompt` is answered at once with `{}` (an acceptance receipt); the turn then
  reports `user_message`, `state_update: running`, its output, and finally
  `state_update: idle` with the stop reason.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import dataclasses
import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from acp_tui.demo import scenarios
from acp_tui.demo.questions import elicitation_modes
from acp_tui.demo.scenarios import COMMANDS
from acp_tui.demo.session import LiveSession, Peer
from acp_tui.demo.store import SessionRecord, SessionStore, now_iso
from acp_tui.demo.turn import Cancelled, ScenarioError, Turn, new_id
from acp_tui.demo.wire import TERMINAL_META_KEYS, available_commands
from acp_tui.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    ConnectionClosed,
    RpcError,
)

if TYPE_CHECKING:
    from acp_tui.transport.connection import Connection

AGENT_NAME = "acp-tui-demo"
AGENT_TITLE = "acp-tui demo agent"
AGENT_VERSION = "0.1.0"
SUPPORTED_VERSIONS = (1, 2)
PAGE_SIZE = 50
SHUTDOWN_GRACE = 1.5
"""Seconds the turns get to end when the client has gone: clients allow 2 s after closing our
stdin before they terminate us (the TCK, and acp-tui's launcher)."""


def _decode(params: msgspec.Raw) -> dict[str, Any]:
    if not params:
        return {}
    try:
        data = msgspec.json.decode(params)
    except msgspec.DecodeError as exc:
        raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from exc
    if not isinstance(data, dict):
        raise RpcError(INVALID_PARAMS, "Invalid params: expected an object")
    return data


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise RpcError(INVALID_PARAMS, f"Invalid params: `{key}` is missing or of the wrong type")
    return value


def _absolute(path: Any, key: str) -> str:
    if not isinstance(path, str) or not os.path.isabs(path):
        raise RpcError(INVALID_PARAMS, f"Invalid params: `{key}` must be an absolute path")
    return path


def _roots(params: dict[str, Any]) -> tuple[str, list[str]]:
    """A session's `cwd` and `additionalDirectories`: absolute paths, all of them."""
    extra = params.get("additionalDirectories") or []
    if not isinstance(extra, list):
        raise RpcError(INVALID_PARAMS, "Invalid params: `additionalDirectories` must be a list")
    return _absolute(params.get("cwd"), "cwd"), [
        _absolute(directory, "additionalDirectories") for directory in extra
    ]


def _unknown_session(session_id: str) -> RpcError:
    return RpcError(RESOURCE_NOT_FOUND, f"Unknown session: {session_id}", {"sessionId": session_id})


def _fork_title(title: str | None) -> str | None:
    return title if title is None or title.endswith(" (fork)") else f"{title} (fork)"


PROVIDER_ID = "main"
PROVIDER_PROTOCOLS = ["anthropic", "openai"]


class DemoAgent:
    def __init__(
        self, *, speed: float = 1.0, store: SessionStore | None = None, max_version: int = 2
    ) -> None:
        self.speed = speed
        self.store = store or SessionStore(None)
        self.versions = tuple(v for v in SUPPORTED_VERSIONS if v <= max_version)
        self.connection: Connection | None = None
        self.peer: Peer | None = None
        self.sessions: dict[str, LiveSession] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._methods: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            "initialize": self.initialize,
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/resume": self.resume_session,
            "session/list": self.list_sessions,
            "session/close": self.close_session,
            "session/delete": self.delete_session,
            "session/fork": self.fork_session,
            "session/set_mode": self.set_mode,
            "session/set_config_option": self.set_config_option,
            "session/prompt": self.prompt,
            "providers/list": self.list_providers,
            "providers/set": self.set_provider,
            "providers/disable": self.disable_provider,
        }

    # -- Handler ------------------------------------------------------------------------------

    async def handle_request(self, method: str, params: msgspec.Raw) -> Any:
        handler = self._methods.get(method)
        if handler is None or (self.peer is not None and not self._offers(method)):
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        if self.peer is None and method != "initialize":
            raise RpcError(INVALID_REQUEST, "Call `initialize` first")
        return await handler(_decode(params))

    def handle_notification(self, method: str, params: msgspec.Raw) -> None:
        if method == "session/cancel":
            with contextlib.suppress(RpcError):
                session = self.sessions.get(_decode(params).get("sessionId"))
                if session is not None and session.turn is not None:
                    session.turn.cancel()
        # Anything else (`$/cancel_request`, `_` extensions) is ignored, as the spec allows.

    def _offers(self, method: str) -> bool:
        """Methods that exist in only one version: `session/load` and `session/set_mode` were
        removed in v2."""
        assert self.peer is not None
        return not (self.peer.v2 and method in ("session/load", "session/set_mode"))

    # -- initialize ---------------------------------------------------------------------------

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.peer is not None:
            # Sessions keep the peer they were made with: a second negotiation cannot reach them.
            raise RpcError(INVALID_REQUEST, "Already initialized: `initialize` comes once")
        assert self.connection is not None
        requested = params.get("protocolVersion")
        if not isinstance(requested, int) or isinstance(requested, bool):
            raise RpcError(INVALID_PARAMS, "Invalid params: `protocolVersion` must be an integer")
        # Same version if we support it, else our latest (docs/protocol/*/initialization.mdx).
        version = requested if requested in self.versions else max(self.versions)
        peer = Peer(self.connection, version)
        if version >= 2:
            info = params.get("info") or {}
        else:
            info = params.get("clientInfo") or {}
            caps = params.get("clientCapabilities") or {}
            fs = caps.get("fs") or {}
            peer.fs_read = fs.get("readTextFile") is True
            peer.fs_write = fs.get("writeTextFile") is True
            peer.terminal = caps.get("terminal") is True
            meta = caps.get("_meta")
            if isinstance(meta, dict):
                offered = [key for key in TERMINAL_META_KEYS if meta.get(key) is True]
                peer.terminal_meta = offered[0] if offered else None
            options = ((caps.get("session") or {}).get("configOptions")) or {}
            peer.boolean_options = options.get("boolean") is not None
        capabilities = params.get("capabilities" if version >= 2 else "clientCapabilities")
        peer.elicitation = elicitation_modes(capabilities)
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            peer.client_name = info.get("title") or info["name"]
        self.peer = peer
        implementation = {"name": AGENT_NAME, "title": AGENT_TITLE, "version": AGENT_VERSION}
        if version >= 2:
            return {
                "protocolVersion": 2,
                "info": implementation,
                "capabilities": {
                    "providers": {},
                    "session": {
                        "prompt": {"image": {}, "audio": {}, "embeddedContext": {}},
                        "delete": {},
                        "fork": {},
                        "additionalDirectories": {},
                    },
                },
            }
        return {
            "protocolVersion": 1,
            "agentCapabilities": {
                "providers": {},
                "loadSession": True,
                "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
                "sessionCapabilities": {
                    "list": {},
                    "resume": {},
                    "close": {},
                    "delete": {},
                    "fork": {},
                    "additionalDirectories": {},
                },
            },
            "authMethods": [],
            "agentInfo": implementation,
        }

    # -- providers (where the pretend model requests would go) --------------------------------

    async def list_providers(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.peer is not None
        provider: dict[str, Any] = {
            "providerId": PROVIDER_ID,
            "supported": PROVIDER_PROTOCOLS,
            "required": False,
        }
        route = self.peer.provider
        if route is not None:
            provider["current"] = {"apiType": route["apiType"], "baseUrl": route["baseUrl"]}
        return {"providers": [provider]}

    async def set_provider(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.peer is not None
        provider_id = _require(params, "providerId", str)
        api_type = _require(params, "apiType", str)
        base_url = _require(params, "baseUrl", str)
        if provider_id != PROVIDER_ID:
            message = f'Unknown provider "{provider_id}": the demo has only "{PROVIDER_ID}"'
            raise RpcError(INVALID_PARAMS, message)
        if api_type not in PROVIDER_PROTOCOLS:
            raise RpcError(INVALID_PARAMS, f'Unsupported apiType "{api_type}"')
        headers = params.get("headers") or {}
        self.peer.provider = {"apiType": api_type, "baseUrl": base_url, "headers": sorted(headers)}
        return {}

    async def disable_provider(self, params: dict[str, Any]) -> dict[str, Any]:
        """An unknown provider is disabled already: success, as for a known one."""
        assert self.peer is not None
        if _require(params, "providerId", str) == PROVIDER_ID:
            self.peer.provider = None
        return {}

    # -- sessions -----------------------------------------------------------------------------

    async def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd, extra = _roots(params)
        assert self.peer is not None
        session = LiveSession(SessionRecord.new(cwd, extra), self.peer)
        self.sessions[session.id] = session
        self._after_response(self._welcome(session))
        return {"sessionId": session.id} | session.setup_result()

    async def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """v1 `session/load`: replay the whole conversation, then answer."""
        session = self._reopen(params)
        await session.replay()
        self._after_response(self._welcome(session))
        return session.setup_result()

    async def resume_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """`session/resume`: no replay in v1; in v2, a replay if `replayFrom` is `start`."""
        assert self.peer is not None
        replay_from = params.get("replayFrom") if self.peer.v2 else None
        if replay_from is not None and (
            not isinstance(replay_from, dict) or replay_from.get("type") != "start"
        ):
            raise RpcError(INVALID_PARAMS, "Unsupported `replayFrom`: only `start` is supported")
        session = self._reopen(params)
        if replay_from is not None:
            await session.replay()
        self._after_response(self._welcome(session))
        return session.setup_result()

    async def fork_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """`session/fork`: a new session with a copy of another's history (open or saved),
        which goes on apart from it."""
        assert self.peer is not None
        source_id = _require(params, "sessionId", str)
        live = self.sessions.get(source_id)
        source = live.record if live is not None else self.store.load(source_id)
        if source is None:
            raise _unknown_session(source_id)
        cwd, extra = _roots(params)
        fork = dataclasses.replace(
            source,
            session_id=SessionRecord.new(cwd, extra).session_id,
            # As acp-tui names it: in a list of sessions the fork is not taken for its source.
            title=_fork_title(source.title),
            cwd=cwd,
            additional_directories=extra,
            updated_at=now_iso(),
            history=copy.deepcopy(source.history),
        )
        session = LiveSession(fork, self.peer)
        self.sessions[session.id] = session
        self._save(session)
        self._after_response(self._welcome(session))
        return {"sessionId": session.id} | session.setup_result()

    def _reopen(self, params: dict[str, Any]) -> LiveSession:
        assert self.peer is not None
        session_id = _require(params, "sessionId", str)
        cwd, extra = _roots(params)
        session = self.sessions.get(session_id)
        if session is None:
            record = self.store.load(session_id)
            if record is None:
                raise _unknown_session(session_id)
            session = LiveSession(record, self.peer)
            self.sessions[session_id] = session
        session.record.cwd = cwd
        session.record.additional_directories = extra
        return session

    async def _welcome(self, session: LiveSession) -> None:
        """Sent after the session setup response, so the client knows the session id."""
        assert self.peer is not None
        await session.notify(
            {"sessionUpdate": "available_commands_update"}
            | {"availableCommands": available_commands(COMMANDS, self.peer.version)}
        )

    async def list_sessions(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = params.get("cwd")
        if cwd is not None:
            cwd = _absolute(cwd, "cwd")
        records = {record.session_id: record for record in self.store.all()}
        records |= {session.id: session.record for session in self.sessions.values()}
        matching = [
            record
            for record in records.values()
            if record.history and (cwd is None or record.cwd == cwd)
        ]
        matching.sort(key=lambda record: record.updated_at, reverse=True)
        offset = self._decode_cursor(params.get("cursor"))
        page = matching[offset : offset + PAGE_SIZE]
        sessions = []
        for record in page:
            info: dict[str, Any] = {"sessionId": record.session_id, "cwd": record.cwd}
            if record.additional_directories:
                info["additionalDirectories"] = record.additional_directories
            if record.title:
                info["title"] = record.title
            info["updatedAt"] = record.updated_at
            sessions.append(info)
        result: dict[str, Any] = {"sessions": sessions}
        if offset + PAGE_SIZE < len(matching):
            result["nextCursor"] = base64.urlsafe_b64encode(
                f"{offset + PAGE_SIZE}".encode()
            ).decode()
        return result

    @staticmethod
    def _decode_cursor(cursor: Any) -> int:
        if cursor is None:
            return 0
        try:
            return max(0, int(base64.urlsafe_b64decode(str(cursor).encode()).decode()))
        except (ValueError, UnicodeDecodeError) as exc:
            raise RpcError(INVALID_PARAMS, "Invalid params: unknown `cursor`") from exc

    async def close_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """Cancel ongoing work as if by `session/cancel`, then forget the live session."""
        session_id = _require(params, "sessionId", str)
        session = self.sessions.pop(session_id, None)
        if session is None:
            if self.store.load(session_id) is None:
                raise _unknown_session(session_id)
            return {}
        await session.stop_turn()
        self._save(session)
        return {}

    async def delete_session(self, params: dict[str, Any]) -> dict[str, Any]:
        """Deleting an unknown or already deleted session succeeds silently."""
        session_id = _require(params, "sessionId", str)
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session.stop_turn()
        self.store.delete(session_id)
        return {}

    def _session(self, params: dict[str, Any]) -> LiveSession:
        session_id = _require(params, "sessionId", str)
        session = self.sessions.get(session_id)
        if session is None:
            raise _unknown_session(session_id)
        return session

    def _save(self, session: LiveSession) -> None:
        if session.record.history:  # sessions nobody talked to are not worth keeping
            self.store.save(session.record)

    # -- configuration ------------------------------------------------------------------------

    async def set_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        """v1 only. The `mode` config option mirrors the mode, so it is announced too."""
        session = self._session(params)
        try:
            session.set_option("mode", _require(params, "modeId", str))
        except ValueError as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from exc
        self._save(session)
        self._after_response(session.announce_config(mode_changed=False))
        return {}

    async def set_config_option(self, params: dict[str, Any]) -> dict[str, Any]:
        """v1 value: a value id, or `type: "boolean"` + a boolean. v2: always tagged,
        `{"type": "id", "value": …}` or `{"type": "boolean", "value": …}`."""
        assert self.peer is not None
        session = self._session(params)
        config_id = _require(params, "configId", str)
        kind = params.get("type")
        value = params.get("value")
        if self.peer.v2 and kind not in ("id", "boolean"):
            raise RpcError(INVALID_PARAMS, f"Invalid params: unsupported value type {kind!r}")
        if (kind == "boolean") != isinstance(value, bool) or not isinstance(value, str | bool):
            raise RpcError(INVALID_PARAMS, "Invalid params: `value` does not match its type")
        try:
            mode_changed = session.set_option(config_id, value)
        except ValueError as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}") from exc
        self._save(session)
        if mode_changed:
            self._after_response(session.announce_mode())
        return {"configOptions": session.config_options()}

    # -- prompts ------------------------------------------------------------------------------

    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        assert self.peer is not None
        session = self._session(params)
        blocks = _require(params, "prompt", list)
        if not all(isinstance(block, dict) for block in blocks):
            raise RpcError(INVALID_PARAMS, "Invalid params: `prompt` must hold content blocks")
        name, arg, text = scenarios.parse(blocks)
        if self.peer.v2 and name == "error":
            raise scenarios.error_before_accepting()
        turn = Turn(session, speed=self.speed)
        turn.prompt = blocks
        session.start_turn(turn)
        if self.peer.v2:
            self._after_response(self._play(turn, name, arg, text))
            return {}
        stop_reason = await self._play(turn, name, arg, text)
        result: dict[str, Any] = {"stopReason": stop_reason, "usage": turn.usage_of_turn()}
        if turn.response_meta:
            result["_meta"] = turn.response_meta
        return result

    async def _play(self, turn: Turn, name: str | None, arg: str, text: str) -> str:
        """Play `turn` once the turns before it have ended."""
        session = turn.session
        record = session.record
        async with session.turn_lock:
            try:
                user_message_id = new_id("msg")
                record.history.append(
                    {"type": "user", "messageId": user_message_id, "content": turn.prompt}
                )
                turn.count_tokens(text, written=False)
                stop_reason = await self._play_scenario(turn, name, arg, text, user_message_id)
                await turn.state("idle", stop_reason)
                return stop_reason
            except ConnectionClosed:
                return "cancelled"
            finally:
                record.updated_at = now_iso()
                if session.turn is turn:  # and not a newer one, which `session/cancel` must reach
                    session.turn = None
                self._save(session)

    async def _play_scenario(
        self, turn: Turn, name: str | None, arg: str, text: str, user_message_id: str
    ) -> str:
        try:
            if turn.v2:
                await turn.update(
                    {"sessionUpdate": "user_message", "messageId": user_message_id}
                    | {"content": turn.prompt}
                )
                await turn.state("running")
            if turn.record.title is None and name != "title":
                await turn.set_title(scenarios.auto_title(name, text))
            stop_reason = await scenarios.play(turn, name, arg) or "end_turn"
            await turn.usage()
            return stop_reason
        except Cancelled:
            await turn.wind_down()
            return "cancelled"
        except ConnectionClosed:
            raise
        except Exception as exc:
            # The turn still ends properly, nothing left open: v1 fails the prompt; an accepted
            # v2 prompt can only end with a stop reason, so the error is said instead.
            if isinstance(exc, ScenarioError):
                error = RpcError(exc.code, exc.message, exc.data)
            else:
                traceback.print_exc(file=sys.stderr)
                error = RpcError(INTERNAL_ERROR, f"Internal error: {exc}")
            if turn.v2:
                with contextlib.suppress(Cancelled):
                    await turn.say(f"\n\n**Error:** `{error.message}`")
            await turn.wind_down()
            if turn.v2:
                return "end_turn"
            raise error from exc

    # -- plumbing -----------------------------------------------------------------------------

    def _after_response(self, coroutine: Awaitable[Any]) -> None:
        """Run `coroutine` once the current request has been answered. The connection writes
        the response as soon as the handler returns, before any new task gets to run."""

        async def later() -> None:
            await asyncio.sleep(0)
            try:
                await coroutine
            except ConnectionClosed:
                pass
            except Exception:
                traceback.print_exc(file=sys.stderr)

        task = asyncio.get_running_loop().create_task(later())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def shutdown(self) -> None:
        """The client went away: stop every turn (killing commands the agent runs) and save.
        All sessions at once, so that together they take no longer than `SHUTDOWN_GRACE`."""
        sessions = list(self.sessions.values())
        await asyncio.gather(*(session.stop_turn(timeout=SHUTDOWN_GRACE) for session in sessions))
        for session in sessions:
            self._save(session)
        for task in list(self._tasks):
            task.cancel()
