"""The session cases: session/new, the optional session methods the agent advertised (modes,
config options, list, load, resume, close, delete), and its answers to an unknown method and to
invalid params."""

from __future__ import annotations

from typing import Any

from acp_tui.check.context import Context, why
from acp_tui.check.probe import Probe
from acp_tui.check.rules import R_ADVERTISED, R_BASELINE, R_PARAMS, R_SCHEMA, R_UNKNOWN, Rule
from acp_tui.check.turns import agent_text
from acp_tui.protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, RpcError


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
    replayed = agent_text(probe.updates(ctx.session_id, mark))
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
