"""A stand-in ACP v1 agent for `acp-tui check`: it keeps every rule the checker holds agents
to, except the one flaw named by its argument (`FLAWS`, each with what it does wrong).

It knows the checker's prompts by their words: "essay" (the long turn: a chunk every 20 ms
until cancelled, 500 at most), "Create a file" (a write it asks permission for), a
`resource_link` block, anything else a two-chunk answer. Standard library only.
"""

import json
import os
import select
import sys
import time

FLAWS = {
    "none": "keeps every rule",
    "init-silent": "never answers initialize",
    "echo-version": "answers initialize with whatever version it is offered",
    "bad-auth-ok": "signs in with a method id it never offered",
    "no-session-id": "answers session/new without a sessionId",
    "set-mode-fails": "refuses session/set_mode",
    "config-no-options": "answers session/set_config_option without configOptions",
    "unknown-method-ok": "answers a method it does not know with a result",
    "extension-ok": "answers an unknown _ extension method with a result",
    "params-internal": "answers invalid params with -32603",
    "answers-notifications": "answers an unknown notification with an error",
    "unknown-session-ok": "takes a prompt for a session it does not know",
    "bad-stop-reason": 'ends a turn with the stop reason "done"',
    "late-updates": "sends a chunk after answering an ordinary turn",
    "no-resource-link": "refuses a prompt with a resource_link",
    "deaf-to-cancel": "streams on after a cancel, then ends end_turn",
    "late-after-cancel": "sends a chunk after answering a cancelled turn",
    "allowed-not-run": "never reports an allowed tool call running",
    "runs-rejected": "completes a tool call it was refused",
    "cancel-permission-end-turn": "ends end_turn a turn cancelled while it asked permission",
    "list-broken": "answers session/list without sessions",
    "load-no-replay": "loads a session without replaying it",
    "resume-replays": "replays the conversation on session/resume",
    "close-fails": "refuses session/close",
    "delete-unknown-fails": "refuses to delete a session it does not know",
    "parse-silent": "says nothing to a line that is not JSON",
    "bad-update": "sends an update outside any turn that the schema does not allow",
    "stdout-noise": "writes a line that is no JSON-RPC message to stdout",
    "permission-first": "asks permission about a tool call before reporting it",
    "unannounced-update": "sends a tool_call_update for a call it never announced",
    "uses-fs": "calls fs/read_text_file, which the client did not advertise",
    "uses-terminal": "calls terminal/create, which the client did not advertise",
    "no-exit": "keeps running when its stdin closes",
}
FLAW = sys.argv[1] if __name__ == "__main__" and len(sys.argv) > 1 else "none"
assert FLAW in FLAWS, FLAW
SESSION = "standin-session"
_buffer = b""
_pending: list[dict] = []
_next_id = 0
_history: list[dict] = []
"""This session's updates, for session/load (the log file makes it outlive the process)."""
_LOG = os.path.join(os.getcwd(), ".standin-history.json")


def write(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def read(timeout: float | None = None, kept: bool = True) -> dict | None:
    """The next message, those kept for later first unless `kept` is false (None: none
    within `timeout`); a line that is not JSON is answered -32700. Exits at the end of input."""
    global _buffer
    if kept and _pending:
        return _pending.pop(0)
    while True:
        while b"\n" not in _buffer:
            ready, _, _ = select.select([sys.stdin], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(sys.stdin.fileno(), 1 << 16)
            if not chunk:
                if FLAW == "no-exit":
                    while True:
                        time.sleep(1)
                sys.exit(0)
            _buffer += chunk
        line, _buffer = _buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError:
            if FLAW != "parse-silent":
                write({"id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        if isinstance(message, dict):
            return message


def answer(request: dict, result: object) -> None:
    write({"id": request["id"], "result": result})


def fail(request: dict, code: int, message: str) -> None:
    write({"id": request["id"], "error": {"code": code, "message": message}})


def update(body: dict, keep: bool = True) -> None:
    if keep:
        _history.append(body)
    write({"method": "session/update", "params": {"sessionId": SESSION, "update": body}})


def say(text: str) -> None:
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def ask(method: str, params: dict) -> dict | None:
    """A request of ours, and the client's answer (what else comes meanwhile is kept)."""
    global _next_id
    request_id = _next_id
    _next_id += 1
    write({"id": request_id, "method": method, "params": params})
    while True:
        message = read(30, kept=False)
        if message is None:
            return None
        if "method" not in message and message.get("id") == request_id:
            return message
        _pending.append(message)


def cancelled_within(seconds: float) -> bool:
    """Whether a session/cancel arrives within `seconds` (other messages are kept)."""
    for message in _pending:
        if message.get("method") == "session/cancel":
            _pending.remove(message)
            return True
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        message = read(left, kept=False)
        if message is None:
            return False
        if message.get("method") == "session/cancel":
            return True
        _pending.append(message)
    return False


def session_state() -> dict:
    return {
        "modes": {
            "currentModeId": "ask",
            "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
        },
        "configOptions": [
            {
                "id": "model",
                "name": "Model",
                "type": "select",
                "currentValue": "small",
                "options": [{"value": "small", "name": "Small"}, {"value": "big", "name": "Big"}],
            }
        ],
    }


def initialize(request: dict) -> None:
    if FLAW == "init-silent":
        return
    offered = request.get("params", {}).get("protocolVersion")
    answer(
        request,
        {
            "protocolVersion": offered if FLAW == "echo-version" else 1,
            "agentCapabilities": {
                "loadSession": True,
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
            },
            "agentInfo": {"name": "check-standin", "version": FLAW},
            "authMethods": [{"id": "agent-login", "name": "Agent login"}],
        },
    )
    if FLAW == "stdout-noise":
        sys.stdout.write("starting up...\n")
        sys.stdout.flush()


def new_session(request: dict) -> None:
    cwd = request.get("params", {}).get("cwd")
    if not isinstance(cwd, str):
        code = -32603 if FLAW == "params-internal" else -32602
        fail(request, code, "Invalid params: cwd must be a string")
        return
    answer(request, {} if FLAW == "no-session-id" else {"sessionId": SESSION, **session_state()})
    if FLAW == "bad-update":
        update({"sessionUpdate": "available_commands_update", "availableCommands": 7}, False)


def end_turn(request: dict, reason: str) -> None:
    answer(request, {"stopReason": reason})
    _save()


def _save() -> None:
    with open(_LOG, "w") as file:
        json.dump(_history, file)


def prompt(request: dict) -> None:
    params = request.get("params", {})
    if params.get("sessionId") != SESSION:
        if FLAW == "unknown-session-ok":
            end_turn(request, "end_turn")
        else:
            fail(request, -32002, "Unknown session")
        return
    blocks = params.get("prompt") or []
    text = " ".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    _history.append(
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}
    )
    if any(isinstance(b, dict) and b.get("type") == "resource_link" for b in blocks):
        if FLAW == "no-resource-link":
            fail(request, -32602, "resource_link not supported")
            return
        say("# A scratch workspace")
        end_turn(request, "end_turn")
    elif "essay" in text:
        long_turn(request)
    elif "Create a file" in text:
        tool_turn(request)
    else:
        say("Hel")
        say("lo")
        end_turn(request, "done" if FLAW == "bad-stop-reason" else "end_turn")
        if FLAW == "late-updates":
            say(" (one more thing)")


def long_turn(request: dict) -> None:
    for number in range(500):
        say(f"word{number} ")
        if cancelled_within(0.02):
            if FLAW == "deaf-to-cancel":
                for more in range(3):
                    say(f"more{more} ")
                end_turn(request, "end_turn")
                return
            end_turn(request, "cancelled")
            if FLAW == "late-after-cancel":
                say(" (one more thing)")
            return
    end_turn(request, "end_turn")


_calls = 0


def tool_turn(request: dict) -> None:
    global _calls
    _calls += 1
    call = {"toolCallId": f"write-{_calls}", "title": "Write acp-tui-check.txt", "kind": "edit"}
    if FLAW == "uses-fs":
        ask("fs/read_text_file", {"sessionId": SESSION, "path": "/etc/hostname"})
    if FLAW == "uses-terminal":
        ask("terminal/create", {"sessionId": SESSION, "command": "true"})
    if FLAW == "unannounced-update":
        update({"sessionUpdate": "tool_call_update", "toolCallId": "ghost", "status": "completed"})
    if FLAW != "permission-first":
        update({"sessionUpdate": "tool_call", **call, "status": "pending"})
    options = [
        {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
        {"optionId": "no", "name": "No", "kind": "reject_once"},
    ]
    params = {"sessionId": SESSION, "toolCall": call, "options": options}
    reply = ask("session/request_permission", params) or {}
    if FLAW == "permission-first":
        update({"sessionUpdate": "tool_call", **call, "status": "pending"})
    outcome = (reply.get("result") or {}).get("outcome") or {}
    cancelled = outcome.get("outcome") == "cancelled"
    # A cancel comes with (just before) the cancelled answer: take it now.
    got_cancel = cancelled and cancelled_within(5)
    if cancelled or got_cancel:
        if FLAW != "cancel-permission-end-turn":
            update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call["toolCallId"],
                    "status": "failed",
                }
            )
        end_turn(request, "end_turn" if FLAW == "cancel-permission-end-turn" else "cancelled")
        return
    allowed = outcome.get("optionId") == "yes"
    if (allowed and FLAW != "allowed-not-run") or (not allowed and FLAW == "runs-rejected"):
        update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call["toolCallId"],
                "status": "in_progress",
            }
        )
        update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call["toolCallId"],
                "status": "completed",
            }
        )
    elif not allowed:
        update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call["toolCallId"],
                "status": "failed",
            }
        )
    end_turn(request, "end_turn")


def load(request: dict) -> None:
    if FLAW != "load-no-replay" and os.path.exists(_LOG):
        with open(_LOG) as file:
            for body in json.load(file):
                update(body, False)
    answer(request, session_state())


def serve(message: dict) -> None:
    method = message.get("method")
    params = message.get("params") or {}
    handlers = {
        "initialize": initialize,
        "session/new": new_session,
        "session/prompt": prompt,
        "session/load": load,
    }
    if method in handlers:
        handlers[method](message)
    elif "id" not in message:
        if method not in ("session/cancel",) and FLAW == "answers-notifications":
            write({"id": None, "error": {"code": -32601, "message": f"Method not found: {method}"}})
    elif method == "authenticate":
        if params.get("methodId") == "agent-login" or FLAW == "bad-auth-ok":
            answer(message, {})
        else:
            fail(message, -32602, "Unknown auth method")
    elif method == "session/set_mode":
        if FLAW == "set-mode-fails":
            fail(message, -32603, "Internal error")
        else:
            answer(message, {})
    elif method == "session/set_config_option":
        state = session_state()
        state["configOptions"][0]["currentValue"] = params.get("value")
        answer(
            message,
            {} if FLAW == "config-no-options" else {"configOptions": state["configOptions"]},
        )
    elif method == "session/list":
        sessions = [{"sessionId": SESSION, "cwd": os.getcwd()}]
        answer(message, {} if FLAW == "list-broken" else {"sessions": sessions})
    elif method == "session/resume":
        if FLAW == "resume-replays":
            for body in _history:
                update(body, False)
        answer(message, {})
    elif method == "session/close":
        if FLAW == "close-fails":
            fail(message, -32603, "Internal error")
        else:
            answer(message, {})
    elif method == "session/delete":
        if params.get("sessionId") != SESSION and FLAW == "delete-unknown-fails":
            fail(message, -32002, "Unknown session")
        else:
            answer(message, {})
    elif ("extension-ok" if str(method).startswith("_") else "unknown-method-ok") == FLAW:
        answer(message, {})
    else:
        fail(message, -32601, f"Method not found: {method}")


if __name__ == "__main__":
    while True:
        incoming = read()
        if incoming is not None and "method" in incoming:
            serve(incoming)
