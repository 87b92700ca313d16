"""An ACP v1 agent that answers requests late and out of order, for start-up tests.

Each request is answered after a delay that shrinks with every request received, so answers to
requests that overlap arrive newest first; updates for a new session are sent before the answer
to `session/new` that names it (agents may do that). A prompt is answered with one chunk
repeating its text, then `end_turn`.
"""

import asyncio
import itertools
import json
import sys

_ids = itertools.count()


def write(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def update(session_id: str, update: dict) -> None:
    write({"method": "session/update", "params": {"sessionId": session_id, "update": update}})


async def answer(message: dict, delay: float) -> None:
    await asyncio.sleep(delay)
    method, params = message["method"], message.get("params") or {}
    result: dict
    if method == "initialize":
        result = {
            "protocolVersion": 1,
            "agentCapabilities": {},
            "agentInfo": {"name": "out-of-order", "version": "1"},
        }
    elif method == "session/new":
        session_id = f"sess-{next(_ids)}"
        commands = [{"name": "hello", "description": "say hello"}]
        update(
            session_id,
            {"sessionUpdate": "available_commands_update", "availableCommands": commands},
        )
        result = {"sessionId": session_id}
    elif method == "session/prompt":
        text = " ".join(b.get("text", "") for b in params.get("prompt", []))
        content = {"type": "text", "text": f"echo: {text}"}
        update(params["sessionId"], {"sessionUpdate": "agent_message_chunk", "content": content})
        result = {"stopReason": "end_turn"}
    else:
        result = {}
    write({"id": message["id"], "result": result})


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks = set()
    for received in itertools.count():
        line = await reader.readline()
        if not line:
            break
        message = json.loads(line)
        if "id" in message and "method" in message:
            task = asyncio.create_task(answer(message, max(0.05, 0.4 - 0.1 * received)))
            tasks.add(task)
            task.add_done_callback(tasks.discard)


asyncio.run(main())
