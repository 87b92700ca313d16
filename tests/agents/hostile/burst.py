"""Answers a prompt with argv[1] `agent_message_chunk` updates written in one burst, chunk i
saying `"{i} "`, then `end_turn`."""

import sys

from _acp import SESSION_ID, Peer

COUNT = int(sys.argv[1])
HEAD = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + SESSION_ID + '",'
    '"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"'
)
TAIL = ' "}}}}'


peer = Peer()
prompt = peer.wait_for("session/prompt")
peer.write_lines([f"{HEAD}{number}{TAIL}".encode() for number in range(COUNT)])
peer.answer(prompt, {"stopReason": "end_turn"})
peer.serve(lambda request: peer.answer(request, {"stopReason": "end_turn"}))
