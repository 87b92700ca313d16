"""Asks for permission in ways that make no sense, one request per line of the prompt, and says
what came back ("dupes: error -32602 ...", "no-options: cancelled"):

    dupes        two options with one optionId, one to allow and one to reject
    no-call      a request about no tool call at all
    no-options   a request about a tool call, offering no option

The turn ends `end_turn`, whatever the answers.
"""

from __future__ import annotations

from typing import Any

from _acp import SESSION_ID, Peer

peer = Peer()

ALLOW = {"optionId": "ok", "name": "Allow", "kind": "allow_once"}
REJECT = {"optionId": "no", "name": "Reject", "kind": "reject_once"}
REQUESTS: dict[str, dict[str, Any]] = {
    "dupes": {
        "toolCall": {"toolCallId": "call-dupes", "title": "Delete everything", "kind": "delete"},
        "options": [ALLOW, {**REJECT, "optionId": "ok"}],
    },
    "no-call": {"options": [ALLOW, REJECT]},
    "no-options": {
        "toolCall": {"toolCallId": "call-bare", "title": "Do something", "kind": "edit"},
        "options": [],
    },
}


def ask(what: str) -> str:
    answer = peer.wait_for_answer(
        peer.request("session/request_permission", {"sessionId": SESSION_ID, **REQUESTS[what]}),
        timeout=60,
    )
    if answer is None:
        return "no answer"
    if "error" in answer:
        return f"error {answer['error']['code']} {answer['error']['message']}"
    outcome = answer["result"]["outcome"]
    return outcome.get("optionId") or outcome["outcome"]


def on_prompt(request: dict[str, Any]) -> None:
    text = "".join(block.get("text", "") for block in request["params"]["prompt"])
    said = [f"{what}: {ask(what)}" for what in text.split() if what in REQUESTS]
    peer.say("\n".join(said) or "nothing asked")
    peer.answer(request, {"stopReason": "end_turn"})


peer.serve(on_prompt)
