"""Writes argv[1] megabytes to stderr during a turn, in 1 MB writes, before it answers.

A client that does not drain stderr leaves the agent blocked on a full pipe for ever; one that
keeps it all runs out of memory. The last stderr line is a word the user should see.
"""

import sys

from _acp import Peer, stderr

MEGABYTES = int(sys.argv[1])
BLOCK = ("log line of the flood " * 48 + "\n").encode() * 1024  # about 1 MB, in lines

peer = Peer()
prompt = peer.wait_for("session/prompt")
peer.say("Flooding stderr")
written = 0
while written < MEGABYTES * 1024 * 1024:
    sys.stderr.buffer.write(BLOCK)
    written += len(BLOCK)
sys.stderr.buffer.flush()
stderr("flood over")
peer.say(", and still here")
peer.answer(prompt, {"stopReason": "end_turn"})
peer.serve(lambda request: peer.answer(request, {"stopReason": "end_turn"}))
