"""The reducer against the examples of the prompt-turn page and the v2 RFDs, table-driven.

Each case is a list of `sessionUpdate` objects as they appear on the wire and what the state
must show after them, in the protocol's own words.
"""

from __future__ import annotations

import gc
from typing import Any

import msgspec
import pytest

from acp_tui.protocol.content import ContentBlock, text_block
from acp_tui.protocol.updates import (
    ConfigOption,
    decode_session_notification,
    display_order,
    turn_usage,
)
from acp_tui.session import reducer, terminals
from acp_tui.session.state import Message, Notice, Read, SessionState, ToolCallState


def feed(updates: list[dict[str, Any]], state: SessionState | None = None) -> SessionState:
    state = state or SessionState(session_id="s")
    for update in updates:
        params = msgspec.json.encode({"sessionId": "s", "update": update})
        _, decoded = decode_session_notification(params)
        reducer.apply(state, decoded)
    return state


def texts(state: SessionState) -> list[tuple[str, str]]:
    return [(i.role, i.text) for i in state.timeline if isinstance(i, Message)]


def chunk(kind: str, text: str, message_id: str | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def upsert(kind: str, message_id: str, content: Any = ...) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": kind, "messageId": message_id}
    if content is not ...:
        update["content"] = content if content is None else [text_block(t) for t in content]
    return update


MESSAGE_CASES = {
    # The seed: agent_message [A], then chunk B -> [A, B]; then agent_message [C] -> [C].
    "upsert then chunk appends": (
        [upsert("agent_message", "m1", ["A"]), chunk("agent_message_chunk", "B", "m1")],
        [("agent", "AB")],
    ),
    "chunks then upsert replace": (
        [
            chunk("agent_message_chunk", "A", "m1"),
            chunk("agent_message_chunk", "B", "m1"),
            upsert("agent_message", "m1", ["C"]),
        ],
        [("agent", "C")],
    ),
    "chunks after a replacing upsert append to it": (
        [
            upsert("agent_message", "m1", ["A"]),
            chunk("agent_message_chunk", "B", "m1"),
            upsert("agent_message", "m1", ["C"]),
            chunk("agent_message_chunk", "D", "m1"),
        ],
        [("agent", "CD")],
    ),
    "upsert without content keeps content": (
        [upsert("agent_message", "m1", ["A"]), upsert("agent_message", "m1")],
        [("agent", "A")],
    ),
    "content null clears": (
        [upsert("agent_message", "m1", ["A"]), upsert("agent_message", "m1", None)],
        [("agent", "")],
    ),
    "content [] clears": (
        [upsert("agent_message", "m1", ["A"]), upsert("agent_message", "m1", [])],
        [("agent", "")],
    ),
    "a changed messageId starts a new message": (
        [chunk("agent_message_chunk", "A", "m1"), chunk("agent_message_chunk", "B", "m2")],
        [("agent", "A"), ("agent", "B")],
    ),
    "chunks go to their own message by id, interleaved": (
        [
            chunk("agent_thought_chunk", "think", "t1"),
            chunk("agent_message_chunk", "say", "m1"),
            chunk("agent_thought_chunk", "ing", "t1"),
        ],
        [("thought", "thinking"), ("agent", "say")],
    ),
    "v1 chunks without messageId continue the current message": (
        [chunk("agent_message_chunk", "Hel"), chunk("agent_message_chunk", "lo")],
        [("agent", "Hello")],
    ),
    "v1 chunks without messageId: a change of kind starts a new message": (
        [
            chunk("agent_thought_chunk", "hmm"),
            chunk("agent_message_chunk", "A"),
            chunk("agent_thought_chunk", "more"),
            chunk("agent_message_chunk", "B"),
        ],
        [("thought", "hmm"), ("agent", "A"), ("thought", "more"), ("agent", "B")],
    ),
    "v1 text after a tool call is a new message": (
        [
            chunk("agent_message_chunk", "before"),
            {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read"},
            chunk("agent_message_chunk", "after"),
        ],
        [("agent", "before"), ("agent", "after")],
    ),
    "thought upsert patches the same thought": (
        [
            upsert("agent_thought", "t1", ["Need to inspect the loop body."]),
            upsert("agent_thought", "t1", ["Need to inspect the loop body before a fix."]),
        ],
        [("thought", "Need to inspect the loop body before a fix.")],
    ),
}


@pytest.mark.parametrize("updates,expected", MESSAGE_CASES.values(), ids=MESSAGE_CASES.keys())
def test_messages(updates: list[dict[str, Any]], expected: list[tuple[str, str]]) -> None:
    assert texts(feed(updates)) == expected


def test_the_agent_reporting_our_prompt_does_not_show_it_twice() -> None:
    state = SessionState(session_id="s")
    reducer.begin_turn(state, [text_block("Can you analyze this code?")])
    feed([upsert("user_message", "msg_user_8f7a1", ["Can you analyze this code?"])], state)
    assert texts(state) == [("user", "Can you analyze this code?")]
    assert "msg_user_8f7a1" in state.messages
    # The next turn's report claims the next prompt, not the old one.
    reducer.end_turn(state, "end_turn")
    reducer.begin_turn(state, [text_block("and now?")])
    feed(
        [chunk("user_message_chunk", "and ", "u2"), chunk("user_message_chunk", "now?", "u2")],
        state,
    )
    assert texts(state) == [("user", "Can you analyze this code?"), ("user", "and now?")]


def tool(state: SessionState, tool_call_id: str = "call_001") -> ToolCallState:
    return state.tool_calls[tool_call_id]


def diff(path: str, new: str) -> dict[str, Any]:
    return {"type": "diff", "path": path, "newText": new}


def text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


TOOL_CASES = {
    "v2 first update creates with defaults": (
        [{"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "title": "Analyzing"}],
        {"title": "Analyzing", "kind": "other", "status": "pending", "content": 0},
    ),
    "omitted keeps, value replaces": (
        [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call_001",
                "title": "Read",
                "kind": "read",
            },
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_001",
                "status": "in_progress",
            },
        ],
        {"title": "Read", "kind": "read", "status": "in_progress"},
    ),
    "null clears to the default": (
        [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call_001",
                "title": "Read",
                "kind": "read",
            },
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_001",
                "kind": None,
                "title": None,
            },
        ],
        {"title": "", "kind": "other"},
    ),
    "content chunks append, a content update replaces them": (
        [
            {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "title": "Run"},
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "call_001",
                "content": text_content("a"),
            },
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "call_001",
                "content": text_content("b"),
            },
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_001",
                "status": "completed",
                "content": [text_content("done")],
            },
        ],
        {"status": "completed", "content": 1},
    ),
    "chunks after a content update append to it": (
        [
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_001",
                "content": [text_content("a")],
            },
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "call_001",
                "content": text_content("b"),
            },
        ],
        {"content": 2},
    ),
    "locations and content [] clear": (
        [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call_001",
                "title": "Edit",
                "locations": [{"path": "/a"}],
                "content": [diff("/a", "x")],
            },
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_001",
                "locations": [],
                "content": None,
            },
        ],
        {"content": 0, "locations": 0},
    ),
    "a v1 update before its tool_call creates it, the tool_call fills it in": (
        [
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_001",
                "status": "in_progress",
            },
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call_001",
                "title": "Read",
                "kind": "read",
            },
        ],
        {"title": "Read", "kind": "read", "status": "in_progress"},
    ),
    "an unknown status is kept as it came": (
        [{"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "_paused"}],
        {"status": "_paused"},
    ),
    "raw input and output are kept": (
        [
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call_001",
                "rawInput": {"cmd": "ls"},
                "rawOutput": "ok",
            }
        ],
        {"raw_input": {"cmd": "ls"}, "raw_output": "ok"},
    ),
}


@pytest.mark.parametrize("updates,expected", TOOL_CASES.values(), ids=TOOL_CASES.keys())
def test_tool_calls(updates: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    call = tool(feed(updates))
    for field, value in expected.items():
        actual = getattr(call, field)
        assert (len(actual) if field in ("content", "locations") else actual) == value, field


def test_tool_calls_appear_once_in_the_timeline_in_order() -> None:
    state = feed(
        [
            chunk("agent_message_chunk", "Let me look", "m1"),
            {"sessionUpdate": "tool_call_update", "toolCallId": "a", "title": "A"},
            {"sessionUpdate": "tool_call_update", "toolCallId": "b", "title": "B"},
            {"sessionUpdate": "tool_call_update", "toolCallId": "a", "status": "completed"},
        ]
    )
    kinds = [(type(i).__name__, getattr(i, "id", None)) for i in state.timeline]
    assert kinds == [("Message", "m1"), ("ToolCallState", "a"), ("ToolCallState", "b")]


def test_plans_v1_replace_and_v2_by_id() -> None:
    entry = {"content": "Check for syntax errors", "priority": "high", "status": "pending"}
    done = {**entry, "status": "completed"}
    state = feed(
        [
            {"sessionUpdate": "plan", "entries": [entry]},
            {"sessionUpdate": "plan", "entries": [done, entry]},
            # The seed writes "id"; the schema says "planId": both name the plan.
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "id": "plan-1", "entries": [entry]},
            },
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "plan-1", "entries": [done]},
            },
            {
                "sessionUpdate": "plan_update",
                "plan": {"type": "markdown", "planId": "p2", "content": "# Plan"},
            },
        ]
    )
    assert [e.status for e in state.plans[""].entries] == ["completed", "pending"]
    assert [e.status for e in state.plans["plan-1"].entries] == ["completed"]
    assert state.plans["p2"].text == "# Plan"
    assert len(state.timeline) == 3
    feed([{"sessionUpdate": "plan_removed", "planId": "p2"}], state)
    assert "p2" not in state.plans and len(state.timeline) == 2


def test_session_wide_updates() -> None:
    state = feed(
        [
            {
                "sessionUpdate": "usage_update",
                "used": 53000,
                "size": 200000,
                "cost": {"amount": 0.045, "currency": "USD"},
            },
            {"sessionUpdate": "session_info_update", "title": "Fix the loop"},
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [
                    {"name": "web", "description": "Search", "input": {"hint": "query"}}
                ],
            },
            {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
            {
                "sessionUpdate": "config_option_update",
                "configOptions": [
                    {
                        "id": "model",
                        "name": "Model",
                        "type": "select",
                        "currentValue": "a",
                        "options": [{"value": "a", "name": "A"}],
                    }
                ],
            },
        ]
    )
    assert (state.usage_used, state.usage_size, state.cost.amount, state.cost.currency) == (
        53000,
        200000,
        0.045,
        "USD",
    )
    assert state.title == "Fix the loop"
    assert state.commands[0].name == "web" and state.commands[0].input.hint == "query"
    assert state.current_mode == "code"
    assert state.config_options[0].key == "model"
    feed(
        [
            {"sessionUpdate": "session_info_update", "title": None},
            {"sessionUpdate": "current_mode_update", "modeId": "ask"},
        ],
        state,
    )
    assert state.title is None and state.current_mode == "ask"


def test_v2_state_updates_drive_the_turn() -> None:
    state = SessionState(session_id="s")
    reducer.begin_turn(state, [text_block("hi")])
    feed([{"sessionUpdate": "state_update", "state": "requires_action"}], state)
    assert state.status == "requires_action"
    feed(
        [{"sessionUpdate": "state_update", "state": "idle", "stopReason": "_budget_exhausted"}],
        state,
    )
    assert (state.status, state.stop_reason) == ("idle", "_budget_exhausted")


def test_a_turns_end_keeps_the_tokens_it_took_and_a_malformed_count_is_left_out() -> None:
    """Unstable `usage` on the idle `state_update` (v2; v1 has it on the prompt's answer)."""
    state = SessionState(session_id="s")
    reducer.begin_turn(state, [text_block("hi")])
    usage = {"totalTokens": 70, "inputTokens": 50, "outputTokens": 20, "cachedReadTokens": 9}
    feed([{"sessionUpdate": "state_update", "state": "idle", "usage": usage}], state)
    assert state.turn_usage is not None
    assert (state.turn_usage.input_tokens, state.turn_usage.cached_read_tokens) == (50, 9)
    reducer.begin_turn(state, [text_block("again")])
    assert state.turn_usage is None  # the next turn's end says its own, or nothing
    feed([{"sessionUpdate": "state_update", "state": "idle", "usage": "a lot"}], state)
    assert state.status == "idle" and state.turn_usage is None
    assert turn_usage({}) is None  # the three counts are required
    assert turn_usage({"totalTokens": -1, "inputTokens": 0, "outputTokens": 0}) is None
    odd = turn_usage({"totalTokens": 3, "inputTokens": 1, "outputTokens": 2, "thoughtTokens": "x"})
    assert odd is not None and (odd.output_tokens, odd.thought_tokens) == (2, None)


def test_a_compaction_is_one_notice_patched_in_place_with_its_summary() -> None:
    def update(status: str, **fields: Any) -> dict[str, Any]:
        head = {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": status}
        return head | fields

    def summary_chunk(text: str) -> dict[str, Any]:
        content = {"type": "text", "text": text}
        head = {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1"}
        return head | {"content": content}

    state = feed([chunk("agent_message_chunk", "Working."), update("in_progress")])
    [notice] = [item for item in state.timeline if isinstance(item, Notice)]
    assert (notice.severity, notice.title) == ("compaction", "Compacting the context…")
    assert notice.detail is None
    feed([summary_chunk("## Kept\n"), summary_chunk("the schema work")], state)
    assert notice.detail == "## Kept\nthe schema work"
    feed([update("completed")], state)  # no summary: the chunks' stay
    assert (notice.title, notice.detail) == ("Context compacted", "## Kept\nthe schema work")
    feed([update("completed", summary=[{"type": "text", "text": "Final."}])], state)
    assert notice.detail == "Final."
    feed([update("completed", summary=None)], state)
    assert notice.detail is None
    feed([update("failed", error="too big")], state)
    assert notice.title == "Context compaction failed: too big"
    feed([update("failed")], state)  # an omitted error is kept; null clears it
    assert notice.title == "Context compaction failed: too big"
    feed([update("_paused", error=None)], state)
    assert notice.title == "Context compaction: _paused"
    assert [type(item).__name__ for item in state.timeline] == ["Message", "Notice"]


def test_v2_terminals_snapshot_and_chunks() -> None:
    state = feed(
        [
            {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "aGVs"},
            {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "bG8K"},
            {
                "sessionUpdate": "terminal_update",
                "terminalId": "t",
                "command": "echo",
                "exitStatus": {"exitCode": 0},
            },
        ]
    )
    terminal = state.terminals["t"]
    assert (bytes(terminal.output), terminal.command, terminal.exited, terminal.exit_code) == (
        b"hello\n",
        "echo",
        True,
        0,
    )
    feed(
        [{"sessionUpdate": "terminal_update", "terminalId": "t", "output": {"data": "eA=="}}], state
    )
    assert bytes(terminal.output) == b"x"


def test_cancel_marks_only_this_turns_unfinished_tool_calls() -> None:
    state = SessionState(session_id="s")
    reducer.begin_turn(state, [text_block("one")])
    feed(
        [{"sessionUpdate": "tool_call_update", "toolCallId": "old", "status": "in_progress"}], state
    )
    reducer.end_turn(state, "end_turn")
    reducer.begin_turn(state, [text_block("two")])
    feed(
        [
            {"sessionUpdate": "tool_call_update", "toolCallId": "run", "status": "in_progress"},
            {"sessionUpdate": "tool_call_update", "toolCallId": "done", "status": "completed"},
        ],
        state,
    )
    reducer.cancel_turn(state)
    statuses = {k: v.status for k, v in state.tool_calls.items()}
    assert statuses == {"old": "in_progress", "run": "cancelled", "done": "completed"}
    assert state.status == "cancelling"


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "future_kind", "x": 1},
        {"sessionUpdate": "tool_call"},
        {"sessionUpdate": 42},
        {"no": "kind"},
    ],
)
def test_what_cannot_be_read_is_shown_plainly(update: dict[str, Any]) -> None:
    state = feed([update])
    assert len(state.timeline) == 1
    notice = state.timeline[0]
    assert isinstance(notice, Notice) and notice.severity == "unknown"
    assert notice.detail == msgspec.json.encode(update).decode()


def test_an_unreadable_optional_field_is_dropped_not_the_update() -> None:
    state = feed(
        [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "c",
                "title": "Read",
                "locations": "nope",
                "rawInput": {"a": 1},
            }
        ]
    )
    call = state.tool_calls["c"]
    assert (call.title, call.locations, call.raw_input) == ("Read", [], {"a": 1})


def test_unknown_content_block_types_are_kept() -> None:
    state = feed(
        [
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "_hologram", "uri": "x"},
            }
        ]
    )
    assert state.messages["m"].content[0].type == "_hologram"


@pytest.mark.parametrize(
    "reported,shown",
    [("failed", "cancelled"), ("in_progress", "cancelled"), ("completed", "completed")],
)
def test_after_a_cancel_the_agents_late_status_does_not_undo_it(reported: str, shown: str) -> None:
    state = SessionState(session_id="s")
    reducer.begin_turn(state, [text_block("go")])
    feed(
        [
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "c",
                "title": "Run",
                "status": "in_progress",
            }
        ],
        state,
    )
    reducer.cancel_turn(state)
    feed([{"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": reported}], state)
    assert state.tool_calls["c"].status == shown


def test_client_terminals_keep_their_command_and_the_newest_output() -> None:
    state = SessionState(session_id="s")
    terminals.terminal_started(state, "t1", "pytest -q", "/ws")
    terminals.terminal_output(state, "t1", b"x" * terminals.TERMINAL_KEEP_BYTES)
    terminals.terminal_output(state, "t1", b"tail")
    terminal = state.terminals["t1"]
    assert (terminal.command, terminal.cwd, terminal.truncated) == ("pytest -q", "/ws", True)
    assert len(terminal.output) == terminals.TERMINAL_KEEP_BYTES and terminal.output.endswith(
        b"tail"
    )


def test_items_are_told_apart_by_identity_and_left_to_reference_counting() -> None:
    # Two plans that look alike: removing one must remove that one, not the first equal one.
    state = feed(
        [
            {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "a"}},
            {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "b"}},
        ]
    )
    state.plans["b"].id = "a"
    second = state.plans["b"]
    feed([{"sessionUpdate": "plan_removed", "planId": "b"}], state)
    assert state.timeline == [state.plans["a"]] and second not in state.timeline
    # Items hold only protocol data and plain values, so they can never be in a reference
    # cycle: the cycle collector need not track the tens of thousands a flood makes.
    feed(
        [
            chunk("agent_message_chunk", "hi"),
            {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Run"},
        ],
        state,
    )
    assert not any(gc.is_tracked(item) for item in state.timeline)


def test_config_options_show_in_the_agents_order_with_model_config_beside_the_model() -> None:
    def option(key: str, category: str | None) -> ConfigOption:
        return ConfigOption(key, id=key, category=category)

    effort, mode, model = (
        option("effort", "thought_level"),
        option("mode", "mode"),
        option("model", "model"),
    )
    context, speed, other = (
        option("ctx", "model_config"),
        option("speed", "model_config"),
        option("x", None),
    )
    shown = display_order([effort, context, mode, model, other, speed])
    assert [o.key for o in shown] == ["effort", "mode", "model", "ctx", "speed", "x"]
    without_model = [effort, context, mode]
    assert display_order(without_model) == without_model


def _apply(state: SessionState, update: dict[str, Any]) -> Any:
    params = msgspec.json.encode({"sessionId": "s", "update": update})
    return reducer.apply(state, decode_session_notification(params)[1])


def test_streamed_text_is_joined_into_bounded_blocks_and_each_delta_is_left_as_it_came() -> None:
    """A chunk of plain text is joined onto the text before it (a block a chunk cost the state
    ~260 bytes for ~45 of text), up to `JOINED_TEXT`; the change's delta is the chunk as it
    came, never changed later (a listener may hold it until the end of a burst)."""
    state = SessionState(session_id="s")
    words = [f"word{n} " for n in range(3000)]
    deltas = [
        (change.delta, change.delta.text)
        for change in (_apply(state, chunk("agent_message_chunk", w, "m1")) for w in words)
    ]
    (message,) = state.timeline
    assert isinstance(message, Message)
    assert message.text == "".join(words)
    assert 1 < len(message.content) <= len(message.text) // reducer.JOINED_TEXT + 1
    assert all(len(b.text) < reducer.JOINED_TEXT + len("word0000 ") for b in message.content)
    assert all(delta.text == text for delta, text in deltas)


def test_text_that_carries_more_than_text_is_a_block_of_its_own() -> None:
    annotated = chunk("agent_message_chunk", "B", "m1")
    annotated["content"]["annotations"] = {"priority": 1}
    state = feed([chunk("agent_message_chunk", t, "m1") for t in "A"])
    state = feed([annotated, chunk("agent_message_chunk", "C", "m1")], state)
    (message,) = state.timeline
    assert isinstance(message, Message)
    assert [b.text for b in message.content] == ["A", "B", "C"]
    assert message.content[1].annotations == {"priority": 1}


def test_a_reader_takes_the_text_added_to_the_last_block_and_the_blocks_after_it() -> None:
    image = ContentBlock(type="image", data="aGk=", mime_type="image/png")
    content = [text_block("ab")]
    read = Read()
    assert read.added(content) == ("", [text_block("ab")])
    assert read.added(content) == ("", [])
    content[-1] = text_block("abcd")
    content.append(image)
    assert read.added(content) == ("cd", [image])
    content.append(text_block("e"))
    content[-1] = text_block("ef")
    assert read.added(content) == ("", [text_block("ef")])


def test_a_message_shown_whole_keeps_its_blocks_as_shown_while_text_streams_on() -> None:
    """A change without a delta shows the message's blocks as they are (the jsonl printer
    holds them until the end of the burst): text streamed after it starts a new joined
    block, the shown ones are never added to."""
    state = SessionState(session_id="s")
    for text in "AB":
        _apply(state, chunk("agent_message_chunk", text, "m1"))
    shown = _apply(state, upsert("agent_message", "m1"))
    held = [(block, block.text) for block in shown.item.content]
    for text in "CD":
        _apply(state, chunk("agent_message_chunk", text, "m1"))
    assert all(block.text == text for block, text in held)
    assert shown.item.text == "ABCD"
