"""Answers a prompt with a response that is not JSON-RPC: its `error` is a bare string.

The answer came, so nothing more will: a client that only takes well-formed responses waits
for ever. It must fail the request, saying what was wrong.
"""

from _acp import Peer

peer = Peer()
prompt = peer.wait_for("session/prompt")
peer.say("Let me see")
peer.send({"id": prompt["id"], "error": "model overloaded"})
peer.serve(lambda request: peer.send({"id": request["id"], "error": "model overloaded"}))
