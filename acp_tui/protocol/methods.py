"""The ACP methods acp-tui calls on an agent, and the agent's requests it answers (other than
the fs/terminal services), for v1 and the v2 draft.

What we send is exact (each struct is one method's params for one version; tests validate them
against the official schema). What we receive is lenient: results decode into structs whose
fields are all optional, so a missing or extra field never fails a session.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from acp_tui.protocol.content import ContentBlock, Meta
from acp_tui.protocol.updates import ConfigOption, ToolCallUpdate
from acp_tui.protocol.wire import Wire


class Implementation(Wire):
    name: str
    version: str
    title: str | UnsetType = UNSET


# -- initialize -------------------------------------------------------------------------------


class FileSystemCapability(Wire):
    read_text_file: bool = False
    write_text_file: bool = False


class ClientCapabilitiesV1(Wire):
    fs: FileSystemCapability = msgspec.field(default_factory=FileSystemCapability)
    terminal: bool = False
    auth: dict[str, Any] | UnsetType = UNSET
    session: dict[str, Any] | UnsetType = UNSET
    plan: dict[str, Any] | UnsetType = UNSET
    elicitation: dict[str, Any] | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class InitializeRequestV1(Wire):
    protocol_version: int
    client_capabilities: ClientCapabilitiesV1
    client_info: Implementation


class InitializeRequestV2(Wire):
    protocol_version: int
    info: Implementation
    capabilities: dict[str, Any] = msgspec.field(default_factory=dict)


class AgentInfo(Wire):
    name: str = ""
    version: str = ""
    title: str | None = None


class AuthMethod(Wire):
    """v1 `id`, v2 `methodId`; `type` absent means an agent-handled method.

    `terminal` methods carry `args` and `env` (v1 a map, v2 a list of `{name, value}`); the
    legacy `env_var` ones `vars` and `link`. Those are read as they come (`Any`): a malformed
    one must not fail `initialize`, so `acp_tui.conversation.sign_in` checks them."""

    name: str = ""
    id: str | UnsetType = UNSET
    method_id: str | UnsetType = UNSET
    type: str = "agent"
    description: str | None = None
    args: Any = None
    env: Any = None
    vars: Any = None
    link: Any = None
    meta: Any = msgspec.field(default=None, name="_meta")

    @property
    def key(self) -> str:
        return next((v for v in (self.method_id, self.id) if isinstance(v, str)), self.name)


class InitializeResponse(Wire):
    """Both versions' fields: which ones are present tells the shape the agent really speaks
    (some v1 agents echo any `protocolVersion` we offer)."""

    protocol_version: int = 1
    agent_capabilities: dict[str, Any] | None = None
    agent_info: AgentInfo | None = None
    capabilities: dict[str, Any] | None = None
    info: AgentInfo | None = None
    auth_methods: list[AuthMethod] = msgspec.field(default_factory=list)


# -- sessions ---------------------------------------------------------------------------------


class NewSessionRequest(Wire):
    cwd: str
    mcp_servers: list[dict[str, Any]] | UnsetType = UNSET
    additional_directories: list[str] | UnsetType = UNSET


class LoadSessionRequest(Wire):
    session_id: str
    cwd: str
    mcp_servers: list[dict[str, Any]]
    additional_directories: list[str] | UnsetType = UNSET


class SetProviderRequest(Wire):
    """`providers/set` (unstable): where one of the agent's LLM providers sends requests."""

    provider_id: str
    api_type: str
    base_url: str
    headers: dict[str, str] | UnsetType = UNSET


class DisableProviderRequest(Wire):
    provider_id: str


class ProviderCurrent(Wire):
    api_type: str = ""
    base_url: str = ""


class ProviderInfo(Wire):
    """One of the agent's LLM providers (`providers/list`)."""

    provider_id: str
    supported: list[Any] | None = None
    """API types (strings; anything else in the list is skipped, as the schema says)."""
    required: bool | None = None
    current: ProviderCurrent | None = None
    """Where it sends requests now; None: switched off."""


class ListProvidersResponse(Wire):
    providers: list[ProviderInfo] = msgspec.field(default_factory=list)


class ForkSessionRequest(Wire):
    """`session/fork` (unstable): a new session with the context of `session_id`."""

    session_id: str
    cwd: str
    mcp_servers: list[dict[str, Any]] | UnsetType = UNSET
    additional_directories: list[str] | UnsetType = UNSET


class ReplayFrom(msgspec.Struct, tag_field="type", tag="start"):
    pass


class ResumeSessionRequest(Wire):
    session_id: str
    cwd: str
    mcp_servers: list[dict[str, Any]] | UnsetType = UNSET
    replay_from: ReplayFrom | UnsetType = UNSET
    additional_directories: list[str] | UnsetType = UNSET


class SessionMode(Wire):
    id: str
    name: str = ""
    description: str | None = None


class SessionModeState(Wire):
    current_mode_id: str = ""
    available_modes: list[SessionMode] = msgspec.field(default_factory=list)


class SessionSetup(Wire):
    """The result of session/new, load, resume and fork (load may answer `null`)."""

    session_id: str | None = None
    modes: SessionModeState | None = None
    config_options: list[ConfigOption] | None = None


class ListSessionsRequest(Wire):
    cwd: str | UnsetType = UNSET
    cursor: str | UnsetType = UNSET


class SessionInfo(Wire):
    session_id: str
    cwd: str = ""
    title: str | None = None
    updated_at: str | None = None


class ListSessionsResponse(Wire):
    sessions: list[SessionInfo] = msgspec.field(default_factory=list)
    next_cursor: str | None = None


class SessionIdParams(Wire):
    """Params of session/cancel, session/close and session/delete."""

    session_id: str


class AuthenticateRequest(Wire):
    method_id: str


# -- prompt turns -----------------------------------------------------------------------------


class PromptRequest(Wire):
    session_id: str
    prompt: list[ContentBlock]


class PromptResponse(Wire):
    """v1: the turn's `stopReason`. v2: an acceptance receipt, maybe with the user message id."""

    stop_reason: str | None = None
    message_id: str | None = None
    usage: Any = None
    """Unstable: the turn's tokens (`updates.turn_usage` reads it)."""


class SetModeRequest(Wire):
    session_id: str
    mode_id: str


class SetConfigOptionRequest(Wire):
    """v1 sends a select's value bare and a boolean with `type`; v2 always tags the value."""

    session_id: str
    config_id: str
    value: str | bool
    type: str | UnsetType = UNSET


class SetConfigOptionResponse(Wire):
    config_options: list[ConfigOption] | None = None


# -- permission requests (agent -> client) ----------------------------------------------------


class PermissionOption(Wire):
    option_id: str
    name: str = ""
    kind: str = ""


class PermissionSubject(Wire):
    """v2: what is asked about: a tool call, a command, or a type from the future."""

    type: str
    tool_call: ToolCallUpdate | None = None
    command: str | None = None
    cwd: str | None = None
    tool_call_id: str | None = None
    terminal_id: str | None = None


class PermissionRequest(Wire):
    """v1 carries the tool call; v2 a title, a description and a subject."""

    session_id: str
    options: list[PermissionOption]
    tool_call: ToolCallUpdate | None = None
    title: str | None = None
    description: str | None = None
    subject: PermissionSubject | None = None

    @property
    def tool_call_update(self) -> ToolCallUpdate | None:
        if self.tool_call is not None:
            return self.tool_call
        return self.subject.tool_call if self.subject is not None else None


class SelectedOutcome(msgspec.Struct, tag_field="outcome", tag="selected", rename="camel"):
    option_id: str


class CancelledOutcome(msgspec.Struct, tag_field="outcome", tag="cancelled"):
    pass


class PermissionResponse(msgspec.Struct):
    outcome: SelectedOutcome | CancelledOutcome


# -- elicitation (agent -> client) ------------------------------------------------------------


class ElicitationRequest(Wire):
    """`elicitation/create`: a form (`requestedSchema`) or a URL (`url`, `elicitationId`),
    scoped to a session (and maybe a tool call) or to a request outside any session."""

    mode: str
    message: str = ""
    session_id: str | None = None
    tool_call_id: str | None = None
    request_id: int | str | None = None
    requested_schema: Any = None
    elicitation_id: str | None = None
    url: str | None = None


class ElicitationResponse(Wire):
    action: str
    content: dict[str, Any] | None = None


class CompleteElicitation(Wire):
    """`elicitation/complete`: the out-of-band interaction of a URL elicitation finished."""

    elicitation_id: str
