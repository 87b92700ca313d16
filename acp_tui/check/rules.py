"""The rules `acp-tui check` holds an agent to: each with its level (MUST or SHOULD) and the page
of the protocol (or JSON-RPC) that states it, cited by a failed `Finding`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["MUST", "SHOULD"]


@dataclass(frozen=True, slots=True)
class Rule:
    level: Level
    page: str
    text: str

    def cite(self) -> str:
        return f"{self.page}: {self.text}"


R_VERSION = Rule(
    "MUST",
    "protocol/initialization#protocol-version",
    "if the Agent supports the requested version, it MUST respond with the same version; "
    "otherwise with the latest version it supports",
)
R_INIT_SHAPE = Rule(
    "MUST",
    "protocol/initialization",
    "the Agent MUST respond with the chosen protocol version and the capabilities it supports "
    "(in the shape of that version's schema)",
)
R_SCHEMA = Rule("MUST", "protocol/schema", "every message MUST match the schema of its version")
R_BASELINE = Rule(
    "MUST",
    "protocol/initialization#baseline-agent-functionality",
    "all Agents MUST support session/new, session/prompt, session/cancel and session/update",
)
R_ADVERTISED = Rule(
    "MUST",
    "protocol/initialization#capabilities",
    "a method of a capability the Agent advertised MUST work as specified",
)
R_UNKNOWN = Rule(
    "MUST",
    "JSON-RPC 2.0 §5.1; protocol/extensibility",
    "a method the Agent does not know MUST be answered with error -32601 (Method not found)",
)
R_PARAMS = Rule(
    "SHOULD",
    "JSON-RPC 2.0 §5.1",
    "invalid method parameters SHOULD be answered with error -32602 (Invalid params)",
)
R_STOP = Rule(
    "MUST",
    "protocol/prompt-turn#stop-reasons",
    "a prompt turn MUST end with one of the stop reasons of the schema",
)
R_AFTER = Rule(
    "MUST",
    "protocol/prompt-turn#cancellation",
    "updates of a turn MUST be sent before the Agent responds to its session/prompt",
)
R_CANCEL = Rule(
    "MUST",
    "protocol/prompt-turn#cancellation",
    "after session/cancel the Agent MUST end the turn with the `cancelled` stop reason",
)
R_PERMISSION = Rule(
    "SHOULD",
    "protocol/tool-calls#requesting-permission",
    "a permission request SHOULD be about a tool call the Agent has already reported",
)
R_CLIENT_METHODS = Rule(
    "MUST",
    "protocol/initialization#client-capabilities",
    "capabilities the Client did not advertise MUST be treated as unsupported: no fs/* or "
    "terminal/* requests",
)
R_STDOUT = Rule(
    "MUST",
    "protocol/transports#stdio",
    "the Agent MUST NOT write anything to its stdout that is not a valid ACP message",
)
R_EXIT = Rule(
    "SHOULD",
    "protocol/transports#stdio",
    "the Client ends the Agent by closing its stdin: the Agent SHOULD exit promptly",
)
