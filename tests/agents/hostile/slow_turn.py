"""Takes argv[1] seconds of silence before it answers a prompt (`end_turn`).

Longer than acp-tui's start-up timeout in the tests: a turn may legitimately run for a long
time, and nothing but the user may end it.
"""

import sys
import time

from _acp import Peer

peer = Peer()
prompt = peer.wait_for("session/prompt")
time.sleep(float(sys.argv[1]))
peer.say("done after a long think")
peer.answer(prompt, {"stopReason": "end_turn"})
peer.serve(lambda request: peer.answer(request, {"stopReason": "end_turn"}))
