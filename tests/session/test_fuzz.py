"""Random and mutated ACP traffic through the connection and the reducer (hypothesis).

The strategies build `session/update` notifications of every kind `acp_tui/protocol/updates.py`
knows, in v1 and v2 shapes, from small pools of ids so that updates meet the same messages,
tool calls, plans and terminals; then mutate them (fields dropped, renamed, given the wrong
type, unknown kinds, broken envelopes, bytes that are no JSON or no UTF-8). Two paths:

- lines through a real `Connection` (an in-memory `StreamReader` fed in random pieces, a
  writer stub) into a real `AgentClient` and its session, with the agent's requests and
  answers to two requests of ours mixed in: no exception may escape `run()` (nor need its
  last-resort catch), every line must reach the inspector and the transcript, every line
  written back must be a JSON-RPC response, our requests must end answered or failed with
  an `RpcError`, and the state must stay consistent;
- notifications straight through `decode_session_notification` and `reducer.apply`, with the
  turn steps (`begin_turn`, `cancel_turn`, `end_turn`) in between.

Consistency (`check_state`): every timeline item is found by its id in its dict and each
appears in the timeline once, the dicts hold nothing the timeline does not, lists are lists of
the right type, the turn status is one of the four.
"""

from __future__ import annotations

import asyncio
import base64
import json
import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_tui.protocol import methods as m
from acp_tui.protocol.content import ContentBlock, ToolCallContent, ToolCallLocation
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.protocol.updates import (
    KNOWN_KINDS,
    AvailableCommand,
    ConfigOption,
    PlanEntry,
    decode_session_notification,
)
from acp_tui.session import reducer
from acp_tui.session.change import Change
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission, Session
from acp_tui.session.state import (
    Message,
    Notice,
    PlanState,
    SessionState,
    TerminalState,
    ToolCallState,
)
from acp_tui.transport.connection import Connection
from acp_tui.transport.transcript import Transcript

SESSION = "s"
FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""About 5 s per test on one core (nearly all of it hypothesis drawing): 500 runs of up to 12
lines through the connection, 700 sequences of up to 16 steps through the reducer (twice as
many took a tenth of the suite's time on two cores; each CI run draws new ones)."""
SLOW_MACHINE = pytest.mark.timeout(600)
"""CPU-bound, so their time grows with the machine's load: one went past the suite's 120 s at a
load of 15 (pytest-timeout then cut hypothesis short mid-draw)."""

# -- values -----------------------------------------------------------------------------------

text = st.text(max_size=8)
json_scalar = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)  # what JSON can say
    | text
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
message_ids = st.sampled_from(["m1", "m2", "m3", "u1"])
tool_ids = st.sampled_from(["t1", "t2", "t3"])
plan_ids = st.sampled_from(["p1", "p2", ""])
terminal_ids = st.sampled_from(["term-1", "term-2"])


def maybe(strategy: st.SearchStrategy[Any], *, null: bool = False) -> st.SearchStrategy[Any]:
    """A field's value, or `...` for "omitted" (and None for `null` where the shape allows)."""
    options = st.just(...) | strategy
    return options | st.none() if null else options


def obj(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A dict of the given fields, leaving out those drawn as `...`."""
    return st.fixed_dictionaries(fields).map(lambda d: {k: v for k, v in d.items() if v is not ...})


content_block = st.one_of(
    obj(type=st.just("text"), text=text),
    obj(type=st.just("image"), data=st.just("aGVsbG8="), mimeType=st.just("image/png")),
    obj(type=st.just("resource_link"), uri=st.just("file:///a.txt"), name=text),
    obj(type=st.just("resource"), resource=obj(uri=st.just("file:///b"), text=maybe(text))),
    obj(type=st.sampled_from(["audio", "_future"]), data=maybe(text), uri=maybe(text, null=True)),
)
tool_content = st.one_of(
    obj(type=st.just("content"), content=content_block),
    obj(
        type=st.just("diff"),
        path=st.just("/w/a.py"),
        oldText=maybe(text, null=True),
        newText=text,
    ),
    obj(type=st.just("diff"), changes=st.just([{"operation": "edit", "path": "/w/b.py"}])),
    obj(type=st.just("terminal"), terminalId=terminal_ids),
)
location = obj(path=st.just("/w/a.py"), line=maybe(st.integers(0, 99), null=True))
plan_entry = obj(
    content=text,
    priority=st.sampled_from(["high", "medium", "low"]),
    status=st.sampled_from(["pending", "in_progress", "completed", "_next"]),
)
statuses = st.sampled_from(["pending", "in_progress", "completed", "failed", "cancelled", "x"])
b64 = st.binary(max_size=20).map(lambda b: base64.b64encode(b).decode()) | text


def tool_fields() -> dict[str, st.SearchStrategy[Any]]:
    return {
        "toolCallId": tool_ids,
        "kind": maybe(st.sampled_from(["read", "edit", "execute", "other", "_new"]), null=True),
        "status": maybe(statuses, null=True),
        "content": maybe(st.lists(tool_content, max_size=3), null=True),
        "locations": maybe(st.lists(location, max_size=2), null=True),
        "rawInput": maybe(json_value),
        "rawOutput": maybe(json_scalar),
    }


def kind(name: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return obj(sessionUpdate=st.just(name), **fields)


UPDATES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    **{
        name: kind(name, content=content_block, messageId=maybe(message_ids, null=True))
        for name in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")
    },
    **{
        name: kind(
            name,
            messageId=message_ids,
            content=maybe(st.lists(content_block, max_size=3), null=True),
        )
        for name in ("user_message", "agent_message", "agent_thought")
    },
    "tool_call": kind("tool_call", title=text, **tool_fields()),
    "tool_call_update": kind("tool_call_update", title=maybe(text, null=True), **tool_fields()),
    "tool_call_content_chunk": kind(
        "tool_call_content_chunk", toolCallId=tool_ids, content=tool_content
    ),
    "plan": kind("plan", entries=st.lists(plan_entry, max_size=3)),
    "plan_update": kind(
        "plan_update",
        plan=st.one_of(
            obj(type=st.just("items"), planId=plan_ids, entries=st.lists(plan_entry, max_size=3)),
            obj(type=st.just("markdown"), planId=plan_ids, content=text),
            obj(type=st.just("file"), planId=plan_ids, uri=text),
            obj(type=st.just("_board"), id=maybe(plan_ids)),
        ),
    ),
    "plan_removed": kind("plan_removed", planId=plan_ids),
    "available_commands_update": kind(
        "available_commands_update",
        availableCommands=st.lists(
            obj(
                name=text,
                description=text,
                input=maybe(obj(hint=maybe(text), type=maybe(text)), null=True),
            ),
            max_size=3,
        ),
    ),
    "current_mode_update": kind(
        "current_mode_update", currentModeId=maybe(text), modeId=maybe(text)
    ),
    "config_option_update": kind(
        "config_option_update",
        configOptions=st.lists(
            obj(
                name=text,
                id=maybe(text),
                configId=maybe(text),
                type=maybe(st.sampled_from(["select", "boolean", "_slider"])),
                currentValue=maybe(json_value),
                options=maybe(st.lists(obj(name=text, value=maybe(text)), max_size=2)),
            ),
            max_size=2,
        ),
    ),
    "session_info_update": kind(
        "session_info_update", title=maybe(text, null=True), updatedAt=maybe(text, null=True)
    ),
    "usage_update": kind(
        "usage_update",
        used=st.integers(0, 10**6),
        size=st.integers(0, 10**6),
        cost=maybe(obj(amount=st.floats(0, 100), currency=st.just("USD")), null=True),
    ),
    "state_update": kind(
        "state_update",
        state=st.sampled_from(["running", "idle", "requires_action", "_paused"]),
        stopReason=maybe(st.sampled_from(["end_turn", "cancelled", "refusal"]), null=True),
        usage=maybe(
            obj(totalTokens=st.integers(0, 99), inputTokens=st.integers(0, 99)) | text, null=True
        ),
    ),
    "notice": kind(
        "notice",
        severity=st.sampled_from(["info", "warning", "error", "_custom"]),
        title=text,
        description=maybe(text, null=True),
    ),
    "compaction_update": kind(
        "compaction_update",
        compactionId=st.sampled_from(["c1", "c2"]),
        status=st.sampled_from(["in_progress", "completed", "failed", "cancelled", "_paused"]),
        summary=maybe(st.lists(content_block, max_size=2), null=True),
        error=maybe(text, null=True),
    ),
    "compaction_summary_chunk": kind(
        "compaction_summary_chunk",
        compactionId=st.sampled_from(["c1", "c2"]),
        content=content_block,
    ),
    "terminal_update": kind(
        "terminal_update",
        terminalId=terminal_ids,
        command=maybe(text, null=True),
        cwd=maybe(st.just("/w"), null=True),
        output=maybe(obj(data=b64), null=True),
        exitStatus=maybe(
            obj(exitCode=maybe(st.integers(0, 255), null=True), signal=maybe(text, null=True)),
            null=True,
        ),
    ),
    "terminal_output_chunk": kind("terminal_output_chunk", terminalId=terminal_ids, data=b64),
    "unknown": obj(sessionUpdate=text.filter(lambda k: k not in KNOWN_KINDS), extra=json_value),
}
assert set(UPDATES) - {"unknown"} == KNOWN_KINDS, "a new update kind needs a strategy here"


# -- mutations --------------------------------------------------------------------------------
# Strategies are built once, here: one built per draw costs hypothesis more than the draw.

any_update = st.one_of(*UPDATES.values())
mutations = st.sampled_from(["drop", "rename", "retype"])
suffixes = st.sampled_from(["_", "X", "s"])
indexes = st.sampled_from(range(64))
"""Hypothesis favours the first values of a range: the rare outcomes take the last ones."""
mutation_counts = st.sampled_from([0, 0, 0, 1, 2])
session_ids = st.sampled_from([SESSION, SESSION, "other"])


def mutate(draw: st.DrawFn, value: dict[str, Any]) -> dict[str, Any]:
    """`value` with one field dropped, renamed, or given a value of any type."""
    if not value:
        return value
    value = dict(value)
    key = sorted(value)[draw(indexes) % len(value)]
    how = draw(mutations)
    if how == "drop":
        del value[key]
    elif how == "rename":
        value[key + draw(suffixes)] = value.pop(key)
    else:
        value[key] = draw(json_value)
    return value


@st.composite
def updates(draw: st.DrawFn) -> dict[str, Any]:
    """One update: mostly well formed, sometimes mutated once or twice."""
    update = draw(any_update)
    for _ in range(draw(mutation_counts)):
        update = mutate(draw, update)
    return update


@st.composite
def notification_params(draw: st.DrawFn) -> Any:
    """`session/update` params; one in ten broken (a field mutated, or any JSON at all)."""
    params: Any = {"sessionId": draw(session_ids), "update": draw(updates())}
    broken = draw(indexes) % 10
    if broken == 8:
        params = mutate(draw, params)
    elif broken == 9:
        params = draw(json_value)
    return params


def request_line(request_id: int, method: str, params: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode()


permission_params = obj(
    sessionId=st.sampled_from([SESSION, "other"]),
    toolCall=obj(toolCallId=tool_ids, title=maybe(text), status=maybe(statuses)),
    options=st.just([{"optionId": "ok", "name": "OK", "kind": "allow_once"}]),
)


line_kinds = st.sampled_from(range(20))
request_ids = st.integers(100, 200)
small_ids = st.integers(0, 5)
answer_ids = st.sampled_from([0, 1, "1", 7, None, 1.5])
answer_kinds = st.sampled_from(["result", "error", "result"])
other_methods = st.sampled_from(["fs/read_text_file", "weird/method", "_ext/x"])
junk = st.binary(max_size=40)
WHOLE = json.dumps({"jsonrpc": "2.0", "method": "session/update"}).encode()
cuts = st.integers(0, len(WHOLE))
corruption = st.binary(max_size=4)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """One line from a hostile agent."""
    choice = draw(line_kinds)
    if choice < 12:
        message = {"jsonrpc": "2.0", "method": "session/update", "params": {}}
        message["params"] = draw(notification_params())
        if choice == 11:
            message["id"] = draw(small_ids)  # a notification with an id
        # Half with raw UTF-8 text, which the random cuts below split mid-character.
        line = json.dumps(message, ensure_ascii=choice % 2 == 0).encode()
    elif choice < 14:
        params = draw(permission_params if choice == 12 else json_value)
        line = request_line(draw(request_ids), "session/request_permission", params)
    elif choice == 14:
        line = request_line(draw(request_ids), draw(other_methods), draw(json_value))
    elif choice == 15:
        line = json.dumps(draw(json_value)).encode()  # JSON, not JSON-RPC
    elif choice == 16:
        # An answer: to one of our two pending requests (0, 1), maybe malformed, maybe twice,
        # or to nothing we asked.
        answer = {"jsonrpc": "2.0", "id": draw(answer_ids)}
        answer[draw(answer_kinds)] = draw(json_value)
        line = json.dumps(answer).encode()
    elif choice == 17:
        line = draw(junk)  # bytes: banners, binary, bad UTF-8
    else:
        line = WHOLE[: draw(cuts)] + draw(corruption)  # broken off, or corrupted
    return line.replace(b"\n", b" ")


# -- consistency ------------------------------------------------------------------------------


def check_state(state: SessionState) -> None:
    by_kind: dict[type, dict[str, Any]] = {
        Message: state.messages,
        ToolCallState: state.tool_calls,
        PlanState: state.plans,
    }
    seen: set[int] = set()
    for item in state.timeline:
        assert id(item) not in seen, f"{item!r} twice in the timeline"
        seen.add(id(item))
        if isinstance(item, Notice):
            assert isinstance(item.title, str) and isinstance(item.severity, str)
            continue
        assert by_kind[type(item)].get(item.id) is item, f"{item!r} not found by its id"
    for kind_, items in by_kind.items():
        listed = sum(1 for item in state.timeline if type(item) is kind_)
        assert listed == len(items), f"{kind_.__name__}: {len(items)} by id, {listed} listed"
    for message in state.messages.values():
        assert message.role in ("user", "agent", "thought")
        assert isinstance(message.content, list)
        assert all(isinstance(block, ContentBlock) for block in message.content)
        assert isinstance(message.text, str)
    for call in state.tool_calls.values():
        assert isinstance(call.content, list) and isinstance(call.locations, list)
        assert all(isinstance(c, ToolCallContent) for c in call.content)
        assert all(isinstance(loc, ToolCallLocation) for loc in call.locations)
        assert isinstance(call.title, str) and isinstance(call.status, str)
        assert isinstance(call.kind, str)
    for plan in state.plans.values():
        assert all(isinstance(entry, PlanEntry) for entry in plan.entries)
    for terminal in state.terminals.values():
        assert isinstance(terminal, TerminalState) and isinstance(terminal.output, bytearray)
    assert all(isinstance(command, AvailableCommand) for command in state.commands)
    assert all(isinstance(option, ConfigOption) for option in state.config_options)
    assert state.status in ("idle", "running", "requires_action", "cancelling")
    assert state.last_message is None or state.messages.get(state.last_message.id) is (
        state.last_message
    )
    for value in (state.usage_used, state.usage_size):
        assert value is None or isinstance(value, int)


# -- (a) through the connection ---------------------------------------------------------------


class WriterStub:
    """Stands in for the agent's stdin: keeps what acp-tui writes."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def lines(self) -> list[bytes]:
        return bytes(self.data).splitlines()


async def cancel_every_permission(pending: PendingPermission) -> None:
    pending.cancel()


async def feed_connection(agent_lines: list[bytes], splits: list[int], folder: Path) -> None:
    problems: list[str] = []
    client = AgentClient(
        ["hostile"],
        ClientOptions(cwd=Path("/w")),
        decide_permission=cancel_every_permission,
        services_factory=None,
        on_problem=problems.append,
    )
    session = client.sessions[SESSION] = Session(client, SESSION)
    changes: list[Change] = []
    session.listeners.append(lambda _session, change: changes.append(change))
    reader = asyncio.StreamReader()
    writer = WriterStub()
    traffic: list[tuple[str, bytes]] = []
    transcript = Transcript(folder / "transcript.jsonl", on_error=problems.append)
    connection = Connection(
        reader,
        writer,  # type: ignore[arg-type]
        client,
        transcript=transcript,
        on_problem=problems.append,
        on_traffic=lambda direction, line: traffic.append((direction, line)),
        typed_notifications=client.typed_notifications,
    )
    data = b"\n".join(agent_lines) + b"\n"
    cuts = sorted({min(cut, len(data)) for cut in splits})
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        reader.feed_data(data[start:end])  # a line may arrive in pieces
    # Two requests of ours wait for answers: the agent's lines may answer them, badly.
    asked = [
        asyncio.ensure_future(connection.request("session/prompt", {}, m.PromptResponse)),
        asyncio.ensure_future(connection.request("_ext/ask", {})),
    ]
    await asyncio.sleep(0)
    reader.feed_eof()
    await asyncio.wait_for(connection.run(), 10)
    for _ in range(5):  # let the tasks answering requests finish
        await asyncio.sleep(0)
    transcript.close()
    # Each was answered or failed with an RpcError (at the latest when the stream ended).
    for request in asked:
        assert request.done()
        error = request.exception()
        assert error is None or isinstance(error, RpcError), repr(error)

    # The state is consistent, and nothing needed the connection's last-resort catch.
    check_state(session.state)
    assert all(isinstance(change, Change) for change in changes)
    assert not [p for p in problems if p.startswith(("could not handle", "failed to answer"))]
    # Every line is seen by the inspector and kept in the transcript, both ways, in order.
    sent = writer.lines()
    expected = [line for line in agent_lines if line.strip()]
    assert [line for way, line in traffic if way == "recv"] == [line.strip() for line in expected]
    assert [line for way, line in traffic if way == "send"] == sent
    entries = [json.loads(line) for line in (folder / "transcript.jsonl").read_bytes().splitlines()]
    assert [e["dir"] for e in entries if e["dir"] == "recv"] == ["recv"] * len(expected)
    assert [e["msg"] for e in entries if e["dir"] == "send"] == [json.loads(x) for x in sent]
    # Besides our two requests, every line written is a JSON-RPC response; only permission
    # requests succeed (answered cancelled).
    written = [json.loads(line) for line in sent]
    assert [w.get("method") for w in written[:2]] == ["session/prompt", "_ext/ask"]
    for answer in written[2:]:
        assert answer["jsonrpc"] == "2.0" and "method" not in answer
        assert ("result" in answer) != ("error" in answer), answer
        if "result" in answer:
            assert answer["result"] == {"outcome": {"outcome": "cancelled"}}
        else:
            assert answer["error"]["code"] in (-32700, -32600, -32601, -32602), answer


@SLOW_MACHINE
@settings(FUZZ, max_examples=500)
@given(
    agent_lines=st.lists(lines(), min_size=1, max_size=12),
    splits=st.lists(st.integers(0, 4000), max_size=4),
)
def test_no_traffic_breaks_the_connection_or_the_state(
    agent_lines: list[bytes], splits: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(feed_connection(agent_lines, splits, Path(folder)))


# -- (b) straight through the decoder and the reducer -----------------------------------------

turn_steps = st.sampled_from(["begin", "cancel", "end"])


@SLOW_MACHINE
@settings(FUZZ, max_examples=700)
@given(
    steps=st.lists(
        st.one_of(notification_params().map(lambda params: ("update", params)), turn_steps),
        min_size=1,
        max_size=16,
    ),
)
def test_no_update_breaks_the_reducer(steps: list[Any]) -> None:
    state = SessionState(session_id=SESSION)
    for step in steps:
        if step == "begin":
            reducer.begin_turn(state, [ContentBlock(type="text", text="prompt")])
        elif step == "cancel":
            reducer.cancel_turn(state)
        elif step == "end":
            reducer.end_turn(state, "end_turn")
        else:
            try:
                _session_id, update = decode_session_notification(msgspec.json.encode(step[1]))
            except msgspec.DecodeError:
                continue  # no session id to give it to: the caller reports it
            change = reducer.apply(state, update)
            assert isinstance(change, Change)
        check_state(state)


def test_a_permission_response_is_what_the_wire_expects() -> None:
    """The stub's check above relies on this shape for an answered-cancelled request."""
    response = m.PermissionResponse(m.CancelledOutcome())
    assert msgspec.json.decode(msgspec.json.encode(response)) == {
        "outcome": {"outcome": "cancelled"}
    }
