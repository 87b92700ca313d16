"""Scenarios that end a turn another way: a stop reason other than `end_turn`, or an error."""

from __future__ import annotations

from acp_tui.demo import texts
from acp_tui.demo.turn import ScenarioError, Turn
from acp_tui.protocol.jsonrpc import INTERNAL_ERROR, RpcError

CUSTOM_STOP_REASON = "_demo_custom_stop"
V1_STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal"}


async def refuse(turn: Turn, arg: str) -> str:
    await turn.say(texts.REFUSAL)
    return "refusal"


async def stop(turn: Turn, arg: str) -> str:
    reason = arg.split()[0] if arg else "max_tokens"
    if reason.startswith("_") and not turn.v2:
        return await custom_stop(turn, arg)
    if reason not in V1_STOP_REASONS and not reason.startswith("_"):
        await turn.say(
            f"`{reason}` is not a stop reason I can use. Try `max_tokens`, "
            "`max_turn_requests`, `refusal` or (in v2) anything starting with `_`."
        )
        return "end_turn"
    await turn.say(f"Stopping with `{reason}`.")
    return reason


async def custom_stop(turn: Turn, arg: str) -> str:
    reason = arg.split()[0] if arg.startswith("_") else CUSTOM_STOP_REASON
    if not turn.v2:
        await turn.say(texts.V1_CUSTOM_STOP)
        turn.response_meta = {"acp-tui.demo/stopReason": reason}
        return "end_turn"
    await turn.say(texts.CUSTOM_STOP.format(reason=reason))
    return reason


async def error(turn: Turn, arg: str) -> None:
    await turn.say(texts.ERROR_PREAMBLE)
    raise ScenarioError(
        INTERNAL_ERROR,
        "The demo agent failed on purpose (the `error` scenario)",
        {"scenario": "error", "hint": "This is what a failed prompt looks like."},
    )


def error_before_accepting() -> RpcError:
    """v2's `error` scenario: the prompt is refused before it is accepted (once accepted, a v2
    turn can only end with a stop reason)."""
    return RpcError(
        INTERNAL_ERROR,
        "The demo agent refused to accept this prompt on purpose (the `error` scenario)",
        {"scenario": "error", "hint": "In ACP v2 a prompt fails before it is accepted."},
    )
