"""The cases judged over a whole session's connection once its steps ran: every message
against the schema, stdout, permission requests, fs/* and terminal/* calls; then whether the
agent exits when its stdin closes."""

from __future__ import annotations

from acp_tui.check.context import Context, as_dict
from acp_tui.check.probe import Probe
from acp_tui.check.rules import R_CLIENT_METHODS, R_EXIT, R_PERMISSION, R_SCHEMA, R_STDOUT

EXIT_BOUND = 5.0
"""Seconds an agent gets to exit once its stdin is closed."""


def check_schema(ctx: Context, probe: Probe) -> None:
    if probe.violations:
        first = probe.violations[0]
        count = len(probe.violations)
        detail = f"{count} message(s) break the v{ctx.version} schema; first: {first.problem}"
        ctx.fail("every message matches the schema", R_SCHEMA, detail, first.line)
    else:
        received = sum(1 for line in probe.lines if line.direction == "recv")
        ctx.add("every message matches the schema", "passed", detail=f"{received} messages")


def check_stdout(ctx: Context, probe: Probe) -> None:
    case = "stdout carries only ACP messages"
    if probe.problems:
        detail = f"{len(probe.problems)} line(s) that are not ACP; first: {probe.problems[0]}"
        ctx.fail(case, R_STDOUT, detail)
    else:
        ctx.add(case, "passed", detail="nothing else")


def check_permissions(ctx: Context, probe: Probe) -> None:
    case = "permission requests name a reported tool call"
    if not probe.permission_requests:
        ctx.add(case, "n/a", detail="the agent asked no permission")
        return
    for line, announced in probe.permission_requests:
        params = as_dict(as_dict(line.msg).get("params"))
        call = as_dict(params.get("toolCall") or as_dict(params.get("subject")).get("toolCall"))
        call_id = call.get("toolCallId")
        if call_id is not None and call_id not in announced:
            ctx.fail(case, R_PERMISSION, f"asked about {call_id!r} before reporting it", line)
            return
    ctx.add(case, "passed", detail=f"{len(probe.permission_requests)} request(s)")


def check_client_methods(ctx: Context, probe: Probe) -> None:
    case = "fs/* and terminal/* only as advertised"
    if probe.client_calls:
        first = probe.client_calls[0]
        method = as_dict(first.msg).get("method")
        detail = f"called {method} though the client advertised no such capability"
        ctx.fail(case, R_CLIENT_METHODS, detail, first)
    else:
        ctx.add(case, "passed", detail="none used (none advertised)")


async def check_stdin_close(ctx: Context, probe: Probe) -> None:
    case = "exits when stdin closes"
    assert probe.process is not None
    probe.process.stdin.close()
    if await probe.exited_within(EXIT_BOUND):
        ctx.add(case, "passed", detail=f"exit status {probe.process.returncode}")
    else:
        ctx.fail(case, R_EXIT, f"still running {EXIT_BOUND:g} s after its stdin closed")
