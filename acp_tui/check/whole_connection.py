"""The cases judged over a whole session's connection once its steps ran: every message
against the schema (what an earlier case already reported is not counted again), stdout,
tool-call lifecycle, `fs/*` and `terminal/*` calls; then whether the agent exits when its
stdin closes."""

from __future__ import annotations

from acp_tui.check.context import Context, as_dict
from acp_tui.check.probe import Probe
from acp_tui.check.rules import (
    ACT_BY_VERSION,
    NO_FS,
    NO_TERMINAL,
    NOTE_EXIT,
    NOTE_PERMISSION_FIRST,
    NOTE_UNANNOUNCED_UPDATE,
    STDOUT,
)

EXIT_BOUND = 5.0
"""Seconds an agent gets to exit once its stdin is closed."""


def check_schema(ctx: Context, probe: Probe) -> None:
    case = "every message matches the schema"
    fresh = [v for v in probe.violations if id(v.line) not in ctx.blamed]
    if fresh:
        first = fresh[0]
        detail = f"{len(fresh)} message(s) break the v{ctx.version} schema; first: {first.problem}"
        ctx.fail(case, ACT_BY_VERSION, detail, first.line)
    elif probe.violations:
        cases = sorted({ctx.blamed[id(v.line)] for v in probe.violations})
        ctx.add(case, "skipped", detail=f"only what {', '.join(cases)} reported")
    else:
        received = sum(1 for line in probe.lines if line.direction == "recv")
        ctx.add(case, "passed", detail=f"{received} messages")


def check_stdout(ctx: Context, probe: Probe) -> None:
    case = "stdout carries only ACP messages"
    problems = ctx.unblamed(probe.problems)
    if problems:
        detail = f"{len(problems)} line(s) that are not ACP; first: {problems[0]}"
        ctx.fail(case, STDOUT, detail)

    else:
        ctx.add(case, "passed", detail="nothing else")


def check_tool_calls(ctx: Context, probe: Probe) -> None:
    """v1: a permission request, or an update, about a tool call not announced yet."""
    for case, note, lines in (
        (
            "permission requests name a reported tool call",
            NOTE_PERMISSION_FIRST,
            [
                line
                for line, announced in probe.permission_requests
                if _call_id(line) not in announced
            ],
        ),
        ("tool_call_update only for announced ids", NOTE_UNANNOUNCED_UPDATE, probe.unannounced),
    ):
        if ctx.version >= 2:
            ctx.add(case, "n/a", detail="ACP v2: the first update creates the tool call")
        elif lines:
            detail = f"{len(lines)} about a tool call not reported yet: {_call_id(lines[0])!r}"
            ctx.remark(case, note, detail, lines[0])
        else:
            ctx.add(case, "passed", detail="none unannounced")


def _call_id(line: object) -> str:
    msg = as_dict(getattr(line, "msg", None))
    params = as_dict(msg.get("params"))
    call = (
        params.get("toolCall")
        or params.get("update")
        or as_dict(params.get("subject")).get("toolCall")
    )
    return str(as_dict(call).get("toolCallId"))


def check_client_methods(ctx: Context, probe: Probe) -> None:
    for case, prefix, rule in (
        ("no fs/* unless advertised", "fs/", NO_FS),
        ("no terminal/* unless advertised", "terminal/", NO_TERMINAL),
    ):
        if ctx.version >= 2:
            ctx.add(case, "n/a", detail="ACP v2 has no client fs/* or terminal/*")
            continue
        calls = [
            c for c in probe.client_calls if str(as_dict(c.msg).get("method")).startswith(prefix)
        ]
        if calls:
            method = as_dict(calls[0].msg).get("method")
            ctx.fail(
                case, rule, f"called {method}; the client advertised no such capability", calls[0]
            )
        else:
            ctx.add(case, "passed", detail="none used (none advertised)")


async def check_stdin_close(ctx: Context, probe: Probe) -> None:
    case = "exits when stdin closes"
    assert probe.process is not None
    if probe.remote is not None:
        ctx.add(case, "n/a", detail="a remote agent: its server owns its process")
        return
    if probe.ended and probe.process.returncode is not None:
        ctx.add(case, "skipped", detail=f"already gone: {probe.exit_description()}")
        return
    probe.process.stdin.close()
    if await probe.exited_within(EXIT_BOUND):
        ctx.add(case, "passed", detail=f"exit status {probe.process.returncode}")
    else:
        ctx.remark(case, NOTE_EXIT, f"still running {EXIT_BOUND:g} s after its stdin closed")
