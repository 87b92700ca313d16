"""JSON-RPC robustness: what the agent answers to an unknown method, an unknown extension
method, invalid params, a request about a session it does not know, a notification it does
not know, and a line that is not JSON."""

from __future__ import annotations

from typing import Any

from acp_tui.check.context import Context, as_dict, why
from acp_tui.check.probe import Probe
from acp_tui.check.rules import (
    NOTE_PARAMS,
    NOTE_PARSE,
    NOTE_UNKNOWN_METHOD,
    NOTE_UNKNOWN_SESSION,
    UNKNOWN_EXTENSION,
    UNKNOWN_NOTIFICATION,
    Note,
    Rule,
)
from acp_tui.protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, PARSE_ERROR, RpcError


async def unknown_methods(ctx: Context, probe: Probe) -> None:
    await _expect_error(
        ctx, probe, "unknown method", "session/acp_tui_check_no_such_method", {},
        METHOD_NOT_FOUND, NOTE_UNKNOWN_METHOD,
    )  # fmt: skip
    await _expect_error(
        ctx, probe, "unknown extension method", "_acp_tui_check/no_such_method", {},
        METHOD_NOT_FOUND, UNKNOWN_EXTENSION,
    )  # fmt: skip


async def bad_params(ctx: Context, probe: Probe) -> None:
    params = {"cwd": 42, "mcpServers": "none"}
    await _expect_error(
        ctx, probe, "invalid params", "session/new", params, INVALID_PARAMS, NOTE_PARAMS
    )


async def unknown_session(ctx: Context, probe: Probe) -> None:
    case = "unknown sessionId"
    params = {
        "sessionId": "acp-tui-check-no-such-session",
        "prompt": [{"type": "text", "text": "hello"}],
    }
    await _expect_error(ctx, probe, case, "session/prompt", params, None, NOTE_UNKNOWN_SESSION)


async def unknown_notification(ctx: Context, probe: Probe) -> None:
    """An unknown notification gets no answer, and the agent goes on answering."""
    case = "unknown notification ignored"
    mark = len(probe.lines)
    await probe.notify("_acp_tui_check/no_such_notification", {"hello": True})
    try:
        # Any cheap request will do to see the agent still there.
        await probe.request("_acp_tui_check/still_there", {}, ctx.call_timeout, checked=False)
    except RpcError as error:
        if probe.ended:
            ctx.fail(case, UNKNOWN_NOTIFICATION, f"it stopped: {probe.exit_description()}")
            return
        del error  # an error is the expected answer to the made-up request
    except TimeoutError:
        detail = f"no answer to the next request within {ctx.call_timeout:g} s"
        ctx.fail(case, UNKNOWN_NOTIFICATION, detail)
        return
    replies = [
        line
        for line in probe.lines[mark:]
        if line.direction == "recv" and isinstance(line.msg, dict)
        and "method" not in line.msg and line.msg.get("id") is None
    ]  # fmt: skip
    if replies:
        ctx.fail(case, UNKNOWN_NOTIFICATION, "it answered the notification", replies[0])
    else:
        ctx.add(case, "passed", detail="no answer, and the agent goes on")


async def malformed_json(ctx: Context, probe: Probe) -> None:
    """A line that is not JSON: -32700 with id null, and the agent goes on."""
    case = "malformed JSON"
    if probe.ended:
        ctx.add(case, "skipped", detail="the agent is gone")
        return
    mark = len(probe.lines)
    await probe.send_raw('{"jsonrpc": "2.0", "id": 9999, "method": ')

    def answered() -> bool:
        return any(
            line.direction == "recv" and isinstance(line.msg, dict) and "error" in line.msg
            for line in probe.lines[mark:]
        )

    await probe.wait_for(answered, ctx.call_timeout)
    error = next(
        (
            line
            for line in probe.lines[mark:]
            if line.direction == "recv" and "error" in as_dict(line.msg)
        ),
        None,
    )
    if error is None:
        detail = "no answer" if not probe.ended else f"it stopped: {probe.exit_description()}"
        ctx.remark(case, NOTE_PARSE, detail)
        return
    msg = as_dict(error.msg)
    code = as_dict(msg.get("error")).get("code")
    if code != PARSE_ERROR:
        ctx.remark(case, NOTE_PARSE, f"answered {code}, not {PARSE_ERROR}", error)
    elif "id" not in msg or msg["id"] is not None:
        ctx.remark(case, NOTE_PARSE, f"answered {PARSE_ERROR} without id null", error)
    else:
        # A response with id null answers nothing of ours: the expected one here.
        ctx.blame(case, error)
        ctx.add(case, "passed", detail=f"{PARSE_ERROR}, id null")


async def _expect_error(
    ctx: Context,
    probe: Probe,
    case: str,
    method: str,
    params: Any,
    code: int | None,
    rule: Rule | Note,
) -> None:
    """`method` must be refused with error `code` (None: any error)."""
    mark = len(probe.lines)
    try:
        await probe.request(method, params, ctx.call_timeout, checked=False)
    except RpcError as error:
        if code is None or error.code == code:
            ctx.add(case, "passed", detail=f"{error.code} {error.message}")
        else:
            detail = f"answered {error.code} ({error.message}), not {code}"
            _report(ctx, case, rule, detail, probe, mark)
        return
    except TimeoutError:
        _report(ctx, case, rule, why(TimeoutError(), ctx.call_timeout), probe, mark)
        return
    _report(ctx, case, rule, "answered with a result, not an error", probe, mark)


def _report(
    ctx: Context, case: str, rule: Rule | Note, detail: str, probe: Probe, mark: int
) -> None:
    line = probe.answer_after(mark)
    if isinstance(rule, Note):
        ctx.remark(case, rule, detail, line)
    else:
        ctx.fail(case, rule, detail, line)
