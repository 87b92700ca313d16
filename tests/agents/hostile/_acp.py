"""The plumbing every hostile agent shares: raw line I/O on stdio and a log of it both ways.

Standard library only, nothing from acp_tui: the agents test a client the way any agent would.
Each agent script imports this module from its own directory (`python path/to/agent.py` puts
that directory first on `sys.path`).

The log (`$HOSTILE_AGENT_LOG`, JSON Lines, appended and flushed line by line so it survives a
SIGKILL) is how a test learns what the agent sent and what it got back:
    {"dir": "pid", "pid": N}                   first, so a test can check the agent is gone
    {"dir": "sent" | "got", "len": N, "text": "<the line>" | null}
    {"dir": "sent-many", "texts": ["<line>", ...]}   a burst of short UTF-8 lines
`text` is the line decoded as UTF-8 (bad bytes replaced), or null for lines over `LOG_TEXT`
bytes (a test only needs their length).
"""

from __future__ import annotations

import json
import os
import select
import sys
from typing import Any

LOG_ENV = "HOSTILE_AGENT_LOG"
LOG_TEXT = 1 << 16
SESSION_ID = "hostile-session"


class Peer:
    """One agent's end of the wire: lines out, lines in, every one of them logged."""

    def __init__(self) -> None:
        path = os.environ.get(LOG_ENV)
        self._log = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
        self._buffer = b""
        self._stdin = sys.stdin.fileno()
        self._stdout = sys.stdout.buffer
        self.next_id = 0
        self._note({"dir": "pid", "pid": os.getpid()})

    # -- the log --------------------------------------------------------------------------

    def _note(self, entry: dict[str, Any]) -> None:
        if self._log is not None:
            self._log.write(json.dumps(entry) + "\n")
            self._log.flush()

    def _record(self, direction: str, line: bytes) -> None:
        text = line.decode("utf-8", errors="replace") if len(line) <= LOG_TEXT else None
        self._note({"dir": direction, "len": len(line), "text": text})

    # -- writing --------------------------------------------------------------------------

    def write_line(self, line: bytes | str) -> None:
        """Write one line exactly as given (it may be anything: a log line, broken JSON)."""
        data = line.encode() if isinstance(line, str) else line
        self._stdout.write(data + b"\n")
        self._stdout.flush()
        self._record("sent", data)

    def write_lines(self, lines: list[bytes]) -> None:
        """Write many lines in one go (a burst), and log them in one go too."""
        self._stdout.write(b"".join(line + b"\n" for line in lines))
        self._stdout.flush()
        self._note({"dir": "sent-many", "texts": [line.decode() for line in lines]})

    def send(self, message: dict[str, Any]) -> None:
        self.write_line(json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")))

    def answer(self, request: dict[str, Any], result: Any) -> None:
        self.send({"id": request.get("id"), "result": result})

    def fail(self, request: dict[str, Any], code: int, message: str) -> None:
        self.send({"id": request.get("id"), "error": {"code": code, "message": message}})

    def update(self, update: dict[str, Any], session_id: str = SESSION_ID) -> None:
        self.send(
            {"method": "session/update", "params": {"sessionId": session_id, "update": update}}
        )

    def say(self, text: str, message_id: str | None = None) -> None:
        update: dict[str, Any] = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }
        if message_id is not None:
            update["messageId"] = message_id
        self.update(update)

    def request(self, method: str, params: dict[str, Any]) -> int:
        """Send a request of our own; returns its id (answers come back through `read`)."""
        request_id = self.next_id
        self.next_id += 1
        self.send({"id": request_id, "method": method, "params": params})
        return request_id

    # -- reading --------------------------------------------------------------------------

    def read(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next JSON object from the client; None on timeout. Exits 0 at end of input,
        as agents do when the client closes their stdin."""
        while True:
            while b"\n" not in self._buffer:
                ready, _, _ = select.select([self._stdin], [], [], timeout)
                if not ready:
                    return None
                chunk = os.read(self._stdin, 1 << 16)
                if not chunk:
                    sys.exit(0)
                self._buffer += chunk
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._record("got", line)
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                return message

    def wait_for(self, method: str) -> dict[str, Any]:
        """Read until a message with this method arrives (answering `initialize` and
        `session/new` on the way, so a script can start at the turn)."""
        while True:
            message = self.read()
            assert message is not None
            if message.get("method") == method:
                return message
            self.serve_setup(message)

    def wait_for_answer(self, request_id: int, timeout: float = 10.0) -> dict[str, Any] | None:
        """The client's response to our request `request_id`, or None if none came in time."""
        while True:
            message = self.read(timeout)
            if message is None:
                return None
            if "method" not in message and message.get("id") == request_id:
                return message

    def serve_setup(self, message: dict[str, Any], capabilities: Any = None) -> bool:
        """Answer `initialize` and `session/new` as a plain v1 agent; True if it did."""
        method = message.get("method")
        if method == "initialize":
            self.answer(
                message,
                {
                    "protocolVersion": 1,
                    "agentCapabilities": capabilities or {},
                    "agentInfo": {"name": "hostile-agent", "version": "1"},
                    "authMethods": [],
                },
            )
            return True
        if method == "session/new":
            self.answer(message, {"sessionId": SESSION_ID})
            return True
        return False

    def serve(self, on_prompt: Any) -> None:
        """Serve setup requests and call `on_prompt(request)` for each `session/prompt`;
        other requests get -32601, notifications nothing."""
        while True:
            message = self.read()
            if message is None or self.serve_setup(message):
                continue
            if message.get("method") == "session/prompt":
                on_prompt(message)
            elif "method" in message and "id" in message:
                self.fail(message, -32601, f"Method not found: {message['method']}")


def stderr(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
