"""A minimal ACP (v1) agent, standard library only, that answers every prompt with a flood.

Usage: flood_agent.py FLOOD
FLOOD holds the answer as the agent's own lines (`session/update` notifications, one a line, for
the session `SESSION`); each prompt is answered by writing them as fast as the pipe takes them,
then `end_turn`. Any other request is answered with an error, as an agent without it would.
"""

from __future__ import annotations

import json
import sys

SESSION = "flood-session"


def main() -> None:
    with open(sys.argv[1], "rb") as file:
        flood = file.read()
    out = sys.stdout.buffer

    def answer(request_id: object, result: dict[str, object]) -> None:
        out.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode())
        out.write(b"\n")
        out.flush()

    results: dict[str, dict[str, object]] = {
        "initialize": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
        "session/new": {"sessionId": SESSION},
    }
    for line in sys.stdin.buffer:
        request = json.loads(line)
        method, request_id = request.get("method"), request.get("id")
        if request_id is None or method is None:
            continue  # a notification (cancel) or a response: nothing to do
        if method == "session/prompt":
            out.write(flood)
            answer(request_id, {"stopReason": "end_turn"})
        elif method in results:
            answer(request_id, results[method])
        else:
            error = {"code": -32601, "message": f"{method} is not in this bench agent"}
            out.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode())
            out.write(b"\n")
            out.flush()


if __name__ == "__main__":
    main()
