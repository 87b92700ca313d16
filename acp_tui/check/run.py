"""Running `acp-tui check`: `run_check` starts the agent several times in a workspace (a
scratch directory unless `--cwd`) and returns a `Report` of `Finding`s."""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from acp_tui.check.cases import check
from acp_tui.check.context import Context, Finding, Options
from acp_tui.check.handshake import Stop, Unsupported
from acp_tui.check.probe import Tap

Outcome = Literal["passed", "failed", "stopped", "unsupported"]


@dataclass
class Report:
    agent: str
    argv: list[str]
    options: Options
    findings: list[Finding] = field(default_factory=list)
    stopped: str | None = None
    """Why the run stopped at `initialize` (no usable answer)."""
    unsupported: str | None = None
    """Why nothing of the version under test could be checked (the agent answered an older
    one, or refused it)."""

    @property
    def version(self) -> int:
        return self.options.version

    @property
    def passed(self) -> bool:
        """Whether every MUST holds (of a version the agent speaks)."""
        return self.outcome == "passed"

    @property
    def outcome(self) -> Outcome:
        if self.stopped is not None:
            return "stopped"
        if self.unsupported is not None:
            return "unsupported"
        return "failed" if any(f.breaks_must for f in self.findings) else "passed"


async def run_check(
    argv: list[str], options: Options | None = None, tap: Tap | None = None
) -> Report:
    options = options or Options()
    with ExitStack() as stack:
        if options.cwd is not None:
            workspace = options.cwd.resolve()
        else:
            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="acp-tui-check-"))
            workspace = Path(scratch).resolve()
            (workspace / "README.md").write_text("# A scratch workspace for acp-tui check\n")
        ctx = Context(list(argv), workspace, options, tap or Tap())
        report = Report(ctx.agent, list(argv), options, ctx.findings)
        try:
            await check(ctx)
        except Stop as stop:
            report.stopped = str(stop)
        except Unsupported as unsupported:
            report.unsupported = str(unsupported)
        report.agent = ctx.agent
    return report
