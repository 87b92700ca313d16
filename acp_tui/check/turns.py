"""The prompt-turn cases: a real turn (how it ends, what comes after, v2's lifecycle), a
`resource_link` prompt, a long turn cancelled at its first chunk, and the permission flow
(allowed, rejected, and cancelled while it waits). They need a model; their prompts are
`--prompt`, `--long-prompt` and `--tool-prompt`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from acp_tui.check.context import Context, as_dict, why
from acp_tui.check.probe import Line, Probe
from acp_tui.check.rules import (
    ACT_BY_VERSION,
    AFTER_CANCEL,
    BASELINE_CONTENT,
    CANCELLED,
    CUSTOM_STOP,
    MESSAGE_ID,
    NOTE_AFTER_TURN,
    PROMPT_ACCEPTED,
    RUNNING,
    STOP,
    USER_MESSAGE,
)
from acp_tui.protocol.jsonrpc import RpcError

STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}
CANCEL_BOUND = 10.0
"""Seconds an agent gets to end a cancelled turn."""
RACE = 0.2
"""A turn that ends, not `cancelled`, this soon after the cancel with nothing sent between may
have ended before the cancel reached it: the case is tried once more, then called n/a."""
AFTER_TURN = 1.0
"""Seconds of listening after a turn ended, for updates that still belong to it."""
_CONTENT = {
    "agent_message_chunk",
    "agent_thought_chunk",
    "agent_message",
    "agent_thought",
    "tool_call",
    "tool_call_update",
    "tool_call_content_chunk",
    "plan",
    "plan_update",
}
_MESSAGES = {
    "agent_message_chunk",
    "agent_thought_chunk",
    "user_message_chunk",
    "agent_message",
    "agent_thought",
    "user_message",
}


@dataclass(slots=True)
class Turn:
    """A turn under way: where its lines start, and the task that ends with it."""

    mark: int
    task: asyncio.Task[TurnEnd | str]


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """How a prompt turn ended: its stop reason, and the line that said so (what comes after
    the turn starts at `after`)."""

    stop_reason: Any
    after: int
    line: Line | None


def start_turn(ctx: Context, probe: Probe, prompt: list[dict[str, Any]]) -> Turn:
    return Turn(len(probe.lines), asyncio.ensure_future(_turn(ctx, probe, prompt)))


def text_prompt(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


async def prompt_turn(ctx: Context, probe: Probe) -> None:
    case = "prompt turn"
    if ctx.session_id is None:
        ctx.add(case, "skipped", detail="no session", needs_model=True)
        for later in (
            "nothing after the turn's end",
            "v2: user message",
            "v2: running",
            "v2: messageId",
        ):
            ctx.add(later, "skipped", detail="no session", needs_model=True)
        return
    turn = start_turn(ctx, probe, text_prompt(ctx.options.prompt))
    end = await turn.task
    lines = probe.lines[turn.mark :]
    ctx.turn_text = agent_text(probe.updates(ctx.session_id, turn.mark))
    ctx.tool_calls += len(tool_call_ids(probe.updates(ctx.session_id, turn.mark)))
    if isinstance(end, str):
        ctx.fail(case, STOP, end, needs_model=True)
    elif not _valid_stop(ctx, end.stop_reason):
        rule = CUSTOM_STOP if ctx.version >= 2 else STOP
        ctx.fail(case, rule, f"stopReason {end.stop_reason!r}", end.line, needs_model=True)
    else:
        broken = [v for v in probe.violations if v.line in lines]
        if broken:
            ctx.fail(case, ACT_BY_VERSION, broken[0].problem, broken[0].line, needs_model=True)
        else:
            count = len(probe.updates(ctx.session_id, turn.mark))
            ctx.add(
                case, "passed", detail=f"{end.stop_reason} after {count} updates", needs_model=True
            )
    if isinstance(end, str):
        ctx.add("nothing after the turn's end", "skipped", detail="the turn did not end")
    else:
        await _nothing_after(ctx, probe, end)
    v2_lifecycle(ctx, probe, turn.mark)


async def _nothing_after(ctx: Context, probe: Probe, end: TurnEnd) -> None:
    case = "nothing after the turn's end"
    assert ctx.session_id is not None
    # Listening a while is the point here: what comes late comes unannounced.
    await asyncio.sleep(AFTER_TURN)
    late = late_content(probe, ctx.session_id, end.after)
    if late:
        kind = _kind(late[0])
        ctx.remark(
            case, NOTE_AFTER_TURN, f"{len(late)} update(s) after the turn ended ({kind})", late[0]
        )
    else:
        ctx.add(case, "passed", detail=f"nothing within {AFTER_TURN:g} s")


def v2_lifecycle(ctx: Context, probe: Probe, mark: int) -> None:
    """v2: the turn acknowledged the user message, said it was running, and gave every
    message a messageId."""
    cases = ("v2: user message", "v2: running", "v2: messageId")
    if ctx.version < 2:
        for case in cases:
            ctx.add(case, "n/a", detail="ACP v1")
        return
    assert ctx.session_id is not None
    updates = probe.updates(ctx.session_id, mark)
    kinds = [_kind(u) for u in updates]
    if {"user_message", "user_message_chunk"} & set(kinds):
        ctx.add(cases[0], "passed", detail="acknowledged")
    else:
        ctx.fail(cases[0], USER_MESSAGE, "no user_message or user_message_chunk in the turn")
    running = [u for u in updates if _update(u).get("state") == "running"]
    if running:
        ctx.add(cases[1], "passed", detail="state_update running")
    else:
        ctx.fail(cases[1], RUNNING, "no state_update running in the turn")
    bare = [u for u in updates if _kind(u) in _MESSAGES and not _update(u).get("messageId")]
    if bare:
        ctx.fail(cases[2], MESSAGE_ID, f"{len(bare)} message update(s) without one", bare[0])
    else:
        ctx.add(cases[2], "passed", detail="on every message")


async def resource_link(ctx: Context, probe: Probe) -> None:
    case = "prompt: resource_link"
    if ctx.session_id is None:
        ctx.add(case, "skipped", detail="no session", needs_model=True)
        return
    link = {
        "type": "resource_link",
        "uri": (ctx.workspace / "README.md").as_uri(),
        "name": "README.md",
        "mimeType": "text/markdown",
    }
    prompt = [*text_prompt("What is the title of this file? Answer in one line."), link]
    end = await start_turn(ctx, probe, prompt).task
    if isinstance(end, str):
        ctx.fail(case, BASELINE_CONTENT, end, needs_model=True)
    else:
        ctx.add(case, "passed", detail=str(end.stop_reason), needs_model=True)


async def cancel_turn(ctx: Context, probe: Probe) -> None:
    """A long turn cancelled at its first chunk: it ends `cancelled`, and nothing of it comes
    after that."""
    case, after_case = "cancel mid-turn", "nothing after a cancelled turn"
    if ctx.session_id is None:
        for name in (case, after_case):
            ctx.add(name, "skipped", detail="no session", needs_model=True)
        return
    for attempt in (1, 2):
        outcome = await _cancel_once(ctx, probe)
        if outcome is not None or attempt == 2:
            break
    if outcome is None:
        detail = "the turn ended at once, twice, before a cancel could reach it"
        for name in (case, after_case):
            ctx.add(name, "n/a", detail=detail, needs_model=True)
        return
    end = outcome
    if isinstance(end, str):
        ctx.fail(case, CANCELLED, end, needs_model=True)
        ctx.add(after_case, "skipped", detail="the turn did not end", needs_model=True)
        return
    if end.stop_reason != "cancelled":
        ctx.fail(case, CANCELLED, f"ended {end.stop_reason!r}", end.line, needs_model=True)
    else:
        ctx.add(case, "passed", detail=f"cancelled (attempt {attempt})", needs_model=True)
    await asyncio.sleep(AFTER_TURN)
    late = late_content(probe, ctx.session_id, end.after)
    if late:
        detail = f"{len(late)} update(s) after the cancelled turn's end ({_kind(late[0])})"
        ctx.fail(after_case, AFTER_CANCEL, detail, late[0], needs_model=True)
    else:
        ctx.add(after_case, "passed", detail=f"nothing within {AFTER_TURN:g} s", needs_model=True)


async def _cancel_once(ctx: Context, probe: Probe) -> TurnEnd | str | None:
    """One long turn, cancelled at its first content; None if it may have ended first."""
    assert ctx.session_id is not None
    session_id = ctx.session_id
    turn = start_turn(ctx, probe, text_prompt(ctx.options.long_prompt))
    started = await probe.wait_for(
        lambda: turn.task.done() or bool(_content(probe, session_id, turn.mark)),
        ctx.options.turn_timeout,
    )
    if turn.task.done():
        end = turn.task.result()
        return None if isinstance(end, TurnEnd) else end
    if not started:
        turn.task.cancel()
        return f"no update within {ctx.options.turn_timeout:g} s"
    cancel_at = len(probe.lines)
    await probe.notify("session/cancel", {"sessionId": session_id})
    sent = next((line.at for line in probe.lines[cancel_at:] if line.direction == "send"), 0.0)
    done, _ = await asyncio.wait({turn.task}, timeout=CANCEL_BOUND)
    if not done:
        turn.task.cancel()
        return f"the turn did not end within {CANCEL_BOUND:g} s of the cancel"
    end = turn.task.result()
    if isinstance(end, TurnEnd) and end.stop_reason != "cancelled" and end.line is not None:
        between = _content(probe, session_id, cancel_at + 1)
        between = [u for u in between if probe.lines.index(u) < end.after]
        if not between and end.line.at - sent < RACE:
            return None
    return end


def _content(probe: Probe, session_id: str, since: int) -> list[Line]:
    return [u for u in probe.updates(session_id, since) if _kind(u) in _CONTENT]


def _valid_stop(ctx: Context, reason: Any) -> bool:
    if reason in STOP_REASONS:
        return True
    return ctx.version >= 2 and isinstance(reason, str) and reason.startswith("_")


async def _turn(ctx: Context, probe: Probe, prompt: list[dict[str, Any]]) -> TurnEnd | str:
    """Run one turn: how it ended, or why it did not."""
    assert ctx.session_id is not None
    session_id = ctx.session_id
    params = {"sessionId": session_id, "prompt": prompt}
    timeout = ctx.options.turn_timeout
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
    if line is None:
        return f"{PROMPT_ACCEPTED.text} (no response)"

    def idle() -> int | None:
        for index in range(mark, len(probe.lines)):
            update = _update(probe.lines[index])
            if (
                _session(probe.lines[index]) == session_id
                and update.get("sessionUpdate") == "state_update"
                and update.get("state") == "idle"
            ):
                return index
        return None

    if not await probe.wait_for(lambda: idle() is not None, timeout):
        return f"no idle state_update within {timeout:g} s"
    index = idle()
    assert index is not None
    return TurnEnd(_update(probe.lines[index]).get("stopReason"), index + 1, probe.lines[index])


def _update(line: Line) -> dict[str, Any]:
    msg = as_dict(line.msg)
    if line.direction != "recv" or msg.get("method") != "session/update":
        return {}
    return as_dict(as_dict(msg.get("params")).get("update"))


def _session(line: Line) -> Any:
    return as_dict(as_dict(line.msg).get("params")).get("sessionId")


def _kind(line: Line) -> Any:
    return _update(line).get("sessionUpdate")


def late_content(probe: Probe, session_id: str, end: int) -> list[Line]:
    return [u for u in probe.updates(session_id, end) if _kind(u) in _CONTENT]


def tool_call_ids(lines: list[Line]) -> set[str]:
    return {
        str(_update(u).get("toolCallId"))
        for u in lines
        if _kind(u) in ("tool_call", "tool_call_update") and _update(u).get("toolCallId")
    }


def agent_text(lines: list[Line]) -> str:
    parts = []
    for line in lines:
        update = _update(line)
        content = update.get("content")
        if update.get("sessionUpdate") == "agent_message_chunk" and isinstance(content, dict):
            parts.append(str(content.get("text", "")))
    return "".join(parts)
