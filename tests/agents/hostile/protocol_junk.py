"""Breaks JSON-RPC every way it can in the middle of a turn, between the chunks of a good
answer, then answers the prompt twice.

Each entry of `JUNK` is (what it is, the line, the error code the client owes, or None when
no answer is due). acp-tui must answer exactly those, record every line, and go on.
"""

import json

from _acp import SESSION_ID, Peer


def line(message: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":"))


def chunk(text: str) -> dict:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


PERMISSION = {
    "toolCall": {"toolCallId": "call-x", "title": "rm -rf /"},
    "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}],
}
JUNK: list[tuple[str, str, int | None]] = [
    ("invalid JSON", '{"jsonrpc":"2.0","method":"session/update","params":', -32700),
    ("not JSON-RPC, with an id", line({"id": "j1", "method": 42}), -32600),
    ("response to an unknown id", line({"id": 999, "result": {}}), None),
    ("error for an unknown id", line({"id": "nope", "error": {"code": 1, "message": "x"}}), None),
    (
        "a notification with an id",
        line(
            {
                "id": "j2",
                "method": "session/update",
                "params": {"sessionId": SESSION_ID, "update": chunk("[should not show]")},
            }
        ),
        -32601,
    ),
    ("unknown method", line({"id": "j3", "method": "weird/method"}), -32601),
    ("unknown extension", line({"id": "j4", "method": "_hostile/probe", "params": {}}), -32601),
    (
        "permission params of the wrong type",
        line({"id": "j5", "method": "session/request_permission", "params": "oops"}),
        -32602,
    ),
    (
        "fs params of the wrong type",
        line({"id": "j6", "method": "fs/read_text_file", "params": {"sessionId": 5}}),
        -32602,
    ),
    (
        "permission for an unknown session",
        line(
            {
                "id": "j7",
                "method": "session/request_permission",
                "params": {"sessionId": "ghost", **PERMISSION},
            }
        ),
        -32602,
    ),
    (
        "an update for an unknown session",
        line(
            {
                "method": "session/update",
                "params": {"sessionId": "ghost", "update": chunk("[ghost]")},
            }
        ),
        None,
    ),
    (
        "update params of the wrong type",
        line({"method": "session/update", "params": [1, 2]}),
        None,
    ),
    (
        "an update kind from the future",
        line(
            {
                "method": "session/update",
                "params": {"sessionId": SESSION_ID, "update": {"sessionUpdate": "hologram"}},
            }
        ),
        None,
    ),
    (
        "a content block of the wrong type",
        line(
            {
                "method": "session/update",
                "params": {
                    "sessionId": SESSION_ID,
                    "update": {"sessionUpdate": "agent_message_chunk", "content": "bare"},
                },
            }
        ),
        None,
    ),
    (
        "a tool call with a field of the wrong type",
        line(
            {
                "method": "session/update",
                "params": {
                    "sessionId": SESSION_ID,
                    "update": {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "call-bad-status",
                        "title": "Odd status",
                        "status": 5,
                    },
                },
            }
        ),
        None,
    ),
    ("an unknown notification", line({"method": "_hostile/ping", "params": {}}), None),
]


def main() -> None:
    peer = Peer()
    while True:
        message = peer.read()
        assert message is not None
        if message.get("method") == "session/new":
            peer.serve_setup(message)
            peer.serve_setup(message)  # a duplicate response
            continue
        if peer.serve_setup(message):
            continue
        if message.get("method") == "session/prompt":
            break
    prompt = message
    peer.update(chunk("before the junk, "))
    for _what, junk, _code in JUNK:
        peer.write_line(junk)
    peer.update(chunk("after the junk"))
    peer.answer(prompt, {"stopReason": "end_turn"})
    peer.answer(prompt, {"stopReason": "end_turn"})  # a duplicate response
    peer.serve(lambda request: peer.answer(request, {"stopReason": "end_turn"}))


if __name__ == "__main__":
    main()
