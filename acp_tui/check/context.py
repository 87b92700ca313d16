"""What the cases share: the `Context` of one `acp-tui check` run (the agent's command and
options, the version under test, what the agent answered so far) and the `Finding`s it
collects."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from acp_tui.check import CALL_TIMEOUT, DEFAULT_PROMPT, LONG_PROMPT, TOOL_PROMPT, TURN_TIMEOUT
from acp_tui.check.probe import Line, Tap
from acp_tui.check.rules import Note, Rule
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.remote.target import RemoteTarget

Status = Literal["passed", "failed", "note", "n/a", "skipped"]


@dataclass(slots=True)
class Finding:
    case: str
    status: Status
    rule: Rule | None = None
    """The rule a failed case broke, quoted."""
    note: Note | None = None
    """What clients expect, for a check the spec states no rule for."""
    detail: str = ""
    line: str | None = None
    needs_model: bool = False
    seconds: float = 0.0

    @property
    def breaks_must(self) -> bool:
        return self.status == "failed" and self.rule is not None and self.rule.level == "MUST"


@dataclass(slots=True)
class Options:
    """How the author asked for the run (the command line's options)."""

    version: int = 1
    prompt: str = DEFAULT_PROMPT
    long_prompt: str = LONG_PROMPT
    tool_prompt: str = TOOL_PROMPT
    env: dict[str, str] = field(default_factory=dict)
    auth: str | None = None
    """An auth method to sign in with before `session/new` (`--auth`)."""
    mode: str | None = None
    """A mode (or mode config option value) to put each new session in (`--mode`)."""
    cwd: Path | None = None
    """The workspace (`--cwd`); default: a scratch directory."""
    call_timeout: float = CALL_TIMEOUT
    turn_timeout: float = TURN_TIMEOUT
    remote: RemoteTarget | None = None
    """A remote agent (`--connect`): each fresh process of a case is a fresh connection."""


@dataclass
class Context:
    argv: list[str]
    workspace: Path
    options: Options
    tap: Tap = field(default_factory=Tap)
    findings: list[Finding] = field(default_factory=list)
    agent: str = "the agent"
    capabilities: dict[str, Any] = field(default_factory=dict)
    auth_methods: list[Any] = field(default_factory=list)
    session: dict[str, Any] = field(default_factory=dict)
    """session/new's result."""
    turn_text: str = ""
    """The agent's message text of the prompt turn, for the replay check."""
    tool_calls: int = 0
    """Tool calls the session's turns reported, for the replay check."""
    blamed: dict[int, str] = field(default_factory=dict)
    """The case that failed on each line already (by the line's identity): one root cause is
    reported once."""
    blamed_texts: list[str] = field(default_factory=list)
    _since: float = field(default_factory=time.monotonic)

    @property
    def version(self) -> int:
        return self.options.version

    @property
    def call_timeout(self) -> float:
        return self.options.call_timeout

    def add(self, case: str, status: Status, **fields: Any) -> Finding:
        now = time.monotonic()
        finding = Finding(case, status, seconds=round(now - self._since, 3), **fields)
        self._since = now
        self.findings.append(finding)
        return finding

    def fail(
        self, case: str, rule: Rule, detail: str, line: Line | None = None, **more: Any
    ) -> None:
        """A failed case, or a skipped one when its line already failed an earlier case."""
        if line is not None and id(line) in self.blamed:
            first = self.blamed[id(line)]
            self.add(case, "skipped", detail=f"the message that failed {first!r}", **more)
            return
        if line is not None:
            self.blame(case, line)
        rule = rule.at(self.version)
        self.add(case, "failed", rule=rule, detail=detail, line=line.text if line else None, **more)

    def blame(self, case: str, line: Line) -> None:
        """`line` is `case`'s: the whole-connection cases do not count it again."""
        self.blamed[id(line)] = case
        self.blamed_texts.append(line.text)

    def unblamed(self, problems: list[str]) -> list[str]:
        """The connection's `problems` that are not about a line a case already reported."""
        return [p for p in problems if not any(t[:100] in p for t in self.blamed_texts)]

    def remark(
        self, case: str, note: Note, detail: str, line: Line | None = None, **more: Any
    ) -> None:
        """A case that found what the spec does not forbid but clients trip over."""
        if line is not None:
            self.blame(case, line)
        self.add(case, "note", note=note, detail=detail, line=line.text if line else None, **more)

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

    def prompt_capable(self, kind: str) -> bool:
        path = ("session", "prompt", kind) if self.version >= 2 else ("promptCapabilities", kind)
        return self.advertised(*path)


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
