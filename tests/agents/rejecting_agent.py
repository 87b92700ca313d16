"""An ACP agent that asks before an edit the way Codex does, for turn-end and permission tests.

Usage: rejecting_agent.py [--v2]
A prompt containing `edit` starts two tool calls: a read left `in_progress` for good, and an
edit (`pending`) it asks permission for, with Codex's options (`Yes`, `Yes, always`,
`No, provide feedback`). Allowed, the edit completes and the turn ends `end_turn`; rejected or
cancelled, the turn ends `cancelled` and neither call is updated again (as Codex does). A
prompt containing `bare` asks for a permission with an inline tool call that has no card
before (title, kind, content, rawInput in the request alone). A prompt containing `die`
starts a call and exits. Any prompt is first echoed back as `echo: TEXT`. Speaks v1, or the
v2 draft (turn state in `state_update`) with `--v2`.
"""

import asyncio
import itertools
import json
import os
import sys
from typing import Any

V2 = "--v2" in sys.argv
_ids = itertools.count(1000)
_answers: dict[int, asyncio.Future[Any]] = {}
OPTIONS = [
    {"optionId": "approved", "name": "Yes", "kind": "allow_once"},
    {"optionId": "approved-for-session", "name": "Yes, always", "kind": "allow_always"},
    {"optionId": "abort", "name": "No, provide feedback", "kind": "reject_once"},
]


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def update(session_id: str, update: dict[str, Any]) -> None:
    write({"method": "session/update", "params": {"sessionId": session_id, "update": update}})


async def ask(session_id: str, tool_call: dict[str, Any], title: str) -> dict[str, Any]:
    """Send `session/request_permission` and wait for the client's outcome."""
    request_id = next(_ids)
    future = _answers[request_id] = asyncio.get_running_loop().create_future()
    params: dict[str, Any] = {"sessionId": session_id, "options": OPTIONS}
    if V2:
        params |= {"title": title, "subject": {"type": "tool_call", "toolCall": tool_call}}
    else:
        params["toolCall"] = tool_call
    write({"id": request_id, "method": "session/request_permission", "params": params})
    result = await future
    return result.get("outcome", {}) if isinstance(result, dict) else {}


async def turn(session_id: str, text: str) -> str:
    echo = {"type": "text", "text": f"echo: {text}"}
    update(session_id, {"sessionUpdate": "agent_message_chunk", "content": echo})
    if "die" in text:
        update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call-run",
                "title": "Run",
                "status": "in_progress",
            },
        )
        await asyncio.sleep(0.1)
        os._exit(3)
    if "bare" in text:
        inline = {
            "toolCallId": "call-bare",
            "title": "Delete build/",
            "kind": "delete",
            "content": [{"type": "content", "content": {"type": "text", "text": "12 files"}}],
            "rawInput": {"path": "build/", "recursive": True},
        }
        outcome = await ask(session_id, inline, "Delete build/?")
        return "end_turn" if outcome.get("optionId", "").startswith("approved") else "cancelled"
    if "edit" not in text:
        return "end_turn"
    read = {"toolCallId": "call-read", "title": "Read notes.txt", "kind": "read"}
    update(session_id, {"sessionUpdate": "tool_call", **read, "status": "in_progress"})
    edit = {
        "toolCallId": "call-edit",
        "title": "Edit hello.txt",
        "kind": "edit",
        "status": "pending",
        "locations": [{"path": "/ws/hello.txt", "line": 0}],
    }
    update(session_id, {"sessionUpdate": "tool_call", **edit})
    outcome = await ask(session_id, {"toolCallId": "call-edit"}, "Edit hello.txt?")
    if outcome.get("optionId", "").startswith("approved"):
        done = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-edit",
            "status": "completed",
        }
        update(session_id, done)
        return "end_turn"
    return "cancelled"


async def prompt(message: dict[str, Any]) -> None:
    params = message["params"]
    session_id = params["sessionId"]
    text = " ".join(block.get("text", "") for block in params.get("prompt", []))
    if V2:
        write({"id": message["id"], "result": {}})
        update(session_id, {"sessionUpdate": "state_update", "state": "running"})
    stop_reason = await turn(session_id, text)
    if V2:
        update(
            session_id,
            {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop_reason},
        )
    else:
        write({"id": message["id"], "result": {"stopReason": stop_reason}})


def answer(message: dict[str, Any]) -> None:
    method = message["method"]
    if method == "initialize":
        info = {"name": "rejecting-agent", "version": "1"}
        if V2:
            result: dict[str, Any] = {"protocolVersion": 2, "info": info, "capabilities": {}}
        else:
            result = {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": info}
    elif method == "session/new":
        result = {"sessionId": "sess-1"}
    else:
        result = {}
    write({"id": message["id"], "result": result})


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks = set()
    while line := await reader.readline():
        message = json.loads(line)
        if "method" not in message:  # an answer to our permission request
            future = _answers.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message.get("result"))
        elif message["method"] == "session/prompt":
            task = asyncio.create_task(prompt(message))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        elif "id" in message:
            answer(message)


asyncio.run(main())
