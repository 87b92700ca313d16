"""An ACP v1 agent that starts a session, then dies on the first prompt with a word on stderr."""

import json
import sys


def answer(request: dict, result: dict) -> None:
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)


for line in sys.stdin:
    message = json.loads(line)
    if message["method"] == "initialize":
        answer(message, {"protocolVersion": 1})
    elif message["method"] == "session/new":
        answer(message, {"sessionId": "s"})
    else:
        print("model backend exploded", file=sys.stderr)
        sys.exit(3)
