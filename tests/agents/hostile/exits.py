"""Exits with code 3 and a last word on stderr, at the moment argv[1] names.

- `before`: before reading anything (a missing API key, a bad install);
- `during`: on reading `initialize`, without answering it;
- `after`: right after answering `initialize`, before `session/new` can arrive;
- `mid-turn`: in the middle of a prompt turn, after streaming some text and starting a tool
  call, with a multi-line traceback on stderr (only its tail should reach the user).
"""

import sys

from _acp import Peer, stderr

WHEN = sys.argv[1]

if WHEN == "before":
    stderr("fatal: ANTHROPIC_API_KEY is not set")
    sys.exit(3)

peer = Peer()
initialize = peer.wait_for("initialize")
if WHEN == "during":
    stderr("fatal: cannot parse initialize")
    sys.exit(3)
peer.serve_setup(initialize)
if WHEN == "after":
    stderr("fatal: lost the model backend")
    sys.exit(3)

peer.wait_for("session/prompt")
peer.say("Working on it")
peer.update(
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "call-1",
        "title": "Reading files",
        "kind": "read",
        "status": "in_progress",
    }
)
for number in range(50):
    stderr(f"  frame {number}: in some_function")
stderr("Traceback (most recent call last):")
stderr("RuntimeError: model backend exploded")
sys.exit(3)
