"""The demo agent's questions to the user: `elicitation/create` in form and URL mode.

`/ask` sends a form with a field of every kind the restricted schema has (text with a format,
a number, an integer, a boolean, single and multi-select enums with titles, defaults, required
fields) and says back what was answered. `/signin` asks the user to open a (pretend) sign-in
page, then says it is done with `elicitation/complete`. Both use only what the client
advertised in `clientCapabilities.elicitation`, and say so plainly when it did not.
"""

from __future__ import annotations

from typing import Any

import msgspec

from acp_tui.demo.turn import Cancelled, Turn, new_id

ASK_FORM: dict[str, Any] = {
    "type": "object",
    "title": "Set up a new project",
    "properties": {
        "name": {
            "type": "string",
            "title": "Project name",
            "description": "Lower-case letters, digits and dashes",
            "minLength": 2,
            "maxLength": 40,
            "pattern": "^[a-z0-9-]+$",
        },
        "language": {
            "type": "string",
            "title": "Language",
            "oneOf": [
                {"const": "python", "title": "Python", "description": "typed, with ruff"},
                {"const": "rust", "title": "Rust", "description": "cargo workspace"},
                {"const": "typescript", "title": "TypeScript", "description": "node 22"},
            ],
            "default": "python",
        },
        "extras": {
            "type": "array",
            "title": "Extras",
            "items": {
                "anyOf": [
                    {"const": "tests", "title": "Tests"},
                    {"const": "ci", "title": "CI workflow"},
                    {"const": "docs", "title": "Docs site"},
                ]
            },
            "default": ["tests"],
        },
        "line_length": {
            "type": "integer",
            "title": "Line length",
            "minimum": 60,
            "maximum": 160,
            "default": 100,
        },
        "strict": {"type": "boolean", "title": "Strict type checks", "default": True},
        "owner": {"type": "string", "title": "Owner's email", "format": "email"},
        "due": {"type": "string", "title": "First release", "format": "date"},
    },
    "required": ["name", "language"],
}

SIGN_IN_URL = "https://auth.example.com/device?code=DEMO-4821"


def elicitation_modes(capabilities: object) -> frozenset[str]:
    """The modes a client's capabilities advertise: present and not null, each on its own."""
    if not isinstance(capabilities, dict):
        return frozenset()
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, dict):
        return frozenset()
    return frozenset(mode for mode in ("form", "url") if isinstance(elicitation.get(mode), dict))


async def ask(turn: Turn, arg: str) -> None:
    if "form" not in turn.peer.elicitation:
        await turn.say(_unsupported("form"))
        return
    await turn.say("I have a few questions before I set anything up.\n\n")
    answer = await _elicit(
        turn,
        {
            "mode": "form",
            "message": "How should I set up the new project?",
            "requestedSchema": ASK_FORM,
        },
    )
    action = answer.get("action")
    if action == "accept":
        content = answer.get("content") or {}
        rows = "\n".join(
            f"| {spec['title']} | `{content[name]!r}` |"
            for name, spec in ASK_FORM["properties"].items()
            if name in content
        )
        await turn.say(
            "Thanks! Here is what you sent (as the agent receives it):\n\n"
            f"| Field | Value |\n| --- | --- |\n{rows}\n\n"
            "_Nothing is created: this is a demo._\n"
        )
    elif action == "decline":
        await turn.say("You declined, so I'll leave the project as it is.\n")
    else:
        await turn.say("The question was dismissed; nothing was changed.\n")


async def signin(turn: Turn, arg: str) -> None:
    if "url" not in turn.peer.elicitation:
        await turn.say(_unsupported("url"))
        return
    elicitation_id = new_id("signin")
    answer = await _elicit(
        turn,
        {
            "mode": "url",
            "elicitationId": elicitation_id,
            "url": SIGN_IN_URL,
            "message": "Sign in to the (pretend) example service to connect your account.",
        },
    )
    if answer.get("action") != "accept":
        await turn.say("Not signed in: you did not open the page.\n")
        return
    await turn.say("Waiting for the sign-in page to finish…\n\n")
    await turn.pause(1.5)
    await turn.peer.connection.notify("elicitation/complete", {"elicitationId": elicitation_id})
    await turn.say("Signed in (not really: nothing was sent anywhere). ✅\n")


async def _elicit(turn: Turn, params: dict[str, Any]) -> dict[str, Any]:
    """Ask, bound to this turn; a `cancel` answer ends the turn as cancelled (the client
    answers `cancel` when the user cancels the turn)."""
    request = turn.peer.connection.request(
        "elicitation/create", {"sessionId": turn.session.id, **params}
    )
    if turn.v2:
        await turn.state("requires_action")
    raw = await turn.race(request)
    await turn.resume_running()
    answer = msgspec.json.decode(raw) if raw else {}
    answer = answer if isinstance(answer, dict) else {}
    if answer.get("action") == "cancel" and turn.cancelled:
        raise Cancelled
    return answer


def _unsupported(mode: str) -> str:
    return (
        f"Your client does not advertise **{mode}** elicitation "
        f"(`clientCapabilities.elicitation.{mode}`), so I can't ask it anything that way.\n"
    )
