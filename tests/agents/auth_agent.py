"""An ACP v1 agent that requires sign-in, for the auth tests. Standard library only.

Usage: auth_agent.py          serve ACP on stdin/stdout
       auth_agent.py --login  the "terminal" sign-in: succeeds when AUTH_AGENT_LOGIN=1

`initialize` lists three methods (the terminal one only to clients advertising
`auth.terminal`):
- `token` (agent): `authenticate` with it signs this process in; any other id is refused;
- `login` (terminal): run this program with `--login` and `AUTH_AGENT_LOGIN=1`; it leaves a
  marker file that signs every later process in;
- `api-key` (env var, the legacy kind): `AUTH_AGENT_KEY=secret` in the environment signs in.
`session/new` and `session/prompt` answer -32000 (authentication required) until signed in
(again, after a `logout`); a prompt is answered "signed in: TEXT". `logout` (advertised as
`agentCapabilities.auth.logout`) signs this process out and removes the marker. Every method
received is appended to `$AUTH_AGENT_HOME/calls.log` (`AUTH_AGENT_HOME` also holds the
marker; default: the working directory).
"""

import json
import os
import sys
from pathlib import Path

HOME = Path(os.environ.get("AUTH_AGENT_HOME") or os.getcwd())
MARKER = HOME / "logged-in"


def login() -> int:
    if os.environ.get("AUTH_AGENT_LOGIN") != "1":
        print("login: AUTH_AGENT_LOGIN is not set", file=sys.stderr)
        return 1
    MARKER.write_text("yes")
    print("Logged in.")
    return 0


def send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def methods(terminal: bool) -> list[dict]:
    listed = [
        {"id": "token", "name": "Token", "description": "Sign in with the agent's token"},
        {
            "id": "api-key",
            "type": "env_var",
            "name": "API key",
            "vars": [{"name": "AUTH_AGENT_KEY", "label": "your key"}],
            "link": "https://example.com/keys",
        },
    ]
    if terminal:
        listed.insert(
            1,
            {
                "id": "login",
                "type": "terminal",
                "name": "Log in",
                "description": "Log in in a terminal",
                "args": ["--login"],
                "env": {"AUTH_AGENT_LOGIN": "1"},
            },
        )
    return listed


def serve() -> None:
    signed_in = os.environ.get("AUTH_AGENT_KEY") == "secret" or MARKER.exists()
    sessions = 0
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, params, request_id = message.get("method"), message.get("params") or {}, None
        if "id" in message:
            request_id = message["id"]
        if method is None:
            continue
        with (HOME / "calls.log").open("a") as log:
            log.write(f"{method} {json.dumps(params.get('methodId'))}\n")
        if method == "initialize":
            caps = params.get("clientCapabilities") or {}
            terminal = (caps.get("auth") or {}).get("terminal") is True
            result = {
                "protocolVersion": 1,
                "agentCapabilities": {"auth": {"logout": {}}},
                "agentInfo": {"name": "auth-agent", "version": "1.0"},
                "authMethods": methods(terminal),
            }
            send({"id": request_id, "result": result})
        elif method == "authenticate":
            if params.get("methodId") == "token":
                signed_in = True
                send({"id": request_id, "result": {}})
            else:
                send({"id": request_id, "error": {"code": -32602, "message": "unknown method"}})
        elif method == "logout":
            signed_in = False
            MARKER.unlink(missing_ok=True)
            send({"id": request_id, "result": {}})
        elif method == "session/new":
            if not signed_in:
                error = {"code": -32000, "message": "Authentication required"}
                send({"id": request_id, "error": error})
                continue
            sessions += 1
            send({"id": request_id, "result": {"sessionId": f"auth-{os.getpid()}-{sessions}"}})
        elif method == "session/prompt" and not signed_in:
            error = {"code": -32000, "message": "Authentication required"}
            send({"id": request_id, "error": error})
        elif method == "session/prompt":
            text = "".join(b.get("text", "") for b in params.get("prompt", []))
            update = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": f"signed in: {text}"},
            }
            send(
                {
                    "method": "session/update",
                    "params": {"sessionId": params["sessionId"], "update": update},
                }
            )
            send({"id": request_id, "result": {"stopReason": "end_turn"}})
        elif request_id is not None:
            send({"id": request_id, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    if sys.argv[1:] == ["--login"]:
        sys.exit(login())
    serve()
