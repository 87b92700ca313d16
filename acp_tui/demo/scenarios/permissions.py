"""Scenarios that ask for permission (`permission`, `switch`), and `decide`, which the
file and terminal scenarios use before they act.
"""

from __future__ import annotations

from typing import Any

from acp_tui.demo import texts
from acp_tui.demo.turn import ALL_OPTIONS, ALLOWING, Turn
from acp_tui.demo.wire import MODES, text_block


async def permission(turn: Turn, arg: str) -> None:
    await turn.say(texts.PERMISSION_INTRO + "\n")
    call = await turn.tool(
        "Install the `left-pad` package (simulated)",
        "execute",
        raw_input={"command": "pip install left-pad"},
    )
    remembered = turn.session.always.get("permission")
    if remembered:
        choice = remembered
        await turn.say(f"_You answered **{remembered.replace('_', ' ')}** earlier._\n\n")
    else:
        choice = await turn.ask_permission(
            call,
            title="Install the left-pad package?",
            description="Nothing is really installed: this request just shows the four options.",
        )
        if choice in ("allow_always", "reject_always"):
            turn.session.always["permission"] = choice
        await turn.say(
            texts.PERMISSION_RESULT.get(choice, "I didn't understand that answer.") + "\n"
        )
    if choice in ALLOWING:
        await call.update(status="in_progress")
        await turn.pause(0.5)
        await call.update(status="completed", content=[text_block("Installed (not really).")])
    else:
        await call.update(status="cancelled", content=[text_block("Not installed.")])


async def switch(turn: Turn, arg: str) -> None:
    record = turn.record
    target = "code" if record.mode == "ask" else "ask"
    label = dict((mode, name) for mode, name, _ in MODES)[target]
    call = await turn.tool(f"Switch to {label} mode", "switch_mode", raw_input={"mode": target})
    choice = await turn.ask_permission(
        call,
        title=f"Let the agent switch to {label} mode?",
        options=[option for option in ALL_OPTIONS if option["kind"].endswith("_once")],
    )
    if choice in ALLOWING:
        record.mode = target
        await turn.session.announce_config(mode_changed=True)
        await call.update(status="completed")
        await turn.say(texts.SWITCH_DONE.format(mode=label))
    else:
        await call.update(status="cancelled")
        await turn.say(texts.SWITCH_REJECTED.format(mode=record.mode))


async def decide(turn: Turn, call: Any, action: str, **ask: Any) -> str:
    """Whether `action` may go ahead: a remembered "always" answer, code mode (which does not
    ask), or the user's answer to a permission request."""
    remembered = turn.session.always.get(action)
    if remembered:
        await turn.say(f"_(You chose **{remembered.replace('_', ' ')}** earlier.)_\n\n")
        return remembered
    if turn.record.mode == "code":
        await turn.say("_Code mode: going ahead without asking._\n\n")
        return "allow_once"
    if not turn.v2:
        ask.pop("command", None)
    choice = await turn.ask_permission(call, **ask)
    if choice in ("allow_always", "reject_always"):
        turn.session.always[action] = choice
    return choice
