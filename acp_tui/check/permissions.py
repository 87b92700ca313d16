"""The permission cases, on turns of `--tool-prompt` (a file write that should be asked
about): allowed, the tool runs; rejected, it does not; cancelled while the request waits, the
client answers `cancelled` and the turn ends `cancelled`."""

from __future__ import annotations

import asyncio

from acp_tui.check.context import Context, as_dict
from acp_tui.check.probe import Answer, Line, Probe
from acp_tui.check.rules import CANCELLED, GRANTED, NOTE_REJECTED, REQUIRES_ACTION
from acp_tui.check.turns import CANCEL_BOUND, TurnEnd, start_turn, text_prompt

ALLOWED = "permission: allowed, the tool runs"
REJECTED = "permission: rejected, the tool does not run"
CANCELLED_WAITING = "cancel while a permission request waits"
REQUIRES = "v2: requires_action while asking"
_RAN = ("in_progress", "completed")


async def permission_flow(ctx: Context, probe: Probe) -> None:
    cases = (ALLOWED, REJECTED, CANCELLED_WAITING, REQUIRES)
    if ctx.session_id is None:
        for case in cases:
            ctx.add(case, "skipped", detail="no session", needs_model=True)
        return
    allowed = await _asked_turn(ctx, probe, "allow")
    if allowed is None:
        detail = "the agent asked no permission on --tool-prompt's turn"
        for case in cases:
            ctx.add(case, "n/a", detail=detail, needs_model=True)
        return
    request, call_id, after = allowed
    if _statuses(probe, ctx.session_id, call_id, after) & set(_RAN):
        ctx.add(ALLOWED, "passed", detail=f"{call_id} ran", needs_model=True)
    else:
        detail = f"allowed {call_id}, and no update marked it in_progress or completed"
        ctx.fail(ALLOWED, GRANTED, detail, request, needs_model=True)
    rejected = await _asked_turn(ctx, probe, "reject")
    if rejected is None:
        ctx.add(REJECTED, "n/a", detail="the second turn asked no permission", needs_model=True)
    else:
        request, call_id, after = rejected
        if "completed" in _statuses(probe, ctx.session_id, call_id, after):
            detail = f"rejected {call_id}, and it completed"
            ctx.remark(REJECTED, NOTE_REJECTED, detail, request, needs_model=True)
        else:
            ctx.add(REJECTED, "passed", detail=f"{call_id} did not run", needs_model=True)
    await _cancel_while_asking(ctx, probe)


async def _asked_turn(ctx: Context, probe: Probe, answer: Answer) -> tuple[Line, str, int] | None:
    """One `--tool-prompt` turn with permission requests answered `answer`: the first
    request, its tool call id and where the lines after the request start; None if it asked
    nothing."""
    probe.permission = answer
    mark = len(probe.lines)
    prompt = ctx.options.tool_prompt.replace("{cwd}", str(ctx.workspace))
    try:
        await start_turn(ctx, probe, text_prompt(prompt)).task
    finally:
        probe.permission = "allow"
    for index in range(mark, len(probe.lines)):
        line = probe.lines[index]
        msg = as_dict(line.msg)
        if line.direction == "recv" and msg.get("method") == "session/request_permission":
            params = as_dict(msg.get("params"))
            call = as_dict(params.get("toolCall") or as_dict(params.get("subject")).get("toolCall"))
            return line, str(call.get("toolCallId")), index + 1
    return None


def _statuses(probe: Probe, session_id: str, call_id: str, since: int) -> set[str]:
    found = set()
    for line in probe.updates(session_id, since):
        update = as_dict(as_dict(as_dict(line.msg).get("params")).get("update"))
        if str(update.get("toolCallId")) == call_id and isinstance(update.get("status"), str):
            found.add(update["status"])
    return found


async def _cancel_while_asking(ctx: Context, probe: Probe) -> None:
    assert ctx.session_id is not None
    session_id = ctx.session_id
    probe.permission = "hold"
    prompt = ctx.options.tool_prompt.replace("{cwd}", str(ctx.workspace))
    turn = start_turn(ctx, probe, text_prompt(prompt))
    try:
        asked = await probe.wait_for(
            lambda: bool(probe.held) or turn.task.done(), ctx.options.turn_timeout
        )
    finally:
        probe.permission = "allow"
    if not asked or not probe.held:
        if not turn.task.done():
            turn.task.cancel()
        detail = "the third turn asked no permission"
        ctx.add(CANCELLED_WAITING, "n/a", detail=detail, needs_model=True)
        ctx.add(REQUIRES, "n/a", detail=detail, needs_model=True)
        return
    _requires_action(ctx, probe, session_id, turn.mark)
    await probe.notify("session/cancel", {"sessionId": session_id})
    # The client's side of the rule: every pending permission request answered `cancelled`.
    for future in probe.held:
        if not future.done():
            future.set_result({"outcome": {"outcome": "cancelled"}})
    probe.held.clear()
    done, _ = await asyncio.wait({turn.task}, timeout=CANCEL_BOUND)
    if not done:
        turn.task.cancel()
        detail = f"the turn did not end within {CANCEL_BOUND:g} s of the cancel"
        ctx.fail(CANCELLED_WAITING, CANCELLED, detail, needs_model=True)
        return
    end = turn.task.result()
    if not isinstance(end, TurnEnd):
        ctx.fail(CANCELLED_WAITING, CANCELLED, end, needs_model=True)
    elif end.stop_reason != "cancelled":
        detail = f"answered cancelled, the turn ended {end.stop_reason!r}"
        ctx.fail(CANCELLED_WAITING, CANCELLED, detail, end.line, needs_model=True)
    else:
        ctx.add(CANCELLED_WAITING, "passed", detail="cancelled", needs_model=True)


def _requires_action(ctx: Context, probe: Probe, session_id: str, mark: int) -> None:
    if ctx.version < 2:
        ctx.add(REQUIRES, "n/a", detail="ACP v1", needs_model=True)
        return
    states = [
        as_dict(as_dict(as_dict(u.msg).get("params")).get("update")).get("state")
        for u in probe.updates(session_id, mark)
    ]
    if "requires_action" in states:
        ctx.add(REQUIRES, "passed", detail="reported", needs_model=True)
    else:
        detail = "no state_update requires_action while the request waited"
        ctx.fail(REQUIRES, REQUIRES_ACTION, detail, needs_model=True)
