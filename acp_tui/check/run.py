"""Running `acp-tui check`: `run_check` starts the agent several times in a scratch workspace
(once per `initialize` offer, then once for a whole session) and returns a `Report` of
`Finding`s."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from acp_tui.check import DEFAULT_PROMPT
from acp_tui.check.cases import (
    CALL_TIMEOUT,
    TURN_TIMEOUT,
    Context,
    Finding,
    check_offer,
    check_session,
)

OFFERS = (1, 2, 99)


@dataclass
class Report:
    agent: str
    argv: list[str]
    version: int
    prompt: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether every MUST holds."""
        return not any(finding.breaks_must for finding in self.findings)


async def run_check(
    argv: list[str],
    *,
    version: int = 1,
    prompt: str = DEFAULT_PROMPT,
    env: dict[str, str] | None = None,
    auth: str | None = None,
    call_timeout: float = CALL_TIMEOUT,
    turn_timeout: float = TURN_TIMEOUT,
) -> Report:
    with tempfile.TemporaryDirectory(prefix="acp-tui-check-") as scratch:
        workspace = Path(scratch).resolve()
        (workspace / "README.md").write_text("# A scratch workspace for acp-tui check\n")
        ctx = Context(
            list(argv),
            workspace,
            version,
            prompt,
            dict(env or {}),
            auth,
            call_timeout=call_timeout,
            turn_timeout=turn_timeout,
        )
        for offered in OFFERS:
            await check_offer(ctx, offered)
        await check_session(ctx)
    return Report(ctx.agent, list(argv), version, prompt, ctx.findings)
