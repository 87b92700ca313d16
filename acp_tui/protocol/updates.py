"""`session/update` notifications: a tagged union on `sessionUpdate`, v1 and v2 draft together.

Fields that v2 gives patch semantics use `UNSET` for "omitted" so that omitted (keep), `null`
(clear) and a value (replace) stay three different things all the way to the reducer. Enum-like
values (`status`, `kind`, `priority`, `stopReason`, `state`) are plain strings: both versions
let new values appear, and a value we do not know is shown, not rejected.

`decode_session_update` never raises: an unknown kind, or a known kind with a field we cannot
read, becomes an `UnknownUpdate` holding the raw object for the UI to show.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from acp_tui.protocol.content import ContentBlock, Meta, ToolCallContent, ToolCallLocation
from acp_tui.protocol.wire import Wire


class _Update(Wire, tag_field="sessionUpdate", kw_only=True):
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


# -- messages ---------------------------------------------------------------------------------


class _Chunk(_Update):
    content: ContentBlock
    message_id: str | UnsetType | None = UNSET


class UserMessageChunk(_Chunk, tag="user_message_chunk"):
    pass


class AgentMessageChunk(_Chunk, tag="agent_message_chunk"):
    pass


class AgentThoughtChunk(_Chunk, tag="agent_thought_chunk"):
    pass


class _MessageUpsert(_Update):
    """v2: the whole message, keyed by `messageId`; `content` null or [] clears it."""

    message_id: str
    content: list[ContentBlock] | UnsetType | None = UNSET


class UserMessage(_MessageUpsert, tag="user_message"):
    pass


class AgentMessage(_MessageUpsert, tag="agent_message"):
    pass


class AgentThought(_MessageUpsert, tag="agent_thought"):
    pass


# -- tool calls -------------------------------------------------------------------------------


class _ToolCallFields(_Update):
    tool_call_id: str
    kind: str | UnsetType | None = UNSET
    status: str | UnsetType | None = UNSET
    content: list[ToolCallContent] | UnsetType | None = UNSET
    locations: list[ToolCallLocation] | UnsetType | None = UNSET
    raw_input: Any = UNSET
    raw_output: Any = UNSET
    name: str | UnsetType | None = UNSET


class ToolCall(_ToolCallFields, tag="tool_call", kw_only=True):
    """v1: a new tool call, whole."""

    title: str


class ToolCallUpdate(_ToolCallFields, tag="tool_call_update"):
    """v1: a patch of a tool call. v2: an upsert that creates the tool call on first sight."""

    title: str | UnsetType | None = UNSET


class ToolCallContentChunk(_Update, tag="tool_call_content_chunk"):
    tool_call_id: str
    content: ToolCallContent


# -- plans ------------------------------------------------------------------------------------


class PlanEntry(Wire):
    content: str
    priority: str = "medium"
    status: str = "pending"
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class Plan(_Update, tag="plan"):
    """v1: the whole plan, replacing the last one."""

    entries: list[PlanEntry]


class PlanContent(Wire):
    """v2 plan payload: `items` (entries), or a type from the future (kept, shown plainly)."""

    type: str
    plan_id: str | UnsetType = UNSET
    entries: list[PlanEntry] | UnsetType = UNSET
    content: str | UnsetType = UNSET
    uri: str | UnsetType = UNSET
    # The commissioning page's example writes `id` where the schema says `planId`.
    id: str | UnsetType = UNSET

    @property
    def key(self) -> str:
        for value in (self.plan_id, self.id):
            if isinstance(value, str):
                return value
        return ""


class PlanUpdate(_Update, tag="plan_update"):
    plan: PlanContent


class PlanRemoved(_Update, tag="plan_removed"):
    plan_id: str


# -- session-wide state -----------------------------------------------------------------------


class CommandInput(Wire):
    hint: str | UnsetType = UNSET
    type: str | UnsetType = UNSET


class AvailableCommand(Wire):
    name: str
    description: str = ""
    input: CommandInput | UnsetType | None = UNSET


class AvailableCommandsUpdate(_Update, tag="available_commands_update"):
    available_commands: list[AvailableCommand]


class CurrentModeUpdate(_Update, tag="current_mode_update"):
    current_mode_id: str | UnsetType = UNSET
    # Some agents follow the docs' example (`modeId`) rather than the schema.
    mode_id: str | UnsetType = UNSET

    @property
    def mode(self) -> str | None:
        for value in (self.current_mode_id, self.mode_id):
            if isinstance(value, str):
                return value
        return None


class ConfigSelectOption(Wire):
    """A select value, or (with `options`) a named group of them."""

    name: str
    value: str | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    group: str | UnsetType = UNSET
    group_id: str | UnsetType = UNSET
    options: list[ConfigSelectOption] | UnsetType = UNSET


class ConfigOption(Wire):
    """v1 `id`, v2 `configId`; `select` or `boolean` (other types are kept and not offered)."""

    name: str
    type: str = "select"
    id: str | UnsetType = UNSET
    config_id: str | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    category: str | UnsetType | None = UNSET
    current_value: Any = None
    options: list[ConfigSelectOption] | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")

    @property
    def key(self) -> str:
        for value in (self.id, self.config_id):
            if isinstance(value, str):
                return value
        return self.name

    def choices(self) -> list[ConfigSelectOption]:
        """Every selectable value, groups flattened, in the agent's order."""
        flat: list[ConfigSelectOption] = []
        for option in self.options or []:
            if isinstance(option.options, list):
                flat.extend(o for o in option.options if isinstance(o.value, str))
            elif isinstance(option.value, str):
                flat.append(option)
        return flat


def display_order(options: list[ConfigOption]) -> list[ConfigOption]:
    """Config options as a client shows them: in the agent's order (its priority), except that
    `model_config` options (a context size, a speed) follow the model selector."""
    model = [o for o in options if o.category == "model"]
    if not model:
        return list(options)
    beside = [o for o in options if o.category == "model_config"]
    ordered: list[ConfigOption] = []
    for option in options:
        if option.category == "model_config":
            continue
        ordered.append(option)
        if option is model[-1]:
            ordered += beside
    return ordered


class ConfigOptionUpdate(_Update, tag="config_option_update"):
    config_options: list[ConfigOption]


class SessionInfoUpdate(_Update, tag="session_info_update"):
    title: str | UnsetType | None = UNSET
    updated_at: str | UnsetType | None = UNSET


class Cost(Wire):
    amount: float
    currency: str


class TurnUsage(Wire):
    """Tokens one turn took (unstable: v1 `PromptResponse.usage`, v2 the idle `state_update`)."""

    total_tokens: int
    input_tokens: int
    output_tokens: int
    thought_tokens: int | None = None
    cached_read_tokens: int | None = None
    cached_write_tokens: int | None = None


_USAGE_COUNTS = {f.encode_name for f in msgspec.structs.fields(TurnUsage)}
_USAGE_REQUIRED = {"totalTokens", "inputTokens", "outputTokens"}


def turn_usage(raw: Any) -> TurnUsage | None:
    """`raw` (as it came: the field is unstable) read as a turn's usage: None without its three
    required counts, an optional count that is not one left out. It never fails the message
    that carries it."""
    if not isinstance(raw, dict):
        return None
    counts = {
        key: value
        for key, value in raw.items()
        if key in _USAGE_COUNTS and type(value) is int and value >= 0
    }
    if not counts.keys() >= _USAGE_REQUIRED:
        return None
    return msgspec.convert(counts, TurnUsage)


class UsageUpdate(_Update, tag="usage_update"):
    used: int
    size: int
    cost: Cost | UnsetType | None = UNSET


class StateUpdate(_Update, tag="state_update"):
    """v2: `running`, `requires_action`, or `idle` with the turn's stop reason."""

    state: str
    stop_reason: str | UnsetType | None = UNSET
    usage: Any = UNSET


class Notice(_Update, tag="notice"):
    severity: str = "info"
    title: str = ""
    description: str | UnsetType | None = UNSET


class CompactionUpdate(_Update, tag="compaction_update"):
    """The agent compacts its context (v2; v1 to clients advertising `session.compaction`):
    one timeline entry per `compactionId`, patched in place (`summary`, `error`: omitted keeps,
    null clears)."""

    compaction_id: str
    status: str
    summary: list[ContentBlock] | UnsetType | None = UNSET
    error: str | UnsetType | None = UNSET


class CompactionSummaryChunk(_Update, tag="compaction_summary_chunk"):
    compaction_id: str
    content: ContentBlock


# -- v2 agent-owned display terminals ---------------------------------------------------------


class TerminalOutput(Wire):
    data: str
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ExitStatus(Wire):
    exit_code: int | UnsetType | None = UNSET
    signal: str | UnsetType | None = UNSET


class TerminalUpdate(_Update, tag="terminal_update"):
    terminal_id: str
    command: str | UnsetType | None = UNSET
    cwd: str | UnsetType | None = UNSET
    output: TerminalOutput | UnsetType | None = UNSET
    exit_status: ExitStatus | UnsetType | None = UNSET


class TerminalOutputChunk(_Update, tag="terminal_output_chunk"):
    terminal_id: str
    data: str


# -- the union, and the lenient decoder -------------------------------------------------------


class UnknownUpdate(msgspec.Struct):
    """An update we could not read as any known kind: kept whole, shown plainly."""

    kind: str
    raw: Any
    reason: str


SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | UserMessage
    | AgentMessage
    | AgentThought
    | ToolCall
    | ToolCallUpdate
    | ToolCallContentChunk
    | Plan
    | PlanUpdate
    | PlanRemoved
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | StateUpdate
    | Notice
    | CompactionUpdate
    | CompactionSummaryChunk
    | TerminalUpdate
    | TerminalOutputChunk
)

KNOWN_KINDS = frozenset(cls.__struct_config__.tag for cls in SessionUpdate.__args__)


class SessionNotification(Wire):
    session_id: str
    update: SessionUpdate
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class _LooseNotification(Wire):
    session_id: str
    update: dict[str, Any]


_decode_notification = msgspec.json.Decoder(SessionNotification).decode
_decode_loose = msgspec.json.Decoder(_LooseNotification).decode
_BAD_FIELD = re.compile(r"at `\$\.update\.(\w+)")
_MAX_DROPPED_FIELDS = 8


def decode_session_notification(
    params: bytes | msgspec.Raw,
) -> tuple[str, SessionUpdate | UnknownUpdate]:
    """Decode `session/update` params into (session id, update).

    Raises `msgspec.DecodeError` only when there is no session id to attach the update to.
    """
    try:
        notification = _decode_notification(params)
    except msgspec.DecodeError as error:
        loose = _decode_loose(params)
        return loose.session_id, _lenient_update(loose.update, str(error))
    return notification.session_id, notification.update


def _lenient_update(update: dict[str, Any], reason: str) -> SessionUpdate | UnknownUpdate:
    """Read a known kind with its unreadable optional fields dropped, as the schema's
    `x-deserialize-default-on-error` asks; anything else becomes an `UnknownUpdate`."""
    kind = update.get("sessionUpdate")
    if not isinstance(kind, str) or kind not in KNOWN_KINDS:
        return UnknownUpdate(str(kind), update, f"unknown update kind {kind!r}")
    fields = dict(update)
    for _ in range(_MAX_DROPPED_FIELDS):
        try:
            converted: SessionUpdate = msgspec.convert(fields, SessionUpdate)
            return converted
        except msgspec.ValidationError as error:
            match = _BAD_FIELD.search(str(error).replace("`$.", "`$.update."))
            field = match.group(1) if match else None
            if field is None or field not in fields or field == "sessionUpdate":
                return UnknownUpdate(kind, update, f"unreadable {kind}: {error}")
            del fields[field]
    return UnknownUpdate(kind, update, reason)
