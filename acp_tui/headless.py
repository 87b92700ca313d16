"""Headless mode: run prompt turns against an agent from a script, print what happens.

`text` prints the agent's message text as it streams; `jsonl` prints one JSON object per state
change. Exit status: 0 when every turn ended `end_turn`, 130 when the user cancelled, and
otherwise non-zero with a one-line reason on stderr.
"""

from __future__ import annotations

import asyncio
import io
import os
import select
import shlex
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import msgspec

from acp_tui.checkpoints.checkpointer import Checkpointer
from acp_tui.config import AgentConfig, AgentPolicy, load_policy
from acp_tui.conversation.mentions import prompt_blocks
from acp_tui.conversation.opening import NothingToResume, Opened, start_conversation
from acp_tui.conversation.sign_in import AuthFailed, AuthRequired, run_in_terminal
from acp_tui.protocol.content import (
    ContentBlock,
    ToolCallContent,
    ToolCallLocation,
    block_text,
)
from acp_tui.protocol.jsonrpc import ConnectionClosed, RpcError
from acp_tui.records import RecordStore
from acp_tui.services.permissions import PermissionPolicy, PermissionRulesError
from acp_tui.session.client import AgentClient
from acp_tui.session.elicitation import PendingElicitation
from acp_tui.session.handshake import ProtocolMismatch
from acp_tui.session.options import ClientOptions
from acp_tui.session.reducer import Change
from acp_tui.session.session import PendingPermission, Session
from acp_tui.session.state import (
    Message,
    Notice,
    PlanState,
    SessionState,
    TerminalState,
    ToolCallState,
)
from acp_tui.transport.launcher import LaunchError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_REFUSED = 3
EXIT_LIMIT = 4
EXIT_OTHER_STOP = 5
EXIT_CANCELLED = 130
CANCEL_GRACE = 10.0
"""Seconds an agent gets to confirm a cancel before acp-tui stops waiting and stops it."""

_TERMINATING = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end a headless run at once, the agent shut down first."""

_STOP_EXITS = {
    "end_turn": EXIT_OK,
    "cancelled": EXIT_CANCELLED,
    "refusal": EXIT_REFUSED,
    "max_tokens": EXIT_LIMIT,
    "max_turn_requests": EXIT_LIMIT,
}


class HeadlessOptions(msgspec.Struct):
    prompts: list[str]
    output_format: str = "text"
    permission: str = "ask"
    elicitation: str = "off"
    """Whether the agent may ask questions (`elicitation/create`), and how they are answered:
    off (not advertised: nobody is there to answer), decline or cancel."""
    auth: str | None = None
    mode: str | None = None
    model: str | None = None
    cancel_grace: float = CANCEL_GRACE
    agent: AgentConfig | None = None
    """The configured agent being run: its name files the record and the remembered sign-in;
    its rules, mode and model apply. None: an unnamed agent (the command line is its name)."""
    resume: str | None = None
    """Continue a session: its id (or a prefix), "" for the most recent one; None: a new one."""
    fork: bool = False
    """Go on in a fork of the `resume` session (`session/fork`), which stays as it was."""
    record: bool = True
    """Keep a local record of the conversation (see `acp_tui.records`)."""
    checkpoints: Checkpointer | None = None
    """What checkpoints the workspace around each turn (see `acp_tui.checkpoints`), made by
    the caller so that the first turn's can begin as the agent starts; None: no checkpoints."""
    out: TextIO = msgspec.field(default_factory=lambda: sys.stdout)
    err: TextIO = msgspec.field(default_factory=lambda: sys.stderr)


class Failure(Exception):
    """A reason to stop, with the exit status it calls for."""

    def __init__(self, reason: str, status: int = EXIT_FAILED) -> None:
        super().__init__(reason)
        self.status = status


class Output:
    """Where the printers write. What is written in one go of the event loop (a read's worth
    of updates, a flood's) goes out in one write, at the end of it: one system call per burst
    instead of one per change. When the reader goes away (`acp-tui -p … | head`), writing
    stops quietly and `on_closed` runs, once: the run ends as a program killed by SIGPIPE.

    jsonl's JSON comes encoded from msgspec (`write_bytes`), or as events to encode a burst
    at a time, in one call for all of them (`write_event`: only for events nothing changes
    after, as they are encoded later); text (`write`) is encoded a burst at a time too."""

    def __init__(self, stream: TextIO, on_closed: Callable[[], None]) -> None:
        self._stream = stream
        self._on_closed = on_closed
        self._pending: list[bytes] = []
        self._text: list[str] = []
        """Text written since the last event, encoded when an event follows or at the flush."""
        self._events: list[Any] = []
        """Events written since the last text, encoded when text follows or at the flush."""
        self._encode_lines = msgspec.json.Encoder().encode_lines
        self.closed = False

    def write(self, text: str) -> None:
        if self.closed:
            return
        if self._events:
            self._encode_events()
        elif not (self._text or self._pending):
            asyncio.get_running_loop().call_soon(self.flush)
        self._text.append(text)

    def write_event(self, event: Any) -> None:
        """An object msgspec encodes as JSON, on a line of its own, encoded later: nothing in
        it may change meanwhile."""
        if self.closed:
            return
        if self._text:
            self._encode_text()
        elif not (self._events or self._pending):
            asyncio.get_running_loop().call_soon(self.flush)
        self._events.append(event)

    def write_bytes(self, data: bytes) -> None:
        if self.closed:
            return
        if self._text:
            self._encode_text()
        elif self._events:
            self._encode_events()
        elif not self._pending:
            asyncio.get_running_loop().call_soon(self.flush)
        self._pending.append(data)

    def _encode_text(self) -> None:
        stream = self._stream
        text = "".join(self._text)
        self._text.clear()
        self._pending.append(text.encode(stream.encoding or "utf-8", stream.errors or "strict"))

    def _encode_events(self) -> None:
        # Taken first: an event that fails to encode must not fail every later flush too.
        events, self._events = self._events, []
        self._pending.append(self._encode_lines(events))

    def flush(self) -> None:
        """Write out what is pending now (a warning is about to go to stderr, or the end)."""
        if self._text:
            self._encode_text()
        elif self._events:
            self._encode_events()
        if not self._pending or self.closed:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        try:
            _write_all(self._stream, data)
        except BrokenPipeError:
            self.closed = True
            _discard_output(self._stream)
            self._on_closed()


def _write_all(stream: TextIO, data: bytes) -> None:
    """Write `data` whole. An unbuffered stdout (`python -u`, PYTHONUNBUFFERED) hands a write
    to one system call, which a signal can cut short on a pipe, and `TextIOWrapper` drops the
    rest: so its raw file is written until all of it is out."""
    stream.flush()
    raw = getattr(stream, "buffer", None)
    if not isinstance(raw, io.RawIOBase | io.BufferedIOBase):  # a text-only stream
        stream.write(data.decode(stream.encoding or "utf-8", stream.errors or "strict"))
        stream.flush()
        return
    if isinstance(raw, io.BufferedIOBase):
        raw.write(data)
        raw.flush()
        return
    view = memoryview(data)
    while view:
        written = raw.write(view)
        if written is None:  # a non-blocking file, full: wait until it takes more
            select.select([], [raw], [])
            continue
        view = view[written:]


def _discard_output(stream: TextIO) -> None:
    """Point `stream`'s file at /dev/null, so that Python's own flush at exit does not fail
    on the closed pipe too."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


class TextPrinter:
    """Streams the agent's message text to `out`, a blank line between messages."""

    def __init__(self, out: Output) -> None:
        self._out = out
        self._printed: dict[str, int] = {}
        self._last: str | None = None
        self._at_line_start = True

    def __call__(self, session: Session, change: Change) -> None:
        message = change.item
        if change.kind != "message" or message.role != "agent":
            return
        done = self._printed.get(message.id, 0)
        text = block_text(change.delta) if change.delta is not None else message.text[done:]
        if not text:
            return
        if self._last not in (None, message.id):
            self._write("\n" if self._at_line_start else "\n\n")
        self._last = message.id
        self._printed[message.id] = done + len(text)
        self._write(text)

    def end_turn(self) -> None:
        if not self._at_line_start:
            self._write("\n")
        self._last = None

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._at_line_start = text.endswith("\n")


class JsonPrinter:
    """One JSON object per state change, on its own line."""

    def __init__(self, out: Output) -> None:
        self._out = out
        self._encode = msgspec.json.Encoder().encode
        self._tool_calls = ToolCallEvents()
        self._terminals = TerminalEvents()

    def __call__(self, session: Session, change: Change) -> None:
        """Events are encoded at the end of the burst (`Output.write_event`): so each holds
        tuples, not the state's lists, which a later change of the burst may add to."""
        item = change.item
        cls = item.__class__
        if cls is Message and change.delta is not None:  # most changes: a chunk streamed in
            kind = "thought" if item.role == "thought" else "message"
            self._out.write_event(_Appended(kind, item.id, item.role, change.delta))
            return
        if cls is ToolCallState:
            event: dict[str, Any] | None = self._tool_calls(item)
        elif cls is TerminalState:
            event = self._terminals(item, change.delta)
        elif change.kind == "config":  # an option's value is set in place: encoded now
            event = change_event(session, change)
            if event is not None:
                self.emit(event)
            return
        else:
            event = change_event(session, change)
        if event is not None:
            self._out.write_event(event)

    def emit(self, event: dict[str, Any]) -> None:
        """Print `event`, encoded now."""
        self._out.write_bytes(self._encode(event) + b"\n")


class _Appended(msgspec.Struct, gc=False):
    """The event of content streamed onto a message: `{"type": "message" or "thought", "id",
    "role", "append": the block}`, a struct because it is most of a turn's events."""

    type: str
    id: str
    role: str
    append: ContentBlock


class ToolCallEvents:
    """The jsonl events of tool calls. The first about a call has all of it; each later one
    only what changed since the one before (a content item added: `append`), as messages
    have: a status update does not print the call's diffs again, so the output grows with
    what the agent sent, not with the updates times the call's size."""

    def __init__(self) -> None:
        self._shown: dict[ToolCallState, _Shown] = {}

    def __call__(self, call: ToolCallState) -> dict[str, Any]:
        shown = self._shown.get(call)
        if shown is None:
            self._shown[call] = _Shown(
                call.title,
                call.kind,
                call.status,
                call.locations,
                len(call.locations),
                call.content,
                len(call.content),
                call.raw_input,
                call.raw_output,
            )
            return {
                "type": "tool_call",
                "id": call.id,
                "title": call.title,
                "kind": call.kind,
                "status": call.status,
                "locations": tuple(call.locations),
                "content": tuple(call.content),
                "rawInput": call.raw_input,
                "rawOutput": call.raw_output,
            }
        event: dict[str, Any] = {"type": "tool_call", "id": call.id}
        if call.title != shown.title:
            event["title"] = shown.title = call.title
        if call.kind != shown.kind:
            event["kind"] = shown.kind = call.kind
        if call.status != shown.status:
            event["status"] = shown.status = call.status
        # The reducer replaces a list it is sent, and appends to the one it has
        # (`tool_call_content_chunk`, a terminal named in `_meta`).
        if call.locations is not shown.locations or len(call.locations) != shown.location_count:
            shown.locations = call.locations
            event["locations"] = tuple(call.locations)
            shown.location_count = len(call.locations)
        content = call.content
        if content is not shown.content or len(content) != shown.content_count:
            appended = content is shown.content and len(content) == shown.content_count + 1
            if appended:
                event["append"] = content[-1]
            else:
                shown.content = content
                event["content"] = tuple(content)
            shown.content_count = len(content)
        # Raw values are replaced whole, each a fresh object from the wire.
        if call.raw_input is not shown.raw_input:
            event["rawInput"] = shown.raw_input = call.raw_input
        if call.raw_output is not shown.raw_output:
            event["rawOutput"] = shown.raw_output = call.raw_output
        return event


@dataclass(slots=True)
class _Shown:
    """What the events about a tool call have shown of it so far."""

    title: str
    kind: str
    status: str
    locations: list[ToolCallLocation]
    location_count: int
    content: list[ToolCallContent]
    content_count: int
    raw_input: Any
    raw_output: Any


class TerminalEvents:
    """The jsonl events of terminals, as `ToolCallEvents` for calls: the first about a terminal
    has all of it; each later one only what changed. Output streamed in is `append`; the whole
    `output` comes again only when the agent replaced it (v2's `terminal_update`); how the
    command ended (`exited`, `exitCode`, `signal`) comes once, when it does."""

    def __init__(self) -> None:
        self._shown: dict[TerminalState, _ShownTerminal] = {}

    def __call__(self, terminal: TerminalState, added: bytes | None) -> dict[str, Any]:
        shown = self._shown.get(terminal)
        if shown is None:
            self._shown[terminal] = _ShownTerminal(
                terminal.command, terminal.cwd, terminal.output, terminal.exited
            )
            return {
                "type": "terminal",
                "id": terminal.id,
                "command": terminal.command,
                "cwd": terminal.cwd,
                "output": _output_text(terminal.output),
                **_ending(terminal),
            }
        event: dict[str, Any] = {"type": "terminal", "id": terminal.id}
        if terminal.command != shown.command:
            event["command"] = shown.command = terminal.command
        if terminal.cwd != shown.cwd:
            event["cwd"] = shown.cwd = terminal.cwd
        if terminal.output is not shown.output:  # replaced whole
            event["output"] = _output_text(terminal.output)
            shown.output = terminal.output
        elif added is not None:
            event["append"] = _output_text(added)
        if terminal.exited != shown.exited:
            shown.exited = terminal.exited
            event |= _ending(terminal)
        return event


@dataclass(slots=True)
class _ShownTerminal:
    """What the events about a terminal have shown of it so far."""

    command: str | None
    cwd: str | None
    output: bytearray
    exited: bool


def _output_text(data: bytes | bytearray) -> str:
    return bytes(data).decode(errors="replace")


def _ending(terminal: TerminalState) -> dict[str, Any]:
    return {"exited": terminal.exited, "exitCode": terminal.exit_code, "signal": terminal.signal}


def change_event(session: Session, change: Change) -> dict[str, Any] | None:
    """The JSON object `jsonl` prints for one change (content streamed onto a message:
    `_Appended`; tool calls: `ToolCallEvents`; terminals: `TerminalEvents`)."""
    item = change.item
    if isinstance(item, Message):  # its content replaced
        kind = "thought" if item.role == "thought" else "message"
        return {"type": kind, "id": item.id, "role": item.role, "content": tuple(item.content)}
    if isinstance(item, PlanState):
        return {"type": "plan", "id": item.id, "entries": tuple(item.entries), "text": item.text}
    if isinstance(item, Notice):
        event = {
            "type": "notice",
            "severity": item.severity,
            "title": item.title,
            "detail": item.detail,
        }
        if item.key is not None:  # one the agent patches in place: a compaction
            event["id"] = item.key
        return event
    make = _SESSION_EVENTS.get(change.kind)
    return {"type": change.kind, **make(session.state)} if make is not None else None


_SESSION_EVENTS: dict[str, Callable[[SessionState], dict[str, Any]]] = {
    "usage": lambda state: {"used": state.usage_used, "size": state.usage_size, "cost": state.cost},
    "commands": lambda state: {"commands": tuple(state.commands)},
    "modes": lambda state: {"current": state.current_mode, "modes": tuple(state.modes)},
    "config": lambda state: {"options": state.config_options},
    "info": lambda state: {"title": state.title, "updatedAt": state.updated_at},
    "status": lambda state: (
        {"status": state.status, "stopReason": state.stop_reason}
        | (
            {"usage": state.turn_usage}
            if state.status == "idle" and state.turn_usage is not None
            else {}
        )
    ),
}
"""The events of changes to session-wide fields, by the change's kind."""


class HeadlessRun:
    def __init__(self, argv: list[str], client_options: ClientOptions, options: HeadlessOptions):
        self.options = options
        self.out = Output(options.out, self._output_closed)
        # Nobody is there to ask: "ask" rejects, and so does a rule that says to ask.
        mode = "reject" if options.permission == "ask" else options.permission
        self.agent = options.agent or AgentConfig(shlex.join(argv), argv, adhoc=True)
        self.policy_error: PermissionRulesError | None = None
        self.policy: PermissionPolicy
        try:
            self.policy = load_policy(mode, self.agent)  # type: ignore[arg-type]
        except PermissionRulesError as error:
            self.policy_error = error
            self.policy = AgentPolicy(mode, agent_rules=self.agent.rules)  # type: ignore[arg-type]
        self.refuse = PermissionPolicy("reject", path=self.policy.path)
        self.workspace = client_options.cwd
        self.checkpoints = options.checkpoints or Checkpointer(client_options.cwd, enabled=False)
        self.checkpoints.on_warning = self._warn
        out = self.out
        self.json = JsonPrinter(out) if options.output_format == "jsonl" else None
        self.text = TextPrinter(out) if self.json is None else None
        self.client = AgentClient(
            argv,
            client_options,
            decide_permission=self._decide_permission,
            decide_elicitation=None if options.elicitation == "off" else self._decide_elicitation,
            on_problem=self._warn,
        )
        self.session: Session | None = None
        self.store: RecordStore | None = None
        self.opened: Opened | None = None
        self.interrupted = False
        self._terminated: signal.Signals | None = None
        self._closing = False
        self._main: asyncio.Task[Any] | None = None
        self._cancelling: asyncio.Task[None] | None = None

    async def run(self) -> int:
        if self.policy_error is not None:
            self.options.err.write(f"acp-tui: {self.policy_error}\n")
            return EXIT_FAILED
        loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        loop.add_signal_handler(signal.SIGINT, self._interrupt)
        for sig in _TERMINATING:
            loop.add_signal_handler(sig, self._terminate, sig)
        try:
            return await self._run()
        except asyncio.CancelledError:
            if self._terminated == signal.SIGPIPE:
                return 128 + signal.SIGPIPE  # quietly, as `| head` expects of a program
            if self._terminated is not None:
                self._warn(f"stopped by {self._terminated.name}")
                return 128 + self._terminated
            self._warn("interrupted")
            return EXIT_CANCELLED
        except Failure as failure:
            if self.text is not None:
                self.text.end_turn()  # the reason goes on a line of its own
            self.out.flush()
            self.options.err.write(f"acp-tui: {failure}\n")
            return failure.status
        finally:
            # Signals stay caught until the agent (and every terminal it started) is gone:
            # a second one must not cut the shutdown short and leave them running.
            self._closing = True
            try:
                self.checkpoints.close()
                if self.opened is not None:
                    self.opened.close()
                await self.client.close()
            finally:
                if self.store is not None:
                    self.store.close()
                for sig in (signal.SIGINT, *_TERMINATING):
                    loop.remove_signal_handler(sig)
                self.out.flush()

    async def _run(self) -> int:
        session = await self._open()
        for prompt in self.options.prompts:
            try:
                stop_reason = await self._turn(session, prompt)
            except ConnectionClosed as error:
                raise Failure(error.message) from error
            except RpcError as error:
                raise Failure(f"the agent failed the prompt: {error.message}") from error
            if self.text is not None:
                self.text.end_turn()
            if stop_reason is None and self.client.exited.is_set():
                raise Failure(self.client.process.exit_description() if self.client.process else "")
            status = _STOP_EXITS.get(stop_reason or "", EXIT_OTHER_STOP)
            if self.interrupted or stop_reason == "cancelled":
                return EXIT_CANCELLED
            if status != EXIT_OK:
                raise Failure(f"the turn stopped: {stop_reason or 'no stop reason'}", status)
        return EXIT_OK

    async def _turn(self, session: Session, prompt: str) -> str | None:
        """One prompt turn, with a checkpoint of the workspace before and after it."""
        await self.checkpoints.before_turn(session, prompt)
        info = self.client.info
        content = prompt_blocks(
            prompt,
            self.workspace,
            embed=info.supports("embedded_context"),
            images=info.supports("image"),
        )
        for problem in content.problems:
            self._warn(problem)
        try:
            return await session.prompt(content.blocks)
        finally:
            # Not while being cancelled (a second Ctrl+C): that stops at once.
            task = asyncio.current_task()
            if task is None or not task.cancelling():
                changes = await self.checkpoints.after_turn(session)
                if changes is not None and changes.files and self.text is not None:
                    self._warn(
                        f"turn {changes.turn}: {changes.summary()} "
                        f"(acp-tui changes {session.id} --turn {changes.turn})"
                    )

    async def _open(self) -> Session:
        options, client, agent = self.options, self.client, self.agent
        if options.record:
            self.store = RecordStore.open(on_warning=self._warn)
        started = False
        try:
            await client.start()
            started = True
            opened = self.opened = await start_conversation(
                client,
                self.store,
                agent.name,
                resume=options.resume,
                fork=options.fork,
                auth=options.auth,
                run_terminal=self._run_terminal if sys.stdin and sys.stdin.isatty() else None,
                # The config's defaults, unless given on the command line (then strictly).
                mode=None if options.mode else agent.mode,
                model=None if options.model else agent.model,
            )
        except AuthRequired as error:
            methods = ", ".join(f"{c.id} ({c.type_label})" for c in error.choices)
            raise Failure(
                f"the agent requires sign-in; pass --auth with one of: {methods or 'none listed'}"
            ) from error
        except (LaunchError, ProtocolMismatch, AuthFailed, NothingToResume) as error:
            raise Failure(str(error)) from error
        except RpcError as error:
            what = (
                "open the session" if started and options.resume is not None else "start a session"
            )
            raise Failure(f"could not {what}: {error.message}") from error
        session = self.session = opened.session
        for message in [opened.notice, *opened.warnings]:
            if message:
                self._warn(message)
        session.listeners.append(self.json or self.text)  # type: ignore[arg-type]
        for category, value in (("mode", options.mode), ("model", options.model)):
            if value:
                await self._select(session, category, value)
        return session

    async def _run_terminal(self, argv: list[str], env: dict[str, str]) -> int:
        self._warn(f"signing in: running {' '.join(argv)}")
        return await asyncio.to_thread(run_in_terminal, argv, env, self.client.options.cwd)

    async def _select(self, session: Session, category: str, value: str) -> None:
        try:
            await session.select(category, value)
        except ValueError as error:
            raise Failure(str(error)) from error
        except RpcError as error:
            raise Failure(f"the agent refused {category} {value!r}: {error.message}") from error

    async def _decide_permission(self, pending: PendingPermission) -> None:
        kind = pending.tool_call.kind if pending.tool_call is not None else None
        decision = self.policy.decide(pending.request, kind, workspace=self.workspace)
        if decision.ask:
            refusal = self.refuse.decide(pending.request, kind)
            reason = f"{decision.reason}; no one to ask in headless mode: {refusal.reason}"
            decision = msgspec.structs.replace(refusal, reason=reason)
        pending.answer(decision.response())
        reason, option_id = decision.reason, decision.option_id
        event = {
            "type": "permission",
            "toolCallId": pending.tool_call_id,
            "optionId": option_id,
            "reason": reason,
        }
        if self.json is not None:
            self.json.emit(event)
        else:
            self._warn(
                f"permission for {pending.tool_call_id}: {option_id or 'cancelled'} ({reason})"
            )

    async def _decide_elicitation(self, pending: PendingElicitation) -> None:
        """Nobody is there to answer: the `--elicitation` policy does, and says so."""
        action = "cancel" if self.options.elicitation == "cancel" else "decline"
        pending.answer(action)
        request = pending.request
        if self.json is not None:
            event = {
                "type": "elicitation",
                "mode": request.mode,
                "message": request.message,
                "toolCallId": request.tool_call_id,
                "url": request.url,
                "fields": [f.name for f in pending.form.fields],
                "action": action,
            }
            self.json.emit({k: v for k, v in event.items() if v is not None})
        else:
            answered = {"decline": "declined", "cancel": "cancelled"}[action]
            self._warn(f"the agent asked {pending.about!r}: {answered} (--elicitation {action})")

    def _terminate(self, sig: signal.Signals) -> None:
        """SIGTERM or SIGHUP: stop now; `run` shuts the agent down and exits 128 + signal."""
        if self._closing or self._terminated is not None:
            return
        self._terminated = sig
        if self._main is not None:
            self._main.cancel()

    def _output_closed(self) -> None:
        """Nobody reads the output any more: stop the agent and end, as on SIGPIPE."""
        self._terminate(signal.SIGPIPE)

    def _interrupt(self) -> None:
        if self._closing:
            return
        session = self.session
        if self.interrupted or session is None or not session.busy:
            # A second Ctrl+C, or nothing to cancel: stop now.
            if self._main is not None:
                self._main.cancel()
            return
        self.interrupted = True
        loop = asyncio.get_running_loop()
        self._cancelling = loop.create_task(session.cancel())
        loop.call_later(self.options.cancel_grace, self._cancel_ignored, session)

    def _cancel_ignored(self, session: Session) -> None:
        if session.busy:
            grace = self.options.cancel_grace
            reason = f"the agent ignored the cancel for {grace:g} s; stopping it"
            session.abandon_turn(reason)
            self._warn(reason)

    def _warn(self, message: str) -> None:
        self.out.flush()  # what came before the warning is printed before it
        self.options.err.write(f"acp-tui: {message}\n")
        self.options.err.flush()


async def run_headless(
    argv: list[str], client_options: ClientOptions, options: HeadlessOptions
) -> int:
    return await HeadlessRun(argv, client_options, options).run()
