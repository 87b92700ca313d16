"""What the cases share: the `Context` of one `acp-tui check` run (the agent's command, the
version under test, what the agent answered so far) and the `Finding`s it collects."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from acp_tui.check import CALL_TIMEOUT, TURN_TIMEOUT
from acp_tui.check.probe import Line
from acp_tui.check.rules import Rule
from acp_tui.protocol.jsonrpc import RpcError

Status = Literal["passed", "failed", "n/a", "skipped"]


@dataclass(slots=True)
class Finding:
    case: str
    status: Status
    rule: Rule | None = None
    detail: str = ""
    line: str | None = None
    needs_model: bool = False

    @property
    def breaks_must(self) -> bool:
        return self.status == "failed" and self.rule is not None and self.rule.level == "MUST"


@dataclass
class Context:
    argv: list[str]
    workspace: Path
    version: int
    prompt: str
    env: dict[str, str] = field(default_factory=dict)
    auth: str | None = None
    """An auth method to `authenticate` with before `session/new` (`--auth`)."""
    call_timeout: float = CALL_TIMEOUT
    turn_timeout: float = TURN_TIMEOUT
    findings: list[Finding] = field(default_factory=list)
    agent: str = "the agent"
    capabilities: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)
    """session/new's result."""
    turn_text: str = ""
    """The agent's message text of the prompt turn, for the replay check."""

    def add(self, case: str, status: Status, **fields: Any) -> Finding:
        finding = Finding(case, status, **fields)
        self.findings.append(finding)
        return finding

    def fail(
        self, case: str, rule: Rule, detail: str, line: Line | None = None, **more: Any
    ) -> None:
        self.add(case, "failed", rule=rule, detail=detail, line=line.text if line else None, **more)

    @property
    def session_id(self) -> str | None:
        value = self.session.get("sessionId")
        return value if isinstance(value, str) else None

    def offers(self, method: str) -> bool:
        """Whether the agent offers the optional session `method` ("list", "resume", …): in
        v1 under `sessionCapabilities`; in v2 list, resume and close are the baseline of any
        agent with `session`."""
        if self.version >= 2:
            baseline = method in ("list", "resume", "close") and self.advertised("session")
            return baseline or self.advertised("session", method)
        return self.advertised("sessionCapabilities", method)

    def advertised(self, *path: str) -> bool:
        """Whether the agent's capabilities hold a non-null, non-false marker at `path`."""
        node: Any = self.capabilities
        for key in path:
            if not isinstance(node, dict):
                return False
            node = node.get(key)
        return node is not None and node is not False


def why(error: BaseException, timeout: float) -> str:
    """A failed request in a few words."""
    if isinstance(error, RpcError):
        data = error.data
        details = data.get("details") if isinstance(data, dict) else data
        said = f": {details}" if isinstance(details, str) and details else ""
        return f"{error.message} ({error.code}){said}"
    if isinstance(error, TimeoutError):
        return f"no answer within {timeout:g} s"
    return repr(error)


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is an object, else an empty one: an agent's message may hold anything."""
    return value if isinstance(value, dict) else {}
