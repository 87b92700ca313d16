"""One agent process under test: a plain JSON-RPC peer that records everything.

A `Probe` starts the agent in the workspace, speaks to it with acp-tui's own `Connection`,
and keeps every line both ways in order (`lines`); `wait_for` wakes on each new one, so no
case sleeps for a guessed time. Every message the agent writes is checked against the schema
of the version under test as it arrives (`violations`). What the agent asks of the client is
answered the way a careful client would, advertising nothing but permissions: a permission
request as `permission` says (or held until a case answers it), a question declined, and
`fs/*` / `terminal/*` (never advertised) `-32601`, recorded as misuse. Every line also goes to
the run's `Tap` (`--transcript`, `--verbose`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import msgspec

from acp_tui.protocol import schema_check
from acp_tui.protocol.jsonrpc import method_not_found
from acp_tui.remote.client import RemoteAgent
from acp_tui.remote.target import RemoteTarget
from acp_tui.transport.connection import Connection
from acp_tui.transport.launcher import AgentProcess

_decode = msgspec.json.Decoder().decode
_VERBOSE_CHARS = 400

Answer = Literal["allow", "reject", "hold"]


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
class Tap:
    """Where every process's traffic goes besides its probe: a transcript file (JSON lines)
    and, with `--verbose`, stderr."""

    transcript: IO[str] | None = None
    verbose: bool = False

    def __call__(self, process: str, line: Line) -> None:
        if self.transcript is not None:
            entry = {"process": process, "dir": line.direction, "ts": line.at, "line": line.text}
            self.transcript.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self.transcript.flush()
        if self.verbose:
            arrow = "→" if line.direction == "send" else "←"
            text = line.text
            if len(text) > _VERBOSE_CHARS:
                text = text[:_VERBOSE_CHARS] + "…"
            print(f"  [{process}] {arrow} {text}", file=sys.stderr, flush=True)


@dataclass
class Probe:
    argv: list[str]
    cwd: Path
    version: int | None
    """The version whose schema checks the agent's messages as they come; None: no check
    (the agent has not said which version it speaks)."""
    env: dict[str, str] = field(default_factory=dict)
    name: str = "agent"
    """Which of the run's processes this is, in the transcript."""
    tap: Callable[[str, Line], None] | None = None
    remote: RemoteTarget | None = None
    """A remote agent, connected to instead of started (`argv` is then its URL)."""
    permission: Answer = "allow"
    """How permission requests are answered; "hold": left waiting in `held` for a case."""
    lines: list[Line] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """What the connection could not take as a JSON-RPC message (noise on stdout, …)."""
    client_calls: list[Line] = field(default_factory=list)
    """The agent's requests for `fs/*` and `terminal/*`, which this client did not advertise."""
    permission_requests: list[tuple[Line, set[str]]] = field(default_factory=list)
    """Each permission request with the tool call ids announced before it arrived."""
    unannounced: list[Line] = field(default_factory=list)
    """v1 `tool_call_update`s for ids no `tool_call` announced."""
    held: list[asyncio.Future[dict[str, Any]]] = field(default_factory=list)
    echoed: bool = False
    """Whether the agent wrote back a line we sent it, word for word (`cat` does)."""
    process: AgentProcess | RemoteAgent | None = None
    connection: Connection | None = None
    _reader: asyncio.Task[None] | None = None
    _sent_methods: dict[str, str] = field(default_factory=dict)
    _sent_texts: set[str] = field(default_factory=set)
    _tool_calls: set[str] = field(default_factory=set)
    _unchecked: set[str] = field(default_factory=set)
    _waiters: list[asyncio.Future[None]] = field(default_factory=list)

    async def start(self) -> None:
        if self.remote is not None:
            # A fresh connection, as a fresh process is: none of another's cookies.
            remote = msgspec.structs.replace(self.remote, cookies={})
            self.process = await RemoteAgent.connect(remote)
        else:
            self.process = await AgentProcess.start(self.argv, self.cwd, env=self.env)
        self.connection = Connection(
            self.process.stdout,
            self.process.stdin,
            self,
            on_traffic=self._traffic,
            on_problem=self.problems.append,
        )
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.connection is not None
        try:
            await self.connection.run()
        finally:
            self._wake()  # whoever waits for a line learns there will be none

    async def close(self) -> None:
        for future in self.held:
            if not future.done():
                future.set_result({"outcome": {"outcome": "cancelled"}})
        if self.process is not None:
            await self.process.close(grace=1.0)
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 2.0)

    @property
    def ended(self) -> bool:
        """Whether the agent closed its output (or died)."""
        return self._reader is not None and self._reader.done()

    def exit_description(self) -> str:
        return self.process.exit_description() if self.process is not None else "not started"

    # -- talking to the agent -----------------------------------------------------------------

    async def request(
        self, method: str, params: Any, timeout: float, *, checked: bool = True
    ) -> tuple[Any, Line | None]:
        """The result of `method` (raises `RpcError`, `ConnectionClosed` when the agent is
        gone, or `TimeoutError` after `timeout`), and the line that answered it.
        `checked=False`: a probe meant to fail (an unknown method, bad params), whose answer
        is judged by its case, not by the schema."""
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

    async def send_raw(self, text: str) -> None:
        """Write a line that is no JSON-RPC message (the robustness cases)."""
        assert self.process is not None
        self._record("send", text.encode())
        self.process.stdin.write(text.encode() + b"\n")
        await self.process.stdin.drain()

    async def wait_for(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Wait until `ready()` holds, checking it at each new line; False after `timeout`
        or once the agent's output ended with it still false."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not ready():
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0 or self.ended:
                return ready()
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter, left)
        return True

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
            if self.permission == "hold":
                future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
                self.held.append(future)
                self._wake()
                return await future
            kinds = ("allow_once", "allow_always")
            if self.permission == "reject":
                kinds = ("reject_once", "reject_always")
            options = [o for o in request.get("options") or [] if isinstance(o, dict)]
            chosen = next((o for kind in kinds for o in options if o.get("kind") == kind), None)
            if chosen is None:
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected", "optionId": chosen.get("optionId")}}
        if method == "elicitation/create":
            return {"action": "decline"}
        raise method_not_found(method)

    def handle_notification(self, method: str, params: msgspec.Raw) -> None:
        """Notifications are only recorded (see `_traffic`)."""

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _traffic(self, direction: str, raw: bytes | bytearray) -> None:
        self._record(direction, bytes(raw))

    def _record(self, direction: str, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace").rstrip("\n")
        try:
            msg = _decode(raw)
        except (ValueError, RecursionError):
            msg = None
        line = Line(direction, text, time.monotonic(), msg)
        self.lines.append(line)
        if self.tap is not None:
            self.tap(self.name, line)
        if direction == "send":
            self._sent_texts.add(text)
            if isinstance(msg, dict) and "method" in msg and "id" in msg:
                self._sent_methods[json.dumps(msg["id"])] = msg["method"]
        elif text in self._sent_texts:
            self.echoed = True
        elif isinstance(msg, dict):
            self._note(line, msg)
            if self.version is not None:
                self._validate(line, msg)
        self._wake()

    def _note(self, line: Line, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if isinstance(method, str) and method.startswith(("fs/", "terminal/")):
            self.client_calls.append(line)
        if method == "session/request_permission":
            self.permission_requests.append((line, set(self._tool_calls)))
        if method == "session/update":
            update = (msg.get("params") or {}).get("update") or {}
            kind = update.get("sessionUpdate") if isinstance(update, dict) else None
            call_id = update.get("toolCallId") if isinstance(update, dict) else None
            if kind == "tool_call" and call_id:
                self._tool_calls.add(str(call_id))
            # v1 announces a call with `tool_call`; v2's first update creates it.
            elif (
                kind == "tool_call_update"
                and self.version == 1
                and call_id
                and str(call_id) not in self._tool_calls
            ):
                self.unannounced.append(line)

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
