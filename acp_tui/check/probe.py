"""One agent process under test: a plain JSON-RPC peer that records everything.

A `Probe` starts the agent in the scratch workspace, speaks to it with acp-tui's own
`Connection`, and keeps every line both ways in order (`lines`). Every message the agent
writes is checked against the schema of the version under test as it arrives
(`violations`). What the agent asks of the client is answered the way a careful client would,
advertising nothing but permissions: a permission request is allowed once, a question is
declined, and `fs/*` / `terminal/*` (never advertised) are `-32601` and recorded as misuse.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from acp_tui.protocol import schema_check
from acp_tui.protocol.jsonrpc import method_not_found
from acp_tui.transport.connection import Connection
from acp_tui.transport.launcher import AgentProcess

_decode = msgspec.json.Decoder().decode


@dataclass(slots=True)
class Line:
    """One line of traffic: "send" (ours) or "recv" (the agent's), with when and what."""

    direction: str
    text: str
    at: float
    msg: Any = None


@dataclass(slots=True)
class Violation:
    """A message of the agent's that breaks the schema."""

    line: Line
    problem: str


@dataclass
class Probe:
    argv: list[str]
    cwd: Path
    version: int | None
    """The version whose schema checks the agent's messages as they come; None: no check
    (the agent has not said which version it speaks)."""
    env: dict[str, str] = field(default_factory=dict)
    lines: list[Line] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """What the connection could not take as a JSON-RPC message (noise on stdout, …)."""
    client_calls: list[Line] = field(default_factory=list)
    """The agent's requests for `fs/*` and `terminal/*`, which this client did not advertise."""
    permission_requests: list[tuple[Line, set[str]]] = field(default_factory=list)
    """Each permission request with the tool call ids announced before it arrived."""
    process: AgentProcess | None = None
    connection: Connection | None = None
    _reader: asyncio.Task[None] | None = None
    _sent_methods: dict[str, str] = field(default_factory=dict)
    _tool_calls: set[str] = field(default_factory=set)
    _unchecked: set[str] = field(default_factory=set)

    async def start(self) -> None:
        self.process = await AgentProcess.start(self.argv, self.cwd, env=self.env)
        self.connection = Connection(
            self.process.stdout,
            self.process.stdin,
            self,
            on_traffic=self._traffic,
            on_problem=self.problems.append,
        )
        self._reader = asyncio.ensure_future(self.connection.run())

    async def close(self) -> None:
        if self.process is not None:
            await self.process.close(grace=1.0)
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 2.0)

    # -- talking to the agent -----------------------------------------------------------------

    async def request(
        self, method: str, params: Any, timeout: float, *, checked: bool = True
    ) -> tuple[Any, Line | None]:
        """The result of `method` (raises `RpcError`, or `TimeoutError` after `timeout`), and
        the line that answered it. `checked=False`: a probe meant to fail (an unknown method,
        bad params), whose answer is judged by its case, not by the schema."""
        assert self.connection is not None
        mark = len(self.lines)
        if not checked:
            self._unchecked.add(method)
        try:
            raw = await asyncio.wait_for(self.connection.request(method, params), timeout)
        finally:
            self._unchecked.discard(method)
        return (_decode(bytes(raw)) if raw else None), self.answer_after(mark)

    async def notify(self, method: str, params: Any) -> None:
        assert self.connection is not None
        await self.connection.notify(method, params)

    def answer_after(self, mark: int) -> Line | None:
        """The first response the agent wrote after line `mark`."""
        for line in self.lines[mark:]:
            if line.direction == "recv" and isinstance(line.msg, dict) and "method" not in line.msg:
                return line
        return None

    def updates(self, session_id: str, since: int = 0) -> list[Line]:
        """The agent's `session/update`s for `session_id` from line `since` on."""
        return [
            line
            for line in self.lines[since:]
            if line.direction == "recv"
            and isinstance(line.msg, dict)
            and line.msg.get("method") == "session/update"
            and (line.msg.get("params") or {}).get("sessionId") == session_id
        ]

    async def exited_within(self, seconds: float) -> bool:
        assert self.process is not None
        try:
            await asyncio.wait_for(self.process.wait(), seconds)
        except TimeoutError:
            return False
        return True

    # -- what the agent asks of us ------------------------------------------------------------

    async def handle_request(self, method: str, params: msgspec.Raw) -> Any:
        if method == "session/request_permission":
            request = _decode(bytes(params)) if params else {}
            options = request.get("options") or []
            allow = next((o for o in options if o.get("kind") == "allow_once"), None)
            if allow is None:
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected", "optionId": allow.get("optionId")}}
        if method == "elicitation/create":
            return {"action": "decline"}
        raise method_not_found(method)

    def handle_notification(self, method: str, params: msgspec.Raw) -> None:
        """Notifications are only recorded (see `_traffic`)."""

    def _traffic(self, direction: str, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace").rstrip("\n")
        try:
            msg = _decode(raw)
        except (ValueError, RecursionError):
            msg = None
        line = Line(direction, text, time.monotonic(), msg)
        self.lines.append(line)
        if not isinstance(msg, dict):
            return
        if direction == "send":
            if "method" in msg and "id" in msg:
                self._sent_methods[json.dumps(msg["id"])] = msg["method"]
            return
        self._note(line, msg)
        if self.version is not None:
            self._validate(line, msg)

    def _note(self, line: Line, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if isinstance(method, str) and method.startswith(("fs/", "terminal/")):
            self.client_calls.append(line)
        if method == "session/request_permission":
            self.permission_requests.append((line, set(self._tool_calls)))
        if method == "session/update":
            update = (msg.get("params") or {}).get("update") or {}
            if update.get("sessionUpdate") == "tool_call" and update.get("toolCallId"):
                self._tool_calls.add(str(update["toolCallId"]))

    def _validate(self, line: Line, msg: dict[str, Any]) -> None:
        assert self.version is not None
        answered = None
        if "method" not in msg and "result" in msg:
            answered = self._sent_methods.get(json.dumps(msg.get("id")))
            if answered is None or answered in self._unchecked:
                return  # not ours (the connection reports it), or judged by its own case
        try:
            schema_check.validate_message(
                msg, version=self.version, sender="agent", request_method=answered
            )
        except schema_check.SchemaViolation as violation:
            self.violations.append(Violation(line, f"{violation.heading}: {violation.summary}"))
