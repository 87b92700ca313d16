"""The session cases: sign-in, session/new, modes and config options (each put back as it
was), and the optional session methods the agent advertised: list, load (from a fresh
process), resume, close, delete."""

from __future__ import annotations

from typing import Any

from acp_tui.check.context import Context, as_dict, why
from acp_tui.check.handshake import initialize_params, new_probe
from acp_tui.check.probe import Probe
from acp_tui.check.rules import (
    AUTH_SURFACE,
    BASELINE,
    CLOSE,
    CONFIG_ANSWER,
    DELETE_UNKNOWN,
    LIST,
    LOAD_ANSWER,
    LOAD_REPLAY,
    NOTE_BAD_AUTH,
    NOTE_SET_MODE,
    RESUME_BASELINE,
    RESUME_NO_REPLAY,
    SESSION_ID,
    Rule,
)
from acp_tui.check.turns import agent_text, tool_call_ids
from acp_tui.protocol.jsonrpc import RpcError

_ADVERTISED = "advertised in initialize"


async def sign_in(ctx: Context, probe: Probe) -> None:
    """A made-up auth method is refused; then `--auth`'s, when given."""
    case = "authenticate: unknown method id"
    method = "authenticate" if ctx.version < 2 else "auth/login"
    if not ctx.auth_methods:
        ctx.add("authMethods", "n/a", detail="none advertised")
        ctx.add(case, "n/a", detail="no auth methods advertised")
    else:
        ids = [str(m.get("id", m.get("methodId"))) for m in ctx.auth_methods]
        ctx.add("authMethods", "passed", detail=f"{len(ids)}: {', '.join(ids)}")
        params = {"methodId": "acp-tui-check-no-such-method"}
        try:
            await probe.request(method, params, ctx.call_timeout, checked=False)
        except RpcError as error:
            ctx.add(case, "passed", detail=f"{error.code} {error.message}")
        except TimeoutError:
            ctx.remark(case, NOTE_BAD_AUTH, f"no answer within {ctx.call_timeout:g} s")
        else:
            line = probe.answer_after(len(probe.lines) - 1)
            ctx.remark(case, NOTE_BAD_AUTH, "answered with a result: signed in?", line)
    if ctx.options.auth is not None:
        try:
            await probe.request(method, {"methodId": ctx.options.auth}, ctx.call_timeout)
        except (RpcError, TimeoutError) as error:
            detail = f"sign-in with {ctx.options.auth}: {why(error, ctx.call_timeout)}"
            rule = AUTH_SURFACE if ctx.version >= 2 else BASELINE
            ctx.fail("authenticate (--auth)", rule, detail)
        else:
            ctx.add("authenticate (--auth)", "passed", detail=ctx.options.auth)


async def new_session(ctx: Context, probe: Probe) -> None:
    params: dict[str, Any] = {"cwd": str(ctx.workspace), "mcpServers": []}
    try:
        result, line = await probe.request("session/new", params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        hint = ""
        if isinstance(error, RpcError) and error.code == -32000:
            hint = " (it wants sign-in: --auth METHOD)"
        ctx.fail("session/new", BASELINE, f"{why(error, ctx.call_timeout)}{hint}")
        return
    ctx.session = as_dict(result)
    if ctx.session_id is None:
        ctx.fail("session/new", SESSION_ID, "the answer has no sessionId", line)
        return
    ctx.add("session/new", "passed", detail=f"session {ctx.session_id}")
    if ctx.options.mode is not None:
        await _set_mode(ctx, probe, ctx.options.mode)


async def _set_mode(ctx: Context, probe: Probe, mode: str) -> None:
    """`--mode`: the session's mode, by `session/set_mode` or a mode config option."""
    option = next((o for o in _options(ctx) if o.get("category") == "mode"), None)
    try:
        if option is not None:
            await probe.request(
                "session/set_config_option", _config_params(ctx, option, mode), ctx.call_timeout
            )
        else:
            params = {"sessionId": ctx.session_id, "modeId": mode}
            await probe.request("session/set_mode", params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        ctx.add("--mode", "skipped", detail=f"mode {mode}: {why(error, ctx.call_timeout)}")


def _options(ctx: Context) -> list[dict[str, Any]]:
    return [o for o in ctx.session.get("configOptions") or [] if isinstance(o, dict)]


def _config_id(ctx: Context, option: dict[str, Any]) -> Any:
    # v2 renamed the option's id `configId`.
    return option.get("configId") if ctx.version >= 2 else option.get("id")


def _config_params(ctx: Context, option: dict[str, Any], value: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": ctx.session_id, "configId": _config_id(ctx, option)}
    if option.get("type") == "boolean":
        return params | {"type": "boolean", "value": bool(value)}
    if ctx.version >= 2:
        return params | {"type": "id", "value": value}
    return params | {"value": value}


async def modes(ctx: Context, probe: Probe) -> None:
    """Switch to another mode and back."""
    case = "session/set_mode"
    state = ctx.session.get("modes")
    if ctx.version >= 2 or not isinstance(state, dict) or not state.get("availableModes"):
        ctx.add(case, "n/a", detail="no modes offered")
        return
    current = state.get("currentModeId")
    ids = [m.get("id") for m in state["availableModes"] if isinstance(m, dict)]
    target = next((i for i in ids if i != current), current)
    for mode in (target, current) if target != current else (target,):
        params = {"sessionId": ctx.session_id, "modeId": mode}
        try:
            await probe.request("session/set_mode", params, ctx.call_timeout)
        except (RpcError, TimeoutError) as error:
            ctx.remark(case, NOTE_SET_MODE, f"mode {mode}: {why(error, ctx.call_timeout)}")
            return
    ctx.add(case, "passed", detail=f"mode {target}, then back to {current}")


async def config_options(ctx: Context, probe: Probe) -> None:
    """Set a select option to another value and back (a boolean to its own value)."""
    case = "session/set_config_option"
    option = next((o for o in _options(ctx) if _config_id(ctx, o)), None)
    if option is None:
        ctx.add(case, "n/a", detail="no config options offered")
        return
    current = option.get("currentValue")
    values = [current]
    if option.get("type") != "boolean":
        key = "value"
        flat = [o for o in option.get("options") or [] if isinstance(o, dict)]
        flat = [v for group in flat for v in group.get("options", [group])]
        other = next((v.get(key) for v in flat if v.get(key) not in (None, current)), None)
        values = [other, current] if other is not None else [current]
    what = f"{_config_id(ctx, option)}: {' → '.join(map(str, values))}"
    for value in values:
        params = _config_params(ctx, option, value)
        try:
            result, line = await probe.request(
                "session/set_config_option", params, ctx.call_timeout
            )
        except (RpcError, TimeoutError) as error:
            ctx.fail(case, CONFIG_ANSWER, f"{what}: {why(error, ctx.call_timeout)}")
            return
        if not isinstance(as_dict(result).get("configOptions"), list):
            ctx.fail(case, CONFIG_ANSWER, f"{what}: the answer has no configOptions", line)
            return
    ctx.add(case, "passed", detail=what)


async def session_list(ctx: Context, probe: Probe) -> None:
    case = "session/list"
    if not ctx.offers("list"):
        ctx.add(case, "n/a", detail="not advertised")
        return
    try:
        params = {"cwd": str(ctx.workspace)}
        result, line = await probe.request("session/list", params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        ctx.fail(case, LIST, why(error, ctx.call_timeout))
        return
    sessions = as_dict(result).get("sessions")
    if not isinstance(sessions, list):
        ctx.fail(case, LIST, "the answer has no sessions list", line)
        return
    ctx.add(case, "passed", detail=f"{len(sessions)} session(s)")


async def session_load(ctx: Context, own: Probe) -> None:
    """Load the session in a fresh process: the replay holds the turn and its tool calls."""
    case = "session/load (fresh process)"
    if ctx.version >= 2 or not ctx.advertised("loadSession"):
        ctx.add(case, "n/a", detail="not advertised")
        return
    if ctx.session_id is None:
        ctx.add(case, "skipped", detail="no session")
        return
    probe = new_probe(ctx, "load", ctx.version)
    try:
        await probe.start()
        await probe.request("initialize", initialize_params(ctx.version), ctx.call_timeout)
        params = {"sessionId": ctx.session_id, "cwd": str(ctx.workspace), "mcpServers": []}
        await probe.request("session/load", params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        detail = f"{why(error, ctx.call_timeout)}{await _load_here(ctx, own)}"
        ctx.fail(case, LOAD_ANSWER, detail)
        return
    finally:
        await probe.close()
    replay = probe.updates(ctx.session_id)
    text = agent_text(replay)
    if ctx.turn_text.strip() and ctx.turn_text.strip() not in text:
        ctx.fail(case, LOAD_REPLAY, f"the replay ({len(replay)} updates) lacks the turn's answer")
    elif ctx.tool_calls and not tool_call_ids(replay):
        ctx.fail(case, LOAD_REPLAY, f"the replay ({len(replay)} updates) lacks the tool calls")
    else:
        ctx.add(case, "passed", detail=f"replayed {len(replay)} updates")


async def _load_here(ctx: Context, probe: Probe) -> str:
    """Whether the session loads on its own connection, to tell a session kept only in the
    process (or a HOME that does not outlive it) from one that never loads."""
    params: dict[str, Any] = {
        "sessionId": ctx.session_id,
        "cwd": str(ctx.workspace),
        "mcpServers": [],
    }
    try:
        await probe.request("session/load", params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        return f"; on its own connection too: {why(error, ctx.call_timeout)}"
    return "; it loads on the connection that made it: is it kept only by that process?"


async def session_resume(ctx: Context, probe: Probe) -> None:
    """Resume the session: no replay before the answer."""
    case = "session/resume"
    if not ctx.offers("resume"):
        ctx.add(case, "n/a", detail="not advertised")
        return
    mark = len(probe.lines)
    params: dict[str, Any] = {
        "sessionId": ctx.session_id,
        "cwd": str(ctx.workspace),
        "mcpServers": [],
    }
    try:
        _, line = await probe.request("session/resume", params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        rule = RESUME_BASELINE if ctx.version >= 2 else RESUME_NO_REPLAY
        ctx.fail(case, rule, f"{_ADVERTISED}, then {why(error, ctx.call_timeout)}")
        return
    assert ctx.session_id is not None
    replayed = [
        u
        for u in probe.updates(ctx.session_id, mark)
        if as_dict(as_dict(u.msg)["params"].get("update")).get("sessionUpdate")
        in ("user_message_chunk", "agent_message_chunk", "user_message", "agent_message")
    ]
    if replayed and line is not None and probe.lines.index(replayed[0]) < probe.lines.index(line):
        ctx.fail(case, RESUME_NO_REPLAY, "it replayed the conversation", replayed[0])
        return
    ctx.add(case, "passed", detail="no replay")


async def session_close(ctx: Context, probe: Probe) -> None:
    """Close the session: the answer comes, and nothing of the session follows it."""
    case = "session/close"
    if not ctx.offers("close"):
        ctx.add(case, "n/a", detail="not advertised")
        return
    await _simple(ctx, probe, case, "session/close", {"sessionId": ctx.session_id}, CLOSE)


async def session_delete(ctx: Context, probe: Probe) -> None:
    for case, session_id in (
        ("session/delete", ctx.session_id),
        ("session/delete: unknown id", "acp-tui-check-no-such-session"),
    ):
        if not ctx.offers("delete"):
            ctx.add(case, "n/a", detail="not advertised")
            continue
        params = {"sessionId": session_id}
        await _simple(ctx, probe, case, "session/delete", params, DELETE_UNKNOWN)


async def _simple(
    ctx: Context, probe: Probe, case: str, method: str, params: dict[str, Any], rule: Rule
) -> None:
    try:
        await probe.request(method, params, ctx.call_timeout)
    except (RpcError, TimeoutError) as error:
        ctx.fail(case, rule, f"{_ADVERTISED}, then {why(error, ctx.call_timeout)}")
        return
    ctx.add(case, "passed", detail=str(params.get("sessionId")))
