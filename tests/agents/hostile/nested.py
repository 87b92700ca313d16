"""Sends JSON nested argv[1] levels deep, which no recursive parser reads: a `tool_call`
whose `rawInput` is that deep, a bare deep array, a deep request. Then a tool call nested a
sane 100 levels, a message, and `end_turn`."""

import sys

from _acp import SESSION_ID, Peer

DEPTH = int(sys.argv[1])


def deep(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def tool_call(call_id: str, raw_input: str) -> str:
    return (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + SESSION_ID + '",'
        '"update":{"sessionUpdate":"tool_call","toolCallId":"' + call_id + '","title":"Deep",'
        '"rawInput":' + raw_input + "}}}"
    )


peer = Peer()
prompt = peer.wait_for("session/prompt")
peer.write_line(tool_call("too-deep", deep(DEPTH)))
peer.write_line("[" * DEPTH + "]" * DEPTH)
peer.write_line(
    '{"jsonrpc":"2.0","id":"deep","method":"_hostile/deep","params":' + deep(DEPTH) + "}"
)
peer.write_line(tool_call("deep-enough", deep(100)))
peer.say("still streaming")
peer.answer(prompt, {"stopReason": "end_turn"})
peer.serve(lambda request: peer.answer(request, {"stopReason": "end_turn"}))
