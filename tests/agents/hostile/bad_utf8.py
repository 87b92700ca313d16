"""Writes bytes that are not UTF-8: inside the text of a message chunk, as a line of binary
garbage, and inside the params of a request (which must get an error with its id). Then a
clean chunk and `end_turn`."""

from _acp import SESSION_ID, Peer

peer = Peer()
prompt = peer.wait_for("session/prompt")
peer.write_line(
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s","update":'
    b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"caf\xe9 \xff|"}}}}'
    % SESSION_ID.encode()
)
peer.write_line(b"\x00\x01\x02\xff\xfe binary garbage \xc3\x28")
peer.write_line(
    b'{"jsonrpc":"2.0","id":"utf","method":"fs/read_text_file","params":'
    b'{"sessionId":"%s","path":"/tmp/\xff\xfe.txt"}}' % SESSION_ID.encode()
)
peer.say(" clean text")
peer.answer(prompt, {"stopReason": "end_turn"})
peer.serve(lambda request: peer.answer(request, {"stopReason": "end_turn"}))
