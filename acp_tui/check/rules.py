"""The rules `acp-tui check` holds an agent to, each quoted word for word from the protocol's
pages (`docs/protocol/v1/*.mdx`, `v2/*.mdx` of the spec; markup and links dropped), with its
level as the page writes it: MUST, SHOULD, or a lowercase "should" ("advice").

What the spec does not state is no rule: such a check says what clients expect in a `Note`,
which never fails a run. `tests/check/test_rules.py` holds every quoted text to the pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["MUST", "SHOULD", "advice"]


@dataclass(frozen=True, slots=True)
class Rule:
    level: Level
    page: str
    """The page's path under docs/protocol (with its version) and the section."""
    text: str
    """The sentence as the page writes it."""
    v2: Rule | None = None
    """The same rule as the v2 pages write it, where they word it otherwise."""

    def at(self, version: int) -> Rule:
        return self.v2 if version >= 2 and self.v2 is not None else self

    def cite(self) -> str:
        return f'{self.page}: "{self.text}"'


@dataclass(frozen=True, slots=True)
class Note:
    """A check the spec states no rule for: what clients expect, never a failure."""

    text: str

    def cite(self) -> str:
        return f"not a rule of the spec: {self.text}"


def _same(level: Level, page: str, text: str) -> Rule:
    """A rule both versions' pages state in the same words."""
    return Rule(level, f"v1/{page}", text, Rule(level, f"v2/{page}", text))


INIT_VERSION = _same(
    "MUST",
    "initialization#version-negotiation",
    "If the Agent supports the requested version, it MUST respond with the same version. "
    "Otherwise, the Agent MUST respond with the latest version it supports.",
)
INIT_ANSWER = Rule(
    "MUST",
    "v1/initialization",
    "The Agent MUST respond with the chosen protocol version and the capabilities it supports.",
    Rule(
        "MUST",
        "v2/initialization",
        "The Agent MUST respond with the chosen protocol version, the capabilities it supports, "
        "and its implementation information:",
    ),
)
ACT_BY_VERSION = _same(
    "MUST",
    "initialization#protocol-version",
    "Clients and Agents MUST agree on a protocol version and act according to its specification.",
)
"""Cited for a message outside the negotiated version's schema."""
BASELINE = Rule(
    "MUST",
    "v1/initialization#baseline-agent-functionality",
    "As a baseline, all Agents MUST support `session/new`, `session/prompt`, `session/cancel`, "
    "and `session/update`.",
)
BASELINE_CONTENT = Rule(
    "MUST",
    "v1/initialization#prompt-capabilities",
    "As a baseline, all Agents MUST support `ContentBlock::Text` and `ContentBlock::ResourceLink` "
    "in `session/prompt` requests.",
    Rule(
        "MUST",
        "v2/initialization#prompt-capabilities",
        "As a baseline, Agents that advertise `session` MUST support `ContentBlock::Text` and "
        "`ContentBlock::ResourceLink` in `session/prompt` requests.",
    ),
)
AUTH_SURFACE = Rule(
    "MUST",
    "v2/initialization#authentication-methods",
    "Returning one or more valid entries advertises the Agent's authentication surface and means "
    "the Agent MUST implement both `auth/login` and `auth/logout`.",
)
SESSION_ID = _same(
    "MUST",
    "session-setup#creating-a-session",
    "The Agent MUST respond with a unique Session ID that identifies this conversation:",
)
LOAD_REPLAY = Rule(
    "MUST",
    "v1/session-setup#loading-sessions",
    "The Agent MUST replay the entire conversation to the Client in the form of `session/update` "
    "notifications (like `session/prompt`).",
)
LOAD_ANSWER = Rule(
    "MUST",
    "v1/session-setup#loading-sessions",
    "When all the conversation entries have been streamed to the Client, the Agent MUST respond "
    "to the original `session/load` request.",
)
RESUME_NO_REPLAY = Rule(
    "MUST",
    "v1/session-setup#resuming-sessions",
    "Unlike `session/load`, the Agent MUST NOT replay the conversation history via "
    "`session/update` notifications before responding.",
    Rule(
        "MUST",
        "v2/session-setup#resuming-sessions",
        "When `replayFrom` is omitted or `null`, the Agent MUST NOT replay the conversation "
        "history via `session/update` notifications before responding.",
    ),
)
RESUME_BASELINE = Rule(
    "MUST",
    "v2/session-setup#resuming-sessions",
    "Agents that support the `session` method surface MUST support `session/resume`, allowing "
    "Clients to reconnect to existing sessions.",
)
CLOSE = _same(
    "MUST",
    "session-setup#closing-sessions",
    "The Agent MUST cancel any ongoing work for that session as if `session/cancel` had been "
    "called, then free the resources associated with the session.",
)
LIST = Rule(
    "MUST",
    "v1/session-list#listing-sessions",
    "The Agent MUST respond with a list of sessions and optional pagination metadata:",
)
DELETE_UNKNOWN = Rule(
    "SHOULD",
    "v1/session-delete",
    "Deleting an already-deleted session, or a session that never existed, SHOULD succeed "
    "silently.",
)
CONFIG_ANSWER = _same(
    "MUST",
    "session-config-options#setting-a-config-option",
    "The Agent MUST respond with the complete list of all configuration options and their "
    "current values:",
)
STOP = Rule(
    "MUST",
    "v1/prompt-turn#4-check-for-completion",
    "If there are no pending tool calls, the turn ends and the Agent MUST respond to the "
    "original `session/prompt` request with a `StopReason`:",
    Rule(
        "MUST",
        "v2/prompt-lifecycle#idle",
        "When the Agent is ready to process a new prompt, it MUST report `idle` with a "
        "`state_update` notification. When the transition ends foreground work, the Agent MUST "
        "include the corresponding `StopReason`:",
    ),
)
CUSTOM_STOP = Rule(
    "MUST",
    "v2/prompt-lifecycle#stop-reasons",
    "Custom stop reasons MUST begin with `_`; unknown non-underscore stop reasons are reserved "
    "for future ACP variants.",
)
PROMPT_ACCEPTED = Rule(
    "MUST",
    "v2/prompt-lifecycle#accepting-a-prompt",
    "Upon receiving a prompt request, the Agent MUST respond once it has accepted the prompt.",
)
USER_MESSAGE = Rule(
    "MUST",
    "v2/prompt-lifecycle#user-message-acknowledgement",
    "After accepting the prompt, the Agent MUST report where the user message was inserted in "
    "session history.",
)
RUNNING = Rule(
    "MUST",
    "v2/prompt-lifecycle#running",
    "When foreground work starts or resumes, the Agent MUST send a `state_update` notification "
    'with `state: "running"`:',
)
MESSAGE_ID = Rule(
    "MUST",
    "v2/prompt-lifecycle#message-ids",
    "The Agent MUST include an opaque `messageId` on message updates and message chunks.",
)
REQUIRES_ACTION = Rule(
    "SHOULD",
    "v2/prompt-lifecycle#requires-action",
    "While foreground work is blocked on a permission response or other user action, the Agent "
    "SHOULD report `requires_action`.",
)
CANCELLED = Rule(
    "MUST",
    "v1/prompt-turn#cancellation",
    "After all ongoing operations have been successfully aborted and pending updates have been "
    "sent, the Agent MUST respond to the original `session/prompt` request with the `cancelled` "
    "stop reason.",
    Rule(
        "MUST",
        "v2/prompt-lifecycle#cancellation",
        "After all ongoing operations have been successfully aborted and pending updates have "
        "been sent, the Agent MUST send an idle `state_update` session update with the "
        "`cancelled` stop reason.",
    ),
)
AFTER_CANCEL = Rule(
    "MUST",
    "v1/prompt-turn#cancellation",
    "The Agent MAY send `session/update` notifications with content or tool call updates after "
    "receiving the `session/cancel` notification, but it MUST ensure that it does so before "
    "responding to the `session/prompt` request.",
    Rule(
        "MUST",
        "v2/prompt-lifecycle#cancellation",
        "The Agent MAY send `session/update` notifications with content or tool call updates "
        "after receiving the `session/cancel` notification, but it MUST ensure that it does so "
        "before sending the idle `state_update` session update that reports cancellation.",
    ),
)
GRANTED = Rule(
    "SHOULD",
    "v1/prompt-turn#5-tool-invocation-and-status-reporting",
    "Once permission is granted (if required), the Agent SHOULD invoke the tool and report a "
    "status update marking the tool as `in_progress`:",
    Rule(
        "SHOULD",
        "v2/prompt-lifecycle#tool-invocation-and-status-reporting",
        "Once permission is granted (if required), the Agent SHOULD invoke the tool and report a "
        "status update marking the tool as `in_progress`:",
    ),
)
NO_FS = Rule(
    "MUST",
    "v1/file-system#checking-support",
    "If `readTextFile` or `writeTextFile` is `false` or not present, the Agent MUST NOT attempt "
    "to call the corresponding filesystem method.",
)
NO_TERMINAL = Rule(
    "MUST",
    "v1/terminals#checking-support",
    "If `terminal` is `false` or not present, the Agent MUST NOT attempt to call any terminal "
    "methods.",
)
STDOUT = _same(
    "MUST",
    "transports#stdio",
    "The agent MUST NOT write anything to its `stdout` that is not a valid ACP message.",
)
UNKNOWN_EXTENSION = _same(
    "advice",
    "extensibility#custom-requests",
    "If the receiving end doesn't recognize the custom method name, it should respond with the "
    'standard "Method not found" error:',
)
UNKNOWN_NOTIFICATION = _same(
    "SHOULD",
    "extensibility#custom-notifications",
    "Unlike with custom requests, implementations SHOULD ignore unrecognized notifications.",
)

# -- what the spec does not state --------------------------------------------------------------

NOTE_UNKNOWN_METHOD = Note(
    "JSON-RPC 2.0 answers a method that does not exist with -32601 (Method not found), and "
    "clients (Zed, acp-tui) treat any other answer as the method having worked"
)
NOTE_PARAMS = Note(
    "JSON-RPC 2.0 answers invalid params with -32602 (Invalid params); clients show that "
    "as their own mistake, any other code as the agent's"
)
NOTE_PARSE = Note(
    "JSON-RPC 2.0 answers a line that is not JSON with -32700 (Parse error), id null, and "
    "goes on; an agent that stops or stays silent leaves the client waiting"
)
NOTE_UNKNOWN_SESSION = Note(
    "a request about a session the agent does not know is best refused with an error: "
    "a client that answers a result believes the session exists"
)
NOTE_BAD_AUTH = Note(
    "an `authenticate` with a method id the agent never offered is best refused with an "
    "error, so that the client does not believe it is signed in"
)
NOTE_SET_MODE = Note(
    "the session-modes page states no level for `session/set_mode`, but clients (Zed, "
    "acp-tui) switch modes with it and expect `{}`"
)
NOTE_AFTER_TURN = Note(
    "the spec says where a cancelled turn's updates go, not an ordinary turn's; clients "
    "(Zed, acp-tui) end the turn at its response, and show what comes later out of place"
)
NOTE_PERMISSION_FIRST = Note(
    "the spec does not require the tool call to be reported before its permission request; "
    "clients merge the request's `toolCall` into the tool call either way"
)
NOTE_UNANNOUNCED_UPDATE = Note(
    "a v1 `tool_call_update` for an id no `tool_call` announced: v1 names no rule, "
    "but clients (Zed) drop it or show a tool call with no title"
)
NOTE_REJECTED = Note(
    "the spec says what a granted permission leads to, not a rejected one; clients expect "
    "the tool not to run (its call `failed`, or left as it was)"
)
NOTE_EXIT = Note(
    "the transports page says the client closes stdin to end the agent, not how fast the "
    "agent must exit; clients (acp-tui, Zed) kill what is still running a few seconds later"
)
