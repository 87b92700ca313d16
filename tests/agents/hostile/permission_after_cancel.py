"""Asks for permission after the turn was cancelled: once while the cancel is in flight (the
turn not yet answered), once more after it answered the prompt `cancelled`.

A client must answer both `cancelled`, never `selected`, whatever its permission policy.
Each request offers only an allowing option, to tempt an auto-approver.
"""

from _acp import SESSION_ID, Peer

peer = Peer()
CALL = {"toolCallId": "call-1", "title": "Delete the build directory", "kind": "delete"}
OPTIONS = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]

prompt = peer.wait_for("session/prompt")
peer.update({"sessionUpdate": "tool_call", **CALL, "status": "pending"})
peer.wait_for("session/cancel")
asked = peer.request(
    "session/request_permission", {"sessionId": SESSION_ID, "toolCall": CALL, "options": OPTIONS}
)
peer.wait_for_answer(asked)
peer.answer(prompt, {"stopReason": "cancelled"})
peer.request(
    "session/request_permission", {"sessionId": SESSION_ID, "toolCall": CALL, "options": OPTIONS}
)
peer.serve(lambda request: peer.answer(request, {"stopReason": "end_turn"}))
