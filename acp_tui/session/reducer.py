"""The pure reducer: `apply(state, update)` changes a `SessionState` and says what changed.

v1 and v2 updates land in the same state. The rules are the prompt-turn page's:
- message updates (`user_message`, `agent_message`, `agent_thought`) are upserts keyed by
  `messageId`: `content` omitted keeps, `null`/`[]` clears, a list replaces;
- chunks append one block to whatever is current for their `messageId` (plain text is joined
  onto the text before it: `JOINED_TEXT`); a v1 chunk without one continues the current
  message of its kind until something else is shown;
- tool calls are upserts by `toolCallId` (an update may come before its `tool_call`); omitted
  fields keep, `null` resets, values replace (lists wholesale); `tool_call_content_chunk`
  appends one content item.
The turn-level steps a session takes (a prompt sent, a cancel, a stop reason) are here too,
so every state change goes through one module with no I/O, no clock and no Textual.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET

from acp_tui.protocol.content import ContentBlock, block_text, is_plain_text, text_block
from acp_tui.protocol.updates import (
    AgentMessage,
    AgentMessageChunk,
    AgentThought,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    CompactionSummaryChunk,
    CompactionUpdate,
    ConfigOption,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    Notice,
    Plan,
    PlanRemoved,
    PlanUpdate,
    SessionInfoUpdate,
    SessionUpdate,
    StateUpdate,
    TerminalOutputChunk,
    TerminalUpdate,
    ToolCall,
    ToolCallContentChunk,
    ToolCallUpdate,
    TurnUsage,
    UnknownUpdate,
    UsageUpdate,
    UserMessage,
    UserMessageChunk,
    turn_usage,
)
from acp_tui.session import state as s
from acp_tui.session.change import Change
from acp_tui.session.terminals import (
    retitle_terminals,
    show_terminal,
    terminal_chunk,
    terminal_update,
)

# -- messages ---------------------------------------------------------------------------------


def _add(state: s.SessionState, item: s.TimelineItem) -> None:
    state.timeline.append(item)


def _new_message(state: s.SessionState, message_id: str, role: s.Role) -> s.Message:
    message = s.Message(message_id, role, state.turn)
    state.messages[message_id] = message
    _add(state, message)
    return message


def _message_for(state: s.SessionState, message_id: Any, role: s.Role) -> s.Message:
    """The message an update is about: known by id, the prompt we showed before the agent
    named it, or a new one."""
    if isinstance(message_id, str):
        message = state.messages.get(message_id)
        if message is not None:
            return message
        claimed = _claim_sent_prompt(state, message_id, role)
        return claimed or _new_message(state, message_id, role)
    last = state.last_message
    if last is not None and last.role == role and state.timeline and state.timeline[-1] is last:
        return last
    return _claim_sent_prompt(state, None, role) or _new_message(
        state, state.new_local_id(role), role
    )


def _claim_sent_prompt(
    state: s.SessionState, message_id: str | None, role: s.Role
) -> s.Message | None:
    """The first user message the agent reports in a turn is the prompt we already show: it
    takes the agent's id and content instead of appearing twice."""
    sent = state.sent_prompt
    if role != "user" or sent is None or sent.turn != state.turn:
        return None
    state.sent_prompt = None
    if message_id is not None:
        del state.messages[sent.id]
        sent.id = message_id
        state.messages[message_id] = sent
    sent.content = []
    sent.revision += 1
    return sent


JOINED_TEXT = 1024
"""Characters of streamed text joined into one block of a message's content. A chunk is a few
words: kept as a block of its own, each cost ~260 bytes (the block, its text, its `type`)
where its text is ~45, most of a long answer's memory in the state; joined, a chunk costs its
text. Bounded so that joining copies a few KB a chunk, not the whole answer
(bench/README.md, "Long answers (issue 29)")."""


def _chunk(role: s.Role) -> Callable[[s.SessionState, Any], Change]:
    def append(state: s.SessionState, update: Any) -> Change:
        message_id = update.message_id
        message = state.messages.get(message_id) if message_id.__class__ is str else None
        if message is None:
            message = _message_for(state, message_id, role)
        block = update.content
        content = message.content
        joining = state.joining
        last = content[-1] if content else None
        if last is None or not (
            block.type == "text"  # `is_plain_text`, inlined: once a chunk
            and block.text.__class__ is str
            and block.meta is UNSET
            and block.annotations is UNSET
        ):
            content.append(block)
        elif last is joining or is_plain_text(last):
            text: str = last.text  # type: ignore[assignment]
            if len(text) >= JOINED_TEXT:
                content.append(block)
            elif last is joining:
                last.text = text + block.text
            else:  # a new block of the reducer's own: `last` may be an earlier change's delta
                content[-1] = state.joining = text_block(text + block.text)
        else:
            content.append(block)
        state.last_message = message
        return Change("message", message, block)

    return append


def _upsert(role: s.Role) -> Callable[[s.SessionState, Any], Change]:
    def replace(state: s.SessionState, update: Any) -> Change:
        message = _message_for(state, update.message_id, role)
        state.joining = None  # the change shows the message whole: its blocks stay as shown
        if update.content is not UNSET:
            message.content = list(update.content or ())
            message.revision += 1
        state.last_message = message
        return Change("message", message)

    return replace


# -- tool calls -------------------------------------------------------------------------------


def _keeps_cancelled(state: s.SessionState, call: s.ToolCallState, status: str | None) -> bool:
    """After the user cancels, a call shown cancelled (or rejected) stays so, unless the agent
    says it did complete: v1 has no `cancelled` status, so agents report the aborted call as
    failed."""
    return (
        state.status == "cancelling"
        and call.status in ("cancelled", "rejected")
        and status != "completed"
    )


def tool_call_for(state: s.SessionState, tool_call_id: str) -> s.ToolCallState:
    """The tool call with this id, created (and placed in the timeline) on first sight."""
    call = state.tool_calls.get(tool_call_id)
    if call is None:
        call = state.tool_calls[tool_call_id] = s.ToolCallState(tool_call_id, state.turn)
        _add(state, call)
    return call


def patch_tool_call(state: s.SessionState, update: ToolCall | ToolCallUpdate) -> Change:
    """Apply a tool call or its update (also the `toolCall` of a permission request):
    omitted keeps, `null` resets to the default, a value replaces (lists wholesale)."""
    state.last_message = None  # text after a tool call is a new message
    call = tool_call_for(state, update.tool_call_id)
    if update.status is not UNSET and not _keeps_cancelled(state, call, update.status):
        call.status = update.status or "pending"
    if update.title is not UNSET:
        before, call.title = call.title, update.title or ""
        retitle_terminals(state, call, before)
    if update.kind is not UNSET:
        call.kind = update.kind or "other"
    if update.content is not UNSET:
        call.content = list(update.content or ())
    if update.locations is not UNSET:
        call.locations = list(update.locations or ())
    if update.raw_input is not UNSET:
        call.raw_input = update.raw_input
    if update.raw_output is not UNSET:
        call.raw_output = update.raw_output
    if update.name is not UNSET:
        call.name = update.name
    if update.meta is not UNSET:
        call.meta = update.meta
        info = update.meta.get("terminal_info") if isinstance(update.meta, dict) else None
        if isinstance(info, dict) and isinstance(info.get("terminal_id"), str):
            show_terminal(call, info["terminal_id"])
    return Change("tool_call", call)


def _tool_content_chunk(state: s.SessionState, update: ToolCallContentChunk) -> Change:
    state.last_message = None
    call = tool_call_for(state, update.tool_call_id)
    call.content.append(update.content)
    return Change("tool_call", call, update.content)


# -- plans ------------------------------------------------------------------------------------


def _plan_for(state: s.SessionState, plan_id: str) -> s.PlanState:
    plan = state.plans.get(plan_id)
    if plan is None:
        plan = state.plans[plan_id] = s.PlanState(plan_id)
        _add(state, plan)
    return plan


def _plan(state: s.SessionState, update: Plan) -> Change:
    state.last_message = None
    plan = _plan_for(state, "")
    plan.entries = list(update.entries)
    return Change("plan", plan)


def _plan_update(state: s.SessionState, update: PlanUpdate) -> Change:
    state.last_message = None
    content = update.plan
    plan = _plan_for(state, content.key)
    plan.type = content.type
    if isinstance(content.entries, list):
        plan.entries = list(content.entries)
        plan.text = None
    else:
        plan.entries = []
        plan.text = next((v for v in (content.content, content.uri) if isinstance(v, str)), None)
    return Change("plan", plan)


def _plan_removed(state: s.SessionState, update: PlanRemoved) -> Change:
    plan = state.plans.pop(update.plan_id, None)
    if plan is not None:
        state.timeline.remove(plan)
    return Change("plan_removed", plan)


# -- session-wide fields ----------------------------------------------------------------------


def _commands(state: s.SessionState, update: AvailableCommandsUpdate) -> Change:
    state.commands = list(update.available_commands)
    return Change("commands")


def _mode(state: s.SessionState, update: CurrentModeUpdate) -> Change:
    state.current_mode = update.mode
    return Change("modes")


def _config(state: s.SessionState, update: ConfigOptionUpdate) -> Change:
    state.config_options = list(update.config_options)
    return Change("config")


def _info(state: s.SessionState, update: SessionInfoUpdate) -> Change:
    if update.title is not UNSET:
        state.title = update.title
    if update.updated_at is not UNSET:
        state.updated_at = update.updated_at
    return Change("info")


def _usage(state: s.SessionState, update: UsageUpdate) -> Change:
    state.usage_used, state.usage_size = update.used, update.size
    if update.cost is not UNSET:
        state.cost = update.cost
    return Change("usage")


def _state(state: s.SessionState, update: StateUpdate) -> Change:
    if update.state == "idle":
        stop = update.stop_reason if isinstance(update.stop_reason, str) else None
        return end_turn(state, stop, turn_usage(update.usage))
    if state.status != "cancelling":
        state.status = "requires_action" if update.state == "requires_action" else "running"
    return Change("status")


def _notice(state: s.SessionState, update: Notice) -> Change:
    detail = update.description if isinstance(update.description, str) else None
    return add_notice(state, update.severity, update.title, detail)


# -- turns ------------------------------------------------------------------------------------


def begin_turn(state: s.SessionState, prompt: list[ContentBlock]) -> list[Change]:
    """The user sent a prompt: show it at once, until the agent reports it under its own id;
    the turn is running."""
    state.turn += 1
    state.status = "running"
    state.stop_reason = None
    state.turn_usage = None
    message = _new_message(state, state.new_local_id("prompt"), "user")
    message.content = list(prompt)
    state.sent_prompt = message
    state.last_message = message
    return [Change("message", message), Change("status")]


def cancel_turn(state: s.SessionState) -> list[Change]:
    """The user cancelled: every unfinished tool call of this turn is shown cancelled now."""
    state.status = "cancelling"
    return [Change("status"), *close_tool_calls(state)]


def close_tool_calls(state: s.SessionState) -> list[Change]:
    """Close the unfinished tool calls of this turn, when the turn is over (however it ended)
    or cancelled: `rejected` if the user rejected its permission request, else `cancelled`.
    Agents often leave them open for good (Codex ends the turn `cancelled` after a rejected
    edit and never updates that call again), and a card must not say "pending" forever.
    The changes are of kind `tool_call_closed`: acp-tui's own conclusion, which a record
    need not keep (a recorded call still open is read as cancelled)."""
    changes = []
    for call in state.tool_calls.values():
        if call.turn == state.turn and call.open:
            call.status = "rejected" if call.id in state.rejected_tool_calls else "cancelled"
            changes.append(Change("tool_call_closed", call))
    return changes


def permission_answered(
    state: s.SessionState, answer: s.PermissionAnswer, said: str | None = None
) -> Change:
    """A permission request was answered; `said`: the line that says how (a policy's answer).
    A rejection shows nothing of the tool call yet: the agent may still report it (failed,
    or done differently); only a call it leaves open is shown rejected when the turn ends
    (`close_tool_calls`)."""
    if answer.rejected and answer.tool_call_id is not None:
        state.rejected_tool_calls.add(answer.tool_call_id)
    notice = None
    if said is not None:
        notice = s.Notice("auto", said, None, state.turn)
        _add(state, notice)
        state.last_message = None
    return Change("permission", notice, answer)


def session_setup(
    state: s.SessionState,
    modes: list[s.Mode] | None,
    current_mode: str | None,
    config_options: list[ConfigOption] | None,
) -> list[Change]:
    """The modes and config options a `session/new`, `load` or `resume` answered with (None:
    not given)."""
    changes = []
    if modes is not None:
        state.modes, state.current_mode = modes, current_mode
        changes.append(Change("modes"))
    if config_options is not None:
        state.config_options = config_options
        changes.append(Change("config"))
    return changes


def mode_set(state: s.SessionState, mode_id: str) -> Change:
    """The agent took `session/set_mode`."""
    state.current_mode = mode_id
    return Change("modes")


def config_set(
    state: s.SessionState,
    option: ConfigOption,
    value: str | bool,
    options: list[ConfigOption] | None,
) -> Change:
    """The agent took `session/set_config_option`: `options` when it answered with them all,
    else `option` now has `value`."""
    if options is not None:
        state.config_options = options
    else:
        option.current_value = value
    return Change("config")


def adopt_history(state: s.SessionState, history: s.SessionState) -> None:
    """Put a recorded history into a just-opened session's (empty) timeline, before anyone
    listens to it."""
    state.timeline[:0] = history.timeline
    state.messages.update(history.messages)
    state.tool_calls.update(history.tool_calls)
    state.plans.update(history.plans)
    state.terminals.update(history.terminals)
    state.turn = max(state.turn, history.turn)
    state.local_ids = max(state.local_ids, history.local_ids)
    state.title = state.title or history.title


STOP_NOTICES: dict[str, tuple[str, str, str | None]] = {
    "cancelled": ("info", "Turn cancelled", None),
    "refusal": (
        "warning",
        "The agent refused to continue",
        "This prompt, and what the agent said after it, will not be part of what it remembers "
        "next turn: rephrase it (↑ brings it back), or go on with something else.",
    ),
    "max_tokens": ("warning", "The agent stopped: it reached its token limit", None),
    "max_turn_requests": ("warning", "The agent stopped: too many requests in one turn", None),
}
"""What the session says when a turn ends other than `end_turn`."""


def stop_notice(stop_reason: str | None) -> tuple[str, str, str | None] | None:
    """The notice for a turn's end: none for `end_turn` (or no answer at all), and a plain one
    for a reason this version does not know (an agent's own, a later protocol's)."""
    if stop_reason is None or stop_reason == "end_turn":
        return None
    return STOP_NOTICES.get(stop_reason, ("warning", f"The agent stopped: {stop_reason}", None))


def end_turn(
    state: s.SessionState, stop_reason: str | None, usage: TurnUsage | None = None
) -> Change:
    """The turn ended (with the tokens it took, when the agent said); the change's `item` is
    the notice saying why it stopped, when it was not `end_turn`."""
    state.status = "idle"
    state.stop_reason = stop_reason
    state.sent_prompt = None
    if usage is not None:
        state.turn_usage = usage
    said = stop_notice(stop_reason)
    if said is None:
        return Change("status")
    notice = s.Notice(*said, state.turn)
    _add(state, notice)
    state.last_message = None
    return Change("status", notice)


def add_notice(
    state: s.SessionState, severity: str, title: str, detail: str | None = None
) -> Change:
    notice = s.Notice(severity, title, detail, state.turn)
    _add(state, notice)
    state.last_message = None
    return Change("notice", notice)


COMPACTION_TITLES = {
    "in_progress": "Compacting the context…",
    "completed": "Context compacted",
    "failed": "Context compaction failed",
    "cancelled": "Context compaction cancelled",
}


def _compaction_for(state: s.SessionState, compaction_id: str) -> s.Compaction:
    compaction = state.compactions.get(compaction_id)
    if compaction is None:
        title = COMPACTION_TITLES["in_progress"]
        notice = s.Notice("compaction", title, None, state.turn, key=compaction_id)
        compaction = state.compactions[compaction_id] = s.Compaction(notice)
        _add(state, notice)
        state.last_message = None
    return compaction


def _compaction(state: s.SessionState, update: CompactionUpdate) -> Change:
    """A compaction's state: the notice's title (with why it failed); its summary (Markdown,
    mostly) the detail, replaced when sent whole. Omitted fields keep, null clears."""
    compaction = _compaction_for(state, update.compaction_id)
    notice = compaction.notice
    if update.error is not UNSET:
        compaction.error = update.error or None
    status = update.status
    notice.title = COMPACTION_TITLES.get(status, f"Context compaction: {status}")
    if compaction.error:
        notice.title += f": {compaction.error}"
    if update.summary is not UNSET:
        text = "".join(block_text(block) for block in update.summary or ())
        notice.detail = text or None
    return Change("notice", notice)


def _compaction_chunk(state: s.SessionState, update: CompactionSummaryChunk) -> Change:
    notice = _compaction_for(state, update.compaction_id).notice
    notice.detail = (notice.detail or "") + block_text(update.content)
    return Change("notice", notice)


def _unknown(state: s.SessionState, update: UnknownUpdate) -> Change:
    detail = msgspec.json.encode(update.raw).decode()
    return add_notice(state, "unknown", update.reason, detail)


REDUCERS: dict[type, Callable[[s.SessionState, Any], Change]] = {
    UserMessageChunk: _chunk("user"),
    AgentMessageChunk: _chunk("agent"),
    AgentThoughtChunk: _chunk("thought"),
    UserMessage: _upsert("user"),
    AgentMessage: _upsert("agent"),
    AgentThought: _upsert("thought"),
    ToolCall: patch_tool_call,
    ToolCallUpdate: patch_tool_call,
    ToolCallContentChunk: _tool_content_chunk,
    Plan: _plan,
    PlanUpdate: _plan_update,
    PlanRemoved: _plan_removed,
    AvailableCommandsUpdate: _commands,
    CurrentModeUpdate: _mode,
    ConfigOptionUpdate: _config,
    SessionInfoUpdate: _info,
    UsageUpdate: _usage,
    StateUpdate: _state,
    Notice: _notice,
    CompactionUpdate: _compaction,
    CompactionSummaryChunk: _compaction_chunk,
    TerminalUpdate: terminal_update,
    TerminalOutputChunk: terminal_chunk,
    UnknownUpdate: _unknown,
}
"""The reducer of each kind of update; `apply` picks one. (A hot loop may pick it itself: one
call fewer per update.)"""


def apply(state: s.SessionState, update: SessionUpdate | UnknownUpdate) -> Change:
    """Apply one `session/update` and say what changed."""
    return REDUCERS[update.__class__](state, update)
