"""Keeps the rules `acp-tui check` holds agents to, except the one named by its argument.

    none               keeps them all
    echo-version       answers `initialize` with whatever version it is offered
    unknown-method-ok  answers a method it does not know with a result
    params-internal    answers invalid params with -32603 instead of -32602
    bad-stop-reason    ends a turn with the stop reason "done"
    late-updates       sends a message chunk after answering the turn's session/prompt
    deaf-to-cancel     ends a cancelled turn `end_turn`
    permission-first   asks permission about a tool call it has not reported yet
    uses-fs            calls fs/read_text_file, which the client did not advertise
    bad-update         sends a tool call whose status the schema does not know
    no-exit            keeps running when its stdin closes

A turn says "Hello" in two chunks, half a second apart, so that a cancel can land between them.
"""

import sys
import time

from _acp import SESSION_ID, Peer

FLAW = sys.argv[1] if len(sys.argv) > 1 else "none"
peer = Peer()
pending: list[dict] = []
"""Messages read while waiting for something else, handled next."""


def next_message() -> dict | None:
    if pending:
        return pending.pop(0)
    try:
        return peer.read()
    except SystemExit:
        if FLAW == "no-exit":
            while True:
                time.sleep(1)
        raise


def initialize(request: dict) -> None:
    offered = request.get("params", {}).get("protocolVersion")
    version = offered if FLAW == "echo-version" else 1
    peer.answer(
        request,
        {
            "protocolVersion": version,
            "agentCapabilities": {},
            "agentInfo": {"name": "flawed-agent", "version": FLAW},
            "authMethods": [],
        },
    )


def new_session(request: dict) -> None:
    cwd = request.get("params", {}).get("cwd")
    if not isinstance(cwd, str):
        code = -32603 if FLAW == "params-internal" else -32602
        peer.fail(request, code, "Invalid params: cwd must be a string")
        return
    peer.answer(request, {"sessionId": SESSION_ID})


def cancelled_within(seconds: float) -> bool:
    """Whether a session/cancel arrives within `seconds` (other messages are kept)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        message = peer.read(left)
        if message is None:
            return False
        if message.get("method") == "session/cancel":
            return True
        pending.append(message)
    return False


def ask(method: str, params: dict) -> None:
    """Send a request of ours and wait for its answer (keeping what else comes)."""
    request_id = peer.request(method, params)
    while True:
        message = peer.read(10)
        if message is None or ("method" not in message and message.get("id") == request_id):
            return
        pending.append(message)


def prompt(request: dict) -> None:
    call = {"toolCallId": "call-1", "title": "Look around", "kind": "read"}
    if FLAW == "permission-first":
        options = [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}]
        ask(
            "session/request_permission",
            {"sessionId": SESSION_ID, "toolCall": call, "options": options},
        )
    if FLAW == "uses-fs":
        ask("fs/read_text_file", {"sessionId": SESSION_ID, "path": "/etc/hostname"})
    status = "done" if FLAW == "bad-update" else "completed"
    peer.update({"sessionUpdate": "tool_call", **call, "status": status})
    peer.say("Hel")
    if cancelled_within(0.5):
        peer.answer(
            request, {"stopReason": "end_turn" if FLAW == "deaf-to-cancel" else "cancelled"}
        )
        return
    peer.say("lo")
    peer.answer(request, {"stopReason": "done" if FLAW == "bad-stop-reason" else "end_turn"})
    if FLAW == "late-updates":
        peer.say(" (one more thing)")


while True:
    message = next_message()
    if message is None:
        continue
    method = message.get("method")
    if method == "initialize":
        initialize(message)
    elif method == "session/new":
        new_session(message)
    elif method == "session/prompt":
        prompt(message)
    elif "id" in message and method is not None:
        if FLAW == "unknown-method-ok":
            peer.answer(message, {})
        else:
            peer.fail(message, -32601, f"Method not found: {method}")
