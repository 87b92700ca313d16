"""The prompt-turn cases: one real turn (how it ends, no updates after it), and a turn
cancelled mid-way. Both need a model; their prompt is the author's `--prompt`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from acp_tui.check.context import Context, as_dict, why
from acp_tui.check.probe import Line, Probe
from acp_tui.check.rules import R_AFTER, R_CANCEL, R_SCHEMA, R_STOP
from acp_tui.protocol.jsonrpc import RpcError

STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}
CANCEL_BOUND = 10.0
"""Seconds an agent gets to end a cancelled turn."""
_AFTER_TURN = 1.0
"""Seconds of listening after a turn ended, for updates that still belong to it."""
_TURN_CONTENT = {"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update"}


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
    ctx.turn_text = agent_text(probe.updates(ctx.session_id, mark))
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


def agent_text(lines: list[Line]) -> str:
    parts = []
    for line in lines:
        update = as_dict(as_dict(as_dict(line.msg).get("params")).get("update"))
        content = update.get("content")
        if update.get("sessionUpdate") == "agent_message_chunk" and isinstance(content, dict):
            parts.append(str(content.get("text", "")))
    return "".join(parts)
