"""Sends a diff of argv[1] megabytes as one line: a `tool_call` whose `diff` content holds a
whole generated file, then a short message and `end_turn`."""

import sys

from _acp import SESSION_ID, Peer

MEGABYTES = float(sys.argv[1])
LINE = "+ an added line of the generated file\\n"  # JSON-escaped newline: still one line

peer = Peer()
prompt = peer.wait_for("session/prompt")
repeat = int(MEGABYTES * 1024 * 1024) // len(LINE) + 1
head = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + SESSION_ID + '",'
    '"update":{"sessionUpdate":"tool_call","toolCallId":"big-diff","title":"Regenerate big.txt",'
    '"kind":"edit","status":"completed","content":[{"type":"diff","path":"/tmp/big.txt",'
    '"oldText":null,"newText":"'
)
peer.write_line(head + LINE * repeat + '"}]}}}')
peer.say("Regenerated big.txt")
peer.answer(prompt, {"stopReason": "end_turn"})
peer.serve(lambda request: peer.answer(request, {"stopReason": "end_turn"}))
