"""An ACP v1 agent that runs its prompt as a shell line, the way Claude Code's older adapter
(`@zed-industries/claude-code-acp`) and Kimi CLI do: `terminal/create` with the whole line as
`command` and no `args`. It shows the terminal in a tool call, waits for the command, and
answers with its exit code and output."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "hostile"))

from _acp import SESSION_ID, Peer


def on_prompt(prompt: dict) -> None:
    line = prompt["params"]["prompt"][0]["text"]
    created = peer.request("terminal/create", {"sessionId": SESSION_ID, "command": line})
    answer = peer.wait_for_answer(created) or {}
    if "error" in answer:
        peer.say(f"terminal/create failed: {answer['error']['message']}")
        peer.answer(prompt, {"stopReason": "end_turn"})
        return
    terminal = {"sessionId": SESSION_ID, "terminalId": answer["result"]["terminalId"]}
    peer.update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "shell-1",
            "title": line,
            "kind": "execute",
            "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": terminal["terminalId"]}],
        }
    )
    exited = peer.wait_for_answer(peer.request("terminal/wait_for_exit", terminal)) or {}
    output = peer.wait_for_answer(peer.request("terminal/output", terminal)) or {}
    peer.update(
        {"sessionUpdate": "tool_call_update", "toolCallId": "shell-1", "status": "completed"}
    )
    code = (exited.get("result") or {}).get("exitCode")
    peer.say(f"exit {code}: {(output.get('result') or {}).get('output', '')}")
    peer.answer(prompt, {"stopReason": "end_turn"})


peer = Peer()
peer.serve(on_prompt)
