"""Terminals an agent runs itself, streamed in tool call `_meta` (claude-agent-acp's Bash tool):
advertised in `initialize`, and shown as the same terminal state as `terminal/*`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from acp_tui.protocol.content import text_block
from acp_tui.protocol.updates import ToolCall, ToolCallUpdate
from acp_tui.session import reducer, terminals
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission
from acp_tui.session.state import SessionState
from tests.support import TEST_AGENTS

RAW_AGENT = TEST_AGENTS / "raw_agent.py"


def _update(**fields: Any) -> ToolCall | ToolCallUpdate:
    kind = ToolCall if fields.get("sessionUpdate") == "tool_call" else ToolCallUpdate
    return msgspec.json.decode(json.dumps(fields), type=kind)


def _apply(state: SessionState, update: ToolCall | ToolCallUpdate) -> list[str]:
    """Apply as `Session.apply` does; the kinds of the changes."""
    change = reducer.apply(state, update)
    meta = update.meta if isinstance(update.meta, dict) else {}
    return [change.kind] + [c.kind for c in terminals.meta_terminal(state, change.item, meta)]


# What claude-agent-acp 0.100.0 sends for `Bash(ls)` to a client advertising the delta form.
CLAUDE_BASH = [
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "toolu_1",
        "title": "ls -la",
        "kind": "execute",
        "status": "pending",
        "content": [],
        "_meta": {"claudeCode": {"toolName": "Bash"}, "terminal_info": {"terminal_id": "toolu_1"}},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_1",
        "_meta": {"terminal_output_delta": {"terminal_id": "toolu_1", "data": "a.txt\n"}},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_1",
        "_meta": {"terminal_output_delta": {"terminal_id": "toolu_1", "data": "b.txt\n"}},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_1",
        "status": "completed",
        "content": [{"type": "terminal", "terminalId": "toolu_1"}],
        "_meta": {
            "terminal_info": {"terminal_id": "toolu_1"},
            "terminal_exit": {"terminal_id": "toolu_1", "exit_code": 2, "signal": None},
        },
    },
]


def test_claudes_bash_becomes_a_live_terminal_in_its_card() -> None:
    state = SessionState(session_id="s")
    kinds = [_apply(state, _update(**update)) for update in CLAUDE_BASH]
    assert kinds == [
        ["tool_call", "terminal"],
        ["tool_call", "terminal"],
        ["tool_call", "terminal"],
        ["tool_call", "terminal", "terminal"],
    ]
    call = state.tool_calls["toolu_1"]
    assert [(c.type, c.terminal_id) for c in call.content] == [("terminal", "toolu_1")]
    terminal = state.terminals["toolu_1"]
    assert (terminal.command, bytes(terminal.output)) == ("ls -la", b"a.txt\nb.txt\n")
    assert (terminal.exited, terminal.exit_code, terminal.signal) == (True, 2, None)


def test_a_terminal_announced_before_its_command_takes_the_command_later() -> None:
    state = SessionState(session_id="s")
    _apply(state, _update(**{**CLAUDE_BASH[0], "title": "Terminal"}))
    assert state.terminals["toolu_1"].command == "Terminal"
    _apply(state, _update(sessionUpdate="tool_call_update", toolCallId="toolu_1", title="ls -la"))
    assert state.terminals["toolu_1"].command == "ls -la"


def test_the_whole_output_form_is_appended_too() -> None:
    state = SessionState(session_id="s")
    _apply(state, _update(**CLAUDE_BASH[0]))
    output = {"terminal_output": {"terminal_id": "toolu_1", "data": "all of it\n"}}
    _apply(state, _update(sessionUpdate="tool_call_update", toolCallId="toolu_1", _meta=output))
    assert bytes(state.terminals["toolu_1"].output) == b"all of it\n"


# What codex-acp 0.16.0 sends for a command that ends at once: no output in `_meta`, the whole
# of it in `rawOutput` (trimmed to the fields that matter here).
CODEX_QUICK_COMMAND = [
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "call_1_0",
        "title": "ls && echo done",
        "kind": "execute",
        "status": "in_progress",
        "content": [{"type": "terminal", "terminalId": "call_1_0"}],
        "_meta": {"terminal_info": {"terminal_id": "call_1_0", "cwd": "/ws"}},
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1_0",
        "status": "completed",
        "rawOutput": {"stdout": "a.txt\ndone\n", "aggregated_output": "a.txt\ndone\n"},
        "_meta": {"terminal_exit": {"terminal_id": "call_1_0", "exit_code": 0, "signal": None}},
    },
]


def test_a_command_that_streamed_nothing_shows_its_raw_output() -> None:
    state = SessionState(session_id="s")
    for update in CODEX_QUICK_COMMAND:
        _apply(state, _update(**update))
    terminal = state.terminals["call_1_0"]
    assert (bytes(terminal.output), terminal.exit_code) == (b"a.txt\ndone\n", 0)


def test_raw_output_is_not_added_to_what_streamed() -> None:
    state = SessionState(session_id="s")
    _apply(state, _update(**CODEX_QUICK_COMMAND[0]))
    streamed = {"terminal_output_delta": {"terminal_id": "call_1_0", "data": "a.txt\n"}}
    _apply(state, _update(sessionUpdate="tool_call_update", toolCallId="call_1_0", _meta=streamed))
    _apply(state, _update(**CODEX_QUICK_COMMAND[1]))
    assert bytes(state.terminals["call_1_0"].output) == b"a.txt\n"


def test_malformed_terminal_meta_is_ignored() -> None:
    state = SessionState(session_id="s")
    for meta in [
        {"terminal_info": "toolu_1"},
        {"terminal_info": {"terminal_id": 7}},
        {"terminal_output_delta": {"terminal_id": "t", "data": 5}},
        {"terminal_exit": {"exit_code": 1}},
        {"terminal_exit": {"terminal_id": "t", "exit_code": "1", "signal": 9}},
    ]:
        update = _update(sessionUpdate="tool_call", toolCallId="x", title="t", _meta=meta)
        _apply(state, update)
    assert state.tool_calls["x"].content == []
    exited = state.terminals["t"]
    assert (exited.exited, exited.exit_code, exited.signal, bytes(exited.output)) == (
        True,
        None,
        None,
        b"",
    )


async def test_a_real_agent_process_streams_its_own_terminal(tmp_path: Path) -> None:
    """Over real pipes: acp-tui advertises the `_meta` capability, and the agent's updates
    arrive as terminal state."""

    def line(message: dict[str, Any]) -> str:
        return json.dumps({"jsonrpc": "2.0", **message})

    updates = [
        line({"method": "session/update", "params": {"sessionId": "s1", "update": update}})
        for update in CLAUDE_BASH
    ]
    script = {
        "on": {
            "initialize": [line({"id": "$ID", "result": {"protocolVersion": 1}})],
            "session/new": [line({"id": "$ID", "result": {"sessionId": "s1"}})],
            "session/prompt": [*updates, line({"id": "$ID", "result": {"stopReason": "end_turn"}})],
        }
    }
    (tmp_path / "script.json").write_text(json.dumps(script))
    received = tmp_path / "received.jsonl"

    async def never_asked(pending: PendingPermission) -> None:
        raise AssertionError("no permission was asked")

    argv = [sys.executable, str(RAW_AGENT), str(tmp_path / "script.json"), str(received)]
    client = AgentClient(argv, ClientOptions(cwd=tmp_path), decide_permission=never_asked)
    await client.start()
    try:
        session = await client.new_session()
        seen: list[str] = []
        session.listeners.append(lambda _session, change: seen.append(change.kind))
        assert await session.prompt([text_block("ls")]) == "end_turn"
    finally:
        await client.close()
    initialize = json.loads(received.read_text().splitlines()[0])
    meta = initialize["params"]["clientCapabilities"]["_meta"]
    assert meta["terminal_output"] is meta["terminal_output_delta"] is True
    assert seen.count("terminal") == 5
    assert bytes(session.state.terminals["toolu_1"].output) == b"a.txt\nb.txt\n"
