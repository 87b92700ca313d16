"""The cases `acp-tui check` runs, in order, and the rules they hold an agent to.

Each case gives one `Finding`: passed, failed (with the rule it broke, its level, what was
wrong and the raw line), not applicable (the agent did not advertise the feature), or skipped
(an earlier case left nothing to run it on, e.g. no session). Cases that need a model (a real
prompt turn) say so; their prompt is the author's `--prompt`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from acp_tui import __version__
from acp_tui.check.probe import Line, Probe
from acp_tui.protocol import schema_check
from acp_tui.protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError

Status = Literal["passed", "failed", "n/a", "skipped"]
Level = Literal["MUST", "SHOULD"]
STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}
LATEST = 2
"""The newest ACP version acp-tui knows; an agent may answer no newer one."""
CALL_TIMEOUT = 30.0
"""Seconds an agent gets to answer a request (`--call-timeout`)."""
TURN_TIMEOUT = 120.0
"""Seconds a prompt turn may take (`--turn-timeout`)."""
CANCEL_BOUND = 10.0
"""Seconds an agent gets to end a cancelled turn."""
EXIT_BOUND = 5.0
"""Seconds an agent gets to exit once its stdin is closed."""
_AFTER_TURN = 1.0
"""Seconds of listening after a turn ended, for updates that still belong to it."""
_TURN_CONTENT = {"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update"}


@dataclass(frozen=True, slots=True)
class Rule:
    level: Level
    page: str
    text: str

    def cite(self) -> str:
        return f"{self.page}: {self.text}"


R_VERSION = Rule(
    "MUST",
    "protocol/initialization#protocol-version",
    "if the Agent supports the requested version, it MUST respond with the same version; "
    "otherwise with the latest version it supports",
)
R_INIT_SHAPE = Rule(
    "MUST",
    "protocol/initialization",
    "the Agent MUST respond with the chosen protocol version and the capabilities it supports "
    "(in the shape of that version's schema)",
)
R_SCHEMA = Rule("MUST", "protocol/schema", "every message MUST match the schema of its version")
R_BASELINE = Rule(
    "MUST",
    "protocol/initialization#baseline-agent-functionality",
    "all Agents MUST support session/new, session/prompt, session/cancel and session/update",
)
R_ADVERTISED = Rule(
    "MUST",
    "protocol/initialization#capabilities",
    "a method of a capability the Agent advertised MUST work as specified",
)
R_UNKNOWN = Rule(
    "MUST",
    "JSON-RPC 2.0 §5.1; protocol/extensibility",
    "a method the Agent does not know MUST be answered with error -32601 (Method not found)",
)
R_PARAMS = Rule(
    "SHOULD",
    "JSON-RPC 2.0 §5.1",
    "invalid method parameters SHOULD be answered with error -32602 (Invalid params)",
)
R_STOP = Rule(
    "MUST",
    "protocol/prompt-turn#stop-reasons",
    "a prompt turn MUST end with one of the stop reasons of the schema",
)
R_AFTER = Rule(
    "MUST",
    "protocol/prompt-turn#cancellation",
    "updates of a turn MUST be sent before the Agent responds to its session/prompt",
)
R_CANCEL = Rule(
    "MUST",
    "protocol/prompt-turn#cancellation",
    "after session/cancel the Agent MUST end the turn with the `cancelled` stop reason",
)
R_PERMISSION = Rule(
    "SHOULD",
    "protocol/tool-calls#requesting-permission",
    "a permission request SHOULD be about a tool call the Agent has already reported",
)
R_CLIENT_METHODS = Rule(
    "MUST",
    "protocol/initialization#client-capabilities",
    "capabilities the Client did not advertise MUST be treated as unsupported: no fs/* or "
    "terminal/* requests",
)
R_STDOUT = Rule(
    "MUST",
    "protocol/transports#stdio",
    "the Agent MUST NOT write anything to its stdout that is not a valid ACP message",
)
R_EXIT = Rule(
    "SHOULD",
    "protocol/transports#stdio",
    "the Client ends the Agent by closing its stdin: the Agent SHOULD exit promptly",
)


@dataclass(slots=True)
class Finding:
    case: str
    status: Status
    rule: Rule | None = None
    detail: str = ""
    line: str | None = None
    needs_model: bool = False

    @property
    def breaks_must(self) -> bool:
        return self.status == "failed" and self.rule is not None and self.rule.level == "MUST"


@dataclass
class Context:
    argv: list[str]
    workspace: Path
    version: int
    prompt: str
    env: dict[str, str] = field(default_factory=dict)
    auth: str | None = None
    """An auth method to `authenticate` with before `session/new` (`--auth`)."""
    call_timeout: float = CALL_TIMEOUT
    turn_timeout: float = TURN_TIMEOUT
    findings: list[Finding] = field(default_factory=list)
    agent: str = "the agent"
    capabilities: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)
    """session/new's result."""
    turn_text: str = ""
    """The agent's message text of the prompt turn, for the replay check."""

    def add(self, case: str, status: Status, **fields: Any) -> Finding:
        finding = Finding(case, status, **fields)
        self.findings.append(finding)
        return finding

    def fail(
        self, case: str, rule: Rule, detail: str, line: Line | None = None, **more: Any
    ) -> None:
        self.add(case, "failed", rule=rule, detail=detail, line=line.text if line else None, **more)

    @property
    def session_id(self) -> str | None:
        value = self.session.get("sessionId")
        return value if isinstance(value, str) else None

    def offers(self, method: str) -> bool:
        """Whether the agent offers the optional session `method` ("list", "resume", …): in
        v1 under `sessionCapabilities`; in v2 list, resume and close are the baseline of any
        agent with `session`."""
        if self.version >= 2:
            baseline = method in ("list", "resume", "close") and self.advertised("session")
            return baseline or self.advertised("session", method)
        return self.advertised("sessionCapabilities", method)

    def advertised(self, *path: str) -> bool:
        """Whether the agent's capabilities hold a non-null, non-false marker at `path`."""
        node: Any = self.capabilities
        for key in path:
            if not isinstance(node, dict):
                return False
            node = node.get(key)
        return node is not None and node is not False


def why(error: BaseException, timeout: float) -> str:
    """A failed request in a few words."""
    if isinstance(error, RpcError):
        data = error.data
        details = data.get("details") if isinstance(data, dict) else data
        said = f": {details}" if isinstance(details, str) and details else ""
        return f"{error.message} ({error.code}){said}"
    if isinstance(error, TimeoutError):
        return f"no answer within {timeout:g} s"
    return repr(error)


# -- initialize --------------------------------------------------------------------------------


def initialize_params(version: int, shape: int | None = None) -> dict[str, Any]:
    """`initialize` offering `version`, in the shape of `shape` (default: that version)."""
    info = {"name": "acp-tui-check", "title": "acp-tui check", "version": __version__}
    if (shape or version) >= 2:
        return {"protocolVersion": version, "info": info, "capabilities": {}}
    capabilities = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
    return {"protocolVersion": version, "clientCapabilities": capabilities, "clientInfo": info}


def answered_version(result: Any) -> int | None:
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    return version if isinstance(version, int) and not isinstance(version, bool) else None


async def check_offer(ctx: Context, offered: int) -> int | None:
    """Offer `offered` to a fresh process; the version it answered (None: no usable answer)."""
    case = f"initialize: offer {offered}"
    probe = Probe(ctx.argv, ctx.workspace, None, ctx.env)
    try:
        await probe.start()
        # An offer of a version outside 1..2 goes in the latest shape we know.
        shape = offered if offered in (1, 2) else LATEST
        try:
            params = initialize_params(offered, shape)
            result, line = await probe.request("initialize", params, ctx.call_timeout)
        except TimeoutError:
            ctx.fail(case, R_INIT_SHAPE, f"no answer within {ctx.call_timeout:g} s")
            return None
        except RpcError as error:
            if offered != 1:
                # Refusing a shape it does not speak is a way to negotiate: v1 comes next.
                ctx.add(case, "passed", detail=f"refused ({error.code}: {error.message})")
                return None
            ctx.fail(case, R_BASELINE, f"initialize failed: {error.code} {error.message}")
            return None
    finally:
        await probe.close()
    version = answered_version(result)
    if version is None:
        ctx.fail(case, R_INIT_SHAPE, "the answer has no integer protocolVersion", line)
        return None
    expected_same = offered <= LATEST
    if version > max(offered, 1) or (not expected_same and version == offered):
        ctx.fail(case, R_VERSION, f"offered {offered}, answered {version}", line)
        return version
    if version not in (1, 2):
        ctx.fail(case, R_VERSION, f"answered {version}, which no ACP release defines", line)
        return version
    try:
        msg = line.msg if line is not None else {"jsonrpc": "2.0", "id": 0, "result": result}
        schema_check.validate_message(
            msg, version=version, sender="agent", request_method="initialize"
        )
    except schema_check.SchemaViolation as violation:
        detail = f"answered version {version} in another shape: {violation.summary}"
        ctx.fail(case, R_INIT_SHAPE, detail, line)
        return version
    note = "" if version == offered else f" (answered {version})"
    ctx.add(case, "passed", detail=f"protocolVersion {version}{note}")
    return version


# -- one session --------------------------------------------------------------------------------


async def check_session(ctx: Context) -> None:
    """Everything that runs on one connection, in order; then stdin is closed."""
    probe = Probe(ctx.argv, ctx.workspace, ctx.version, ctx.env)
    try:
        await probe.start()
        try:
            result, _ = await probe.request(
                "initialize", initialize_params(ctx.version), ctx.call_timeout
            )
        except (RpcError, TimeoutError) as error:
            detail = f"initialize failed: {why(error, ctx.call_timeout)}"
            ctx.add("session: initialize", "skipped", detail=detail)
            return
        if answered_version(result) != ctx.version:
            detail = f"the agent does not speak ACP v{ctx.version}"
            ctx.add("session cases", "skipped", detail=detail)
            return
        key = "capabilities" if ctx.version >= 2 else "agentCapabilities"
        ctx.capabilities = result.get(key) or {}
        info = result.get("info" if ctx.version >= 2 else "agentInfo") or {}
        name = info.get("title") or info.get("name") or "the agent"
        ctx.agent = f"{name} {info.get('version', '')}".strip()
        check_auth_methods(ctx, result)
        if ctx.auth is not None:
            method = "authenticate" if ctx.version < 2 else "auth/login"
            try:
                await probe.request(method, {"methodId": ctx.auth}, ctx.call_timeout)
            except (RpcError, TimeoutError) as error:
                detail = f"sign-in with {ctx.auth} failed: {why(error, ctx.call_timeout)}"
                ctx.add("authenticate", "skipped", detail=detail)
        for step in _SESSION_STEPS:
            await step(ctx, probe)
        check_schema(ctx, probe)
        check_stdout(ctx, probe)
        check_permissions(ctx, probe)
        check_client_methods(ctx, probe)
        await check_stdin_close(ctx, probe)
    finally:
        await probe.close()


def check_auth_methods(ctx: Context, result: dict[str, Any]) -> None:
    methods = result.get("authMethods")
    if not methods:
        ctx.add("authMethods", "n/a", detail="none advertised")
        return
    names = ", ".join(str(m.get("id")) for m in methods if isinstance(m, dict))
    ctx.add("authMethods", "passed", detail=f"{len(methods)}: {names}")


async def new_session(ctx: Context, probe: Probe) -> None:
    params = {"cwd": str(ctx.workspace), "mcpServers": []}
    try:
        result, _ = await probe.request("session/new", params, ctx.call_timeout)
    except RpcError as error:
        hint = " (it wants sign-in: authenticate first)" if error.code == -32000 else ""
        ctx.fail("session/new", R_BASELINE, f"{error.code} {error.message}{hint}")
        return
    except TimeoutError:
        ctx.fail("session/new", R_BASELINE, f"no answer within {ctx.call_timeout:g} s")
        return
    ctx.session = result if isinstance(result, dict) else {}
    if ctx.session_id is None:
        ctx.fail("session/new", R_BASELINE, "the answer has no sessionId")
        return
    ctx.add("session/new", "passed", detail=f"session {ctx.session_id}")


async def modes(ctx: Context, probe: Probe) -> None:
    case = "session/set_mode"
    state = ctx.session.get("modes")
    if ctx.version >= 2 or not isinstance(state, dict) or not state.get("availableModes"):
        ctx.add(case, "n/a", detail="no modes offered")
        return
    if ctx.session_id is None:
        ctx.add(case, "skipped", detail="no session")
        return
    current = state.get("currentModeId")
    ids = [m.get("modeId", m.get("id")) for m in state["availableModes"] if isinstance(m, dict)]
    target = next((i for i in ids if i != current), current)
    params = {"sessionId": ctx.session_id, "modeId": target}
    await _round_trip(ctx, probe, case, "session/set_mode", params, f"mode {target}")


async def config_options(ctx: Context, probe: Probe) -> None:
    case = "session/set_config_option"
    options = ctx.session.get("configOptions")
    option = next((o for o in options or () if isinstance(o, dict) and o.get("id")), None)
    if option is None:
        ctx.add(case, "n/a", detail="no config options offered")
        return
    if ctx.session_id is None:
        ctx.add(case, "skipped", detail="no session")
        return
    params: dict[str, Any] = {"sessionId": ctx.session_id, "configId": option["id"]}
    if option.get("type") == "boolean":
        params |= {"type": "boolean", "value": bool(option.get("currentValue"))}
    else:
        params["value"] = option.get("currentValue")
    await _round_trip(ctx, probe, case, "session/set_config_option", params, f"{option['id']}")


async def _round_trip(
    ctx: Context, probe: Probe, case: str, method: str, params: dict[str, Any], what: str
) -> None:
    mark = len(probe.violations)
    try:
        await probe.request(method, params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        ctx.fail(case, R_ADVERTISED, f"{what}: {why(error, ctx.call_timeout)}")
        return
    broken = probe.violations[mark:]
    if broken:
        ctx.fail(case, R_SCHEMA, broken[0].problem, broken[0].line)
        return
    ctx.add(case, "passed", detail=what)


async def unknown_method(ctx: Context, probe: Probe) -> None:
    for case, method in (
        ("unknown method", "session/acp_tui_check_no_such_method"),
        ("unknown extension method", "_acp_tui_check/no_such_method"),
    ):
        await _expect_error(ctx, probe, case, method, {}, METHOD_NOT_FOUND, R_UNKNOWN)


async def bad_params(ctx: Context, probe: Probe) -> None:
    params = {"cwd": 42, "mcpServers": "none"}
    await _expect_error(
        ctx, probe, "invalid params", "session/new", params, INVALID_PARAMS, R_PARAMS
    )


async def _expect_error(
    ctx: Context, probe: Probe, case: str, method: str, params: Any, code: int, rule: Rule
) -> None:
    mark = len(probe.lines)
    try:
        await probe.request(method, params, ctx.call_timeout, checked=False)
    except RpcError as error:
        if error.code == code:
            ctx.add(case, "passed", detail=f"{code} {error.message}")
        else:
            ctx.fail(
                case,
                rule,
                f"answered {error.code} ({error.message}), not {code}",
                probe.answer_after(mark),
            )
        return
    except TimeoutError:
        ctx.fail(case, rule, f"no answer within {ctx.call_timeout:g} s")
        return
    ctx.fail(case, rule, "answered with a result, not an error", probe.answer_after(mark))


async def prompt_turn(ctx: Context, probe: Probe) -> None:
    case = "prompt turn"
    if ctx.session_id is None:
        ctx.add(case, "skipped", detail="no session", needs_model=True)
        return
    mark = len(probe.lines)
    violations = len(probe.violations)
    end = await _turn(ctx, probe, ctx.prompt, ctx.turn_timeout)
    if isinstance(end, str):
        ctx.fail(case, R_STOP, end, needs_model=True)
        return
    await asyncio.sleep(_AFTER_TURN)
    ctx.turn_text = _agent_text(probe.updates(ctx.session_id, mark))
    late = _late_updates(probe, ctx.session_id, end.after)
    broken = probe.violations[violations:]
    if end.stop_reason not in STOP_REASONS and not str(end.stop_reason).startswith("_"):
        ctx.fail(case, R_STOP, f"stopReason {end.stop_reason!r}", end.line, needs_model=True)
    elif broken:
        ctx.fail(case, R_SCHEMA, broken[0].problem, broken[0].line, needs_model=True)
    elif late:
        kind = late[0].msg["params"]["update"].get("sessionUpdate")
        ctx.fail(
            case,
            R_AFTER,
            f"{len(late)} update(s) after the turn ended ({kind})",
            late[0],
            needs_model=True,
        )
    else:
        updates = len(probe.updates(ctx.session_id, mark))
        ctx.add(
            case, "passed", detail=f"{end.stop_reason} after {updates} updates", needs_model=True
        )


async def cancel_turn(ctx: Context, probe: Probe) -> None:
    case = "cancel mid-turn"
    if ctx.session_id is None:
        ctx.add(case, "skipped", detail="no session", needs_model=True)
        return
    mark = len(probe.lines)
    turn = asyncio.ensure_future(_turn(ctx, probe, ctx.prompt, ctx.turn_timeout))
    # Cancel once the agent is at work (its first update), or soon anyway.
    for _ in range(50):
        if probe.updates(ctx.session_id, mark) or turn.done():
            break
        await asyncio.sleep(0.1)
    if turn.done():
        ctx.add(case, "n/a", detail="the turn ended before it could be cancelled", needs_model=True)
        return
    await probe.notify("session/cancel", {"sessionId": ctx.session_id})
    done, _ = await asyncio.wait({turn}, timeout=CANCEL_BOUND)
    if not done:
        ctx.fail(
            case,
            R_CANCEL,
            f"the turn did not end within {CANCEL_BOUND:g} s of the cancel",
            needs_model=True,
        )
        turn.cancel()
        return
    end = turn.result()
    if isinstance(end, str):
        ctx.fail(case, R_CANCEL, end, needs_model=True)
    elif end.stop_reason != "cancelled":
        ctx.fail(case, R_CANCEL, f"ended {end.stop_reason!r}", end.line, needs_model=True)
    else:
        ctx.add(case, "passed", detail="cancelled", needs_model=True)


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """How a prompt turn ended: its stop reason, and the line that said so (its index + 1 is
    where what comes after the turn starts)."""

    stop_reason: Any
    after: int
    line: Line | None


async def _turn(ctx: Context, probe: Probe, text: str, timeout: float) -> TurnEnd | str:
    """Run one turn: how it ended, or why it did not."""
    assert ctx.session_id is not None
    params = {"sessionId": ctx.session_id, "prompt": [{"type": "text", "text": text}]}
    mark = len(probe.lines)
    try:
        result, line = await probe.request("session/prompt", params, timeout)
    except RpcError as error:
        return f"session/prompt failed: {why(error, timeout)}"
    except TimeoutError:
        return f"the turn did not end within {timeout:g} s"
    if ctx.version < 2:
        # Lines read in the same burst as the answer may already follow it.
        after = next((i + 1 for i, seen in enumerate(probe.lines) if seen is line), mark)
        return TurnEnd(as_dict(result).get("stopReason"), after, line)
    # v2: the response only accepts the prompt; an idle state update ends the turn.
    deadline = asyncio.get_running_loop().time() + timeout
    scanned = mark
    while asyncio.get_running_loop().time() < deadline:
        for index in range(scanned, len(probe.lines)):
            update = _update_of(probe.lines[index], ctx.session_id)
            if update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
                return TurnEnd(update.get("stopReason"), index + 1, probe.lines[index])
        scanned = len(probe.lines)
        await asyncio.sleep(0.05)
    return f"no idle state_update within {timeout:g} s"


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is an object, else an empty one: an agent's message may hold anything."""
    return value if isinstance(value, dict) else {}


def _update_of(line: Line, session_id: str) -> dict[str, Any]:
    msg = line.msg
    if (
        line.direction != "recv"
        or not isinstance(msg, dict)
        or msg.get("method") != "session/update"
    ):
        return {}
    params = as_dict(msg.get("params"))
    return as_dict(params.get("update")) if params.get("sessionId") == session_id else {}


def _late_updates(probe: Probe, session_id: str, end: int) -> list[Line]:
    return [
        line
        for line in probe.lines[end:]
        if _update_of(line, session_id).get("sessionUpdate") in _TURN_CONTENT
    ]


def _agent_text(lines: list[Line]) -> str:
    parts = []
    for line in lines:
        update = as_dict(as_dict(as_dict(line.msg).get("params")).get("update"))
        content = update.get("content")
        if update.get("sessionUpdate") == "agent_message_chunk" and isinstance(content, dict):
            parts.append(str(content.get("text", "")))
    return "".join(parts)


async def session_list(ctx: Context, probe: Probe) -> None:
    case = "session/list"
    if not ctx.offers("list"):
        ctx.add(case, "n/a", detail="not advertised")
        return
    try:
        params = {"cwd": str(ctx.workspace)}
        result, _ = await probe.request("session/list", params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        ctx.fail(case, R_ADVERTISED, why(error, ctx.call_timeout))
        return
    ids = [s.get("sessionId") for s in (result or {}).get("sessions") or [] if isinstance(s, dict)]
    if ctx.session_id is not None and ctx.session_id not in ids:
        ctx.add(case, "passed", detail=f"{len(ids)} session(s); ours is not listed (yet)")
    else:
        ctx.add(case, "passed", detail=f"{len(ids)} session(s)")


async def session_load(ctx: Context, probe: Probe) -> None:
    case = "session/load"
    if ctx.version >= 2 or not ctx.advertised("loadSession"):
        ctx.add(case, "n/a", detail="not advertised")
        return
    if ctx.session_id is None:
        ctx.add(case, "skipped", detail="no session")
        return
    mark = len(probe.lines)
    params = {"sessionId": ctx.session_id, "cwd": str(ctx.workspace), "mcpServers": []}
    try:
        await probe.request("session/load", params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        ctx.fail(case, R_ADVERTISED, why(error, ctx.call_timeout))
        return
    replayed = _agent_text(probe.updates(ctx.session_id, mark))
    if ctx.turn_text and ctx.turn_text.strip() not in replayed:
        rule = Rule(
            "SHOULD",
            "protocol/session-setup#loading-sessions",
            "the replay SHOULD reproduce the conversation",
        )
        ctx.fail(case, rule, "the replay does not hold the turn's answer")
        return
    ctx.add(case, "passed", detail=f"replayed {len(probe.updates(ctx.session_id, mark))} updates")


async def session_resume_close_delete(ctx: Context, probe: Probe) -> None:
    for method, marker in (
        ("session/resume", "resume"),
        ("session/close", "close"),
        ("session/delete", "delete"),
    ):
        if not ctx.offers(marker):
            ctx.add(method, "n/a", detail="not advertised")
            continue
        if ctx.session_id is None:
            ctx.add(method, "skipped", detail="no session")
            continue
        params: dict[str, Any] = {"sessionId": ctx.session_id}
        if method == "session/resume":
            params |= {"cwd": str(ctx.workspace)}
        await _round_trip(ctx, probe, method, method, params, ctx.session_id)


def check_schema(ctx: Context, probe: Probe) -> None:
    if probe.violations:
        first = probe.violations[0]
        count = len(probe.violations)
        detail = f"{count} message(s) break the v{ctx.version} schema; first: {first.problem}"
        ctx.fail("every message matches the schema", R_SCHEMA, detail, first.line)
    else:
        received = sum(1 for line in probe.lines if line.direction == "recv")
        ctx.add("every message matches the schema", "passed", detail=f"{received} messages")


def check_stdout(ctx: Context, probe: Probe) -> None:
    case = "stdout carries only ACP messages"
    if probe.problems:
        detail = f"{len(probe.problems)} line(s) that are not ACP; first: {probe.problems[0]}"
        ctx.fail(case, R_STDOUT, detail)
    else:
        ctx.add(case, "passed", detail="nothing else")


def check_permissions(ctx: Context, probe: Probe) -> None:
    case = "permission requests name a reported tool call"
    if not probe.permission_requests:
        ctx.add(case, "n/a", detail="the agent asked no permission")
        return
    for line, announced in probe.permission_requests:
        params = as_dict(as_dict(line.msg).get("params"))
        call = as_dict(params.get("toolCall") or as_dict(params.get("subject")).get("toolCall"))
        call_id = call.get("toolCallId")
        if call_id is not None and call_id not in announced:
            ctx.fail(case, R_PERMISSION, f"asked about {call_id!r} before reporting it", line)
            return
    ctx.add(case, "passed", detail=f"{len(probe.permission_requests)} request(s)")


def check_client_methods(ctx: Context, probe: Probe) -> None:
    case = "fs/* and terminal/* only as advertised"
    if probe.client_calls:
        first = probe.client_calls[0]
        method = as_dict(first.msg).get("method")
        detail = f"called {method} though the client advertised no such capability"
        ctx.fail(case, R_CLIENT_METHODS, detail, first)
    else:
        ctx.add(case, "passed", detail="none used (none advertised)")


async def check_stdin_close(ctx: Context, probe: Probe) -> None:
    case = "exits when stdin closes"
    assert probe.process is not None
    probe.process.stdin.close()
    if await probe.exited_within(EXIT_BOUND):
        ctx.add(case, "passed", detail=f"exit status {probe.process.returncode}")
    else:
        ctx.fail(case, R_EXIT, f"still running {EXIT_BOUND:g} s after its stdin closed")


_SESSION_STEPS: list[Callable[[Context, Probe], Awaitable[None]]] = [
    new_session,
    modes,
    config_options,
    unknown_method,
    bad_params,
    prompt_turn,
    cancel_turn,
    session_list,
    session_load,
    session_resume_close_delete,
]
