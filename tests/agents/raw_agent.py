"""A misbehaving ACP agent for connection tests: it writes whatever lines a script says.

Usage: raw_agent.py SCRIPT.json RECEIVED.jsonl
SCRIPT is a JSON object: `{"start": [LINE, ...], "on": {METHOD: [LINE, ...]}}`. Each LINE is a
string written to stdout as it is (so it can be broken JSON), with `$ID` replaced by the id of
the request being answered. Every line the agent receives is appended to RECEIVED.
Requests whose method has no entry are answered with `{"echo": METHOD}`.
"""

import json
import sys
from typing import TextIO


def write(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    with open(sys.argv[1]) as file:
        script = json.load(file)
    with open(sys.argv[2], "a") as received:
        serve(script, received)


def serve(script: dict, received: TextIO) -> None:
    for line in script.get("start", []):
        write(line)
    for raw in sys.stdin:
        received.write(raw)
        received.flush()
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(message, dict) or "method" not in message:
            continue
        request_id = json.dumps(message.get("id"))
        lines = script.get("on", {}).get(message["method"])
        if lines is None:
            if "id" in message:
                write(
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "id": message["id"],
                            "result": {"echo": message["method"]},
                        }
                    )
                )
            continue
        for line in lines:
            write(line.replace("$ID", request_id))


if __name__ == "__main__":
    main()
