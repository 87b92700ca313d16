"""Never answers what argv[1] names.

- `initialize`: reads `initialize` and says nothing, ever (a login prompt on the wrong tty);
- `initialize-wrong-id`: answers `initialize`, but with an id acp-tui never used;
- `session-new`: answers `initialize`, then never answers `session/new`;
- `prompt`: never answers `session/prompt`, and sends nothing during the turn; it does honour
  `session/cancel`, answering the prompt `cancelled` (so cancel must work on a silent turn).
"""

import sys

from _acp import Peer

WHAT = sys.argv[1]
peer = Peer()

if WHAT.startswith("initialize"):
    request = peer.wait_for("initialize")
    if WHAT == "initialize-wrong-id":
        peer.answer({"id": 4242}, {"protocolVersion": 1, "agentCapabilities": {}})
    while True:
        peer.read()

if WHAT == "session-new":
    peer.serve_setup(peer.wait_for("initialize"))
    while True:
        peer.read()

prompt = peer.wait_for("session/prompt")
while True:
    message = peer.read()
    if message is not None and message.get("method") == "session/cancel":
        peer.answer(prompt, {"stopReason": "cancelled"})
