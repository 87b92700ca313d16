"""Starts a long command in a client terminal (`terminal/create`, a `sleep` that writes its
pid to `command.pid` in the workspace), shows it in a tool call, and never ends the turn: it
ignores `session/cancel`. It does leave when its input closes, as agents do."""

from _acp import SESSION_ID, Peer

peer = Peer()
new = peer.wait_for("session/new")
cwd = new["params"]["cwd"]
peer.serve_setup(new)
peer.wait_for("session/prompt")
created = peer.request(
    "terminal/create",
    {
        "sessionId": SESSION_ID,
        "command": "sh",
        "args": ["-c", "echo $$ > command.pid; exec sleep 60"],
        "cwd": cwd,
    },
)
answer = peer.wait_for_answer(created) or {}
terminal_id = (answer.get("result") or {}).get("terminalId")
peer.update(
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "long-1",
        "title": "sleep 60",
        "kind": "execute",
        "status": "in_progress",
        "content": [{"type": "terminal", "terminalId": terminal_id}],
    }
)
while True:
    peer.read()  # session/cancel included: ignored
