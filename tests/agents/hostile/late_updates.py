"""Sends updates that belong to no running turn, over two turns:

- turn 1 streams message `m1` and tool call `t1`, answers `end_turn`, then at once appends to
  `m1` and updates tool call `t-ghost`, which never existed;
- turn 2 first appends to `m1` and fails `t1` (both of the old turn), streams `m2`, answers
  `end_turn`, then appends to `m2` and updates `t-ghost-2` after the end.
"""

from _acp import Peer

peer = Peer()


def tool(call_id: str, status: str, kind: str = "tool_call_update") -> dict:
    return {"sessionUpdate": kind, "toolCallId": call_id, "status": status}


prompt = peer.wait_for("session/prompt")
peer.say("first", "m1")
peer.update({**tool("t1", "completed", "tool_call"), "title": "Listing files"})
peer.answer(prompt, {"stopReason": "end_turn"})
peer.say(" (late)", "m1")
peer.update(tool("t-ghost", "completed"))

prompt = peer.wait_for("session/prompt")
peer.say(" (from an old turn)", "m1")
peer.update(tool("t1", "failed"))
peer.say("second", "m2")
peer.answer(prompt, {"stopReason": "end_turn"})
peer.say(" (after the end)", "m2")
peer.update(tool("t-ghost-2", "in_progress"))
peer.serve(lambda request: peer.answer(request, {"stopReason": "end_turn"}))
