"""Writes files and runs commands through the client without asking permission first, as the
prompt says, one step per line of it:

    write NAME TEXT      fs/write_text_file of NAME (in the session's cwd, or an absolute
                         path), outside any tool call; `\\n` in TEXT is a newline
    run SHELL LINE       terminal/create of the line, outside any tool call; waits for its exit
    asked-write NAME TEXT   asks first about a tool call of kind edit (offering allow once,
                         allow for this session, reject) and, allowed, writes NAME in it, as
                         Gemini CLI does

Each step's outcome is said in the answer ("write NAME: ok" or "write NAME: refused: ..."),
and the turn ends `end_turn`.
"""

from __future__ import annotations

import os
from typing import Any

from _acp import SESSION_ID, Peer

peer = Peer()
calls = 0


def outcome(answer: dict[str, Any] | None) -> str:
    if answer is None:
        return "no answer"
    if "error" in answer:
        return f"refused: {answer['error'].get('message')}"
    return "ok"


def write(cwd: str, name: str, text: str) -> str:
    path = name if os.path.isabs(name) else os.path.join(cwd, name)
    params = {"sessionId": SESSION_ID, "path": path, "content": text}
    return outcome(peer.wait_for_answer(peer.request("fs/write_text_file", params)))


def run(cwd: str, line: str) -> str:
    params = {"sessionId": SESSION_ID, "command": line, "cwd": cwd}
    answer = peer.wait_for_answer(peer.request("terminal/create", params))
    said = outcome(answer)
    if said == "ok" and answer is not None:
        terminal = {"sessionId": SESSION_ID, "terminalId": answer["result"]["terminalId"]}
        exited = peer.wait_for_answer(peer.request("terminal/wait_for_exit", terminal))
        status = (exited or {}).get("result", {}).get("exitCode")
        peer.wait_for_answer(peer.request("terminal/release", terminal))
        said = f"ok, exit {status}"
    return said


def asked_write(cwd: str, name: str, text: str) -> str:
    global calls
    calls += 1
    call_id = f"edit-{calls}"
    peer.update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": call_id,
            "title": f"Write {name}",
            "kind": "edit",
            "status": "pending",
        }
    )
    options = [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "always", "name": "Allow for this session", "kind": "allow_always"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ]
    asked = peer.request(
        "session/request_permission",
        {"sessionId": SESSION_ID, "toolCall": {"toolCallId": call_id}, "options": options},
    )
    answer = peer.wait_for_answer(asked, timeout=60) or {}
    chosen = (answer.get("result") or {}).get("outcome", {}).get("optionId")
    if chosen not in ("yes", "always"):
        failed = {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "failed"}
        peer.update(failed)
        return f"not allowed ({chosen})"
    said = write(cwd, name, text)
    status = "completed" if said == "ok" else "failed"
    peer.update({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status})
    return said


def on_prompt(request: dict[str, Any]) -> None:
    cwd = sessions_cwd
    text = "".join(block.get("text", "") for block in request["params"]["prompt"])
    said = []
    for step in text.splitlines():
        verb, _, rest = step.strip().partition(" ")
        if verb == "write":
            name, _, content = rest.partition(" ")
            content = content.replace("\\n", "\n")
            said.append(f"write {name}: {write(cwd, name, content)}")
        elif verb == "run":
            said.append(f"run {rest}: {run(cwd, rest)}")
        elif verb == "asked-write":
            name, _, content = rest.partition(" ")
            said.append(f"{verb} {name}: {asked_write(cwd, name, content)}")
    peer.say("\n".join(said) or "nothing to do")
    peer.answer(request, {"stopReason": "end_turn"})


new = peer.wait_for("session/new")
sessions_cwd = new["params"]["cwd"]
peer.serve_setup(new)
peer.serve(on_prompt)
