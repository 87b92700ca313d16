"""Crashes in the middle of its first turn in a workspace; started again there, it behaves and
can load that session (`loadSession`), replaying what it had said before the crash.

The workspace keeps its memory: `crash_once.state` holds the session's history. This is the
agent a "restart the agent and resume" path is tested against.
"""

import json
import os
import sys

from _acp import Peer, stderr

peer = Peer()
STATE = "crash_once.state"


def chunk(kind: str, text: str) -> dict:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


history: list[dict] = []
while True:
    message = peer.read()
    if message is None:
        continue
    method = message.get("method")
    if method == "initialize":
        peer.serve_setup(message, {"loadSession": True})
    elif method == "session/new":
        os.chdir(message["params"]["cwd"])
        peer.serve_setup(message)
    elif method == "session/load":
        os.chdir(message["params"]["cwd"])
        with open(STATE) as file:
            history = json.load(file)
        for update in history:
            peer.update(update, message["params"]["sessionId"])
        peer.answer(message, {})
    elif method == "session/prompt":
        text = "".join(b.get("text", "") for b in message["params"]["prompt"])
        history.append(chunk("user_message_chunk", text))
        if not os.path.exists(STATE):
            history.append(chunk("agent_message_chunk", "Half an answer"))
            with open(STATE, "w") as file:
                json.dump(history, file)
            peer.update(history[-1])
            stderr("panic: the model backend went away")
            sys.exit(70)
        history.append(chunk("agent_message_chunk", f"You said: {text}"))
        peer.update(history[-1])
        peer.answer(message, {"stopReason": "end_turn"})
    elif "id" in message and method is not None:
        peer.fail(message, -32601, f"Method not found: {method}")
