"""`acp-tui check`: the demo agent keeps every rule (v1 and v2); an agent that breaks one rule
fails exactly the case for it, with the rule, its level and the line; reports as text, JSON and
JUnit XML; exit 0 only when every MUST holds."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from acp_tui.check.report import text
from acp_tui.check.run import Report, run_check
from tests.agents.hostile import AGENTS, HERE

FLAWED = [sys.executable, str(HERE / "flawed.py")]
DEMO = [sys.executable, "-m", "acp_tui.demo", "--speed", "1"]
ACP_TUI = [sys.executable, "-m", "acp_tui"]


FLAWS = [
    "none",
    "echo-version",
    "unknown-method-ok",
    "params-internal",
    "bad-stop-reason",
    "late-updates",
    "deaf-to-cancel",
    "permission-first",
    "uses-fs",
    "bad-update",
    "no-exit",
]
HOSTILE = ["polite", "late-updates", "stdout-noise", "protocol-junk", "deaf-to-cancel"]


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    """Every flawed and hostile agent checked once, all at the same time: each check mostly
    waits (on turns, timeouts, exits), so together they take about as long as the slowest."""

    async def check_all() -> list[Report]:
        checks = [run_check([*FLAWED, flaw]) for flaw in FLAWS]
        checks += [
            run_check(AGENTS[name].argv(), call_timeout=2, turn_timeout=5) for name in HOSTILE
        ]
        return await asyncio.gather(*checks)

    keys = [*FLAWS, *(f"hostile:{name}" for name in HOSTILE)]
    return dict(zip(keys, asyncio.run(check_all()), strict=True))


def failed(report: Report) -> dict[str, str]:
    """The failed cases, each with the level of the rule it broke."""
    return {f.case: f.rule.level for f in report.findings if f.status == "failed" and f.rule}


@pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
async def test_the_demo_agent_keeps_every_rule(version: int) -> None:
    report = await run_check(DEMO, version=version, prompt="slow 2")
    assert failed(report) == {}, text(report)
    assert report.passed
    statuses = {f.case: f.status for f in report.findings}
    for case in ("session/new", "prompt turn", "cancel mid-turn", "session/list", "session/resume"):
        assert statuses[case] == "passed", text(report)
    assert statuses["every message matches the schema"] == "passed"
    assert statuses["exits when stdin closes"] == "passed"
    assert report.agent == "acp-tui demo agent 0.1.0"


def test_an_agent_that_keeps_the_rules_passes(reports: dict[str, Report]) -> None:
    report = reports["none"]
    assert failed(report) == {}, text(report)
    assert {f.case: f.status for f in report.findings}["cancel mid-turn"] == "passed"


@pytest.mark.parametrize(
    ("flaw", "case", "level", "detail"),
    [
        ("echo-version", "initialize: offer 99", "MUST", "offered 99, answered 99"),
        ("echo-version", "initialize: offer 2", "MUST", "answered version 2 in another shape"),
        ("unknown-method-ok", "unknown method", "MUST", "answered with a result, not an error"),
        ("params-internal", "invalid params", "SHOULD", "answered -32603"),
        ("bad-stop-reason", "prompt turn", "MUST", "stopReason 'done'"),
        ("late-updates", "prompt turn", "MUST", "1 update(s) after the turn ended"),
        ("deaf-to-cancel", "cancel mid-turn", "MUST", "ended 'end_turn'"),
        (
            "permission-first",
            "permission requests name a reported tool call",
            "SHOULD",
            "asked about 'call-1' before reporting it",
        ),
        ("uses-fs", "fs/* and terminal/* only as advertised", "MUST", "called fs/read_text_file"),
        ("bad-update", "every message matches the schema", "MUST", "break the v1 schema"),
        ("no-exit", "exits when stdin closes", "SHOULD", "still running 5 s after"),
    ],
)
def test_each_broken_rule_fails_its_case_and_no_other(
    reports: dict[str, Report], flaw: str, case: str, level: str, detail: str
) -> None:
    report = reports[flaw]
    broken = failed(report)
    # Some flaws break two rules at once: an echoed version is wrong for both offers; a method
    # answered with a result fails both unknown-method cases; a made-up stop reason or tool
    # status is also outside the schema (and a bad update is part of the turn).
    also = {
        "echo-version": {"initialize: offer 2", "initialize: offer 99"},
        "unknown-method-ok": {"unknown method", "unknown extension method"},
        "bad-stop-reason": {"every message matches the schema"},
        "bad-update": {"prompt turn"},
    }.get(flaw, set())
    assert case in broken and set(broken) <= also | {case}, text(report)
    assert broken[case] == level
    finding = next(f for f in report.findings if f.case == case)
    assert detail in finding.detail, text(report)
    assert report.passed == (level == "SHOULD" and all(broken[c] == "SHOULD" for c in broken))


async def test_the_command_reports_in_text_json_and_junit(tmp_path: Path) -> None:
    junit = tmp_path / "check.xml"
    process = await asyncio.create_subprocess_exec(
        *ACP_TUI,
        "check",
        "--json",
        "--junit",
        str(junit),
        "--",
        *FLAWED,
        "unknown-method-ok",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 1, err.decode()
    report = json.loads(out)
    assert report["passed"] is False
    case, extension = [c for c in report["cases"] if c["status"] == "failed"]
    assert (case["case"], extension["case"]) == ("unknown method", "unknown extension method")
    assert case["rule"]["level"] == "MUST"
    assert case["rule"]["page"].startswith("JSON-RPC 2.0")
    assert json.loads(case["line"])["result"] == {}
    suite = ElementTree.parse(junit).getroot()
    assert suite.get("failures") == "2"
    assert [f.get("type") for f in suite.iter("failure")] == ["MUST", "MUST"]


def test_the_text_report_names_the_rule_and_the_line(reports: dict[str, Report]) -> None:
    report = reports["bad-stop-reason"]
    shown = text(report)
    assert "✗ prompt turn" in shown
    assert "rule: protocol/prompt-turn#stop-reasons" in shown
    assert '"stopReason":"done"' in shown
    assert shown.rstrip().endswith("11 passed, 2 failed (2 MUST broken), 9 not applicable")


async def test_a_missing_agent_is_a_clear_error() -> None:
    process = await asyncio.create_subprocess_exec(
        *ACP_TUI,
        "check",
        "--",
        "/no/such/agent",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert err.decode().strip() == "acp-tui check: agent command not found: /no/such/agent"


UNANSWERED = {"unknown method", "unknown extension method", "invalid params"}
"""What a hostile agent that only waits for its prompt fails before its own misbehaviour: it
never answers requests it does not expect, and takes any session/new."""


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("polite", {"invalid params"}),
        ("late-updates", UNANSWERED | {"prompt turn"}),
        (
            "stdout-noise",
            UNANSWERED
            | {
                "prompt turn",
                "every message matches the schema",
                "stdout carries only ACP messages",
            },
        ),
        (
            "protocol-junk",
            UNANSWERED
            | {
                "prompt turn",
                "every message matches the schema",
                "stdout carries only ACP messages",
                "permission requests name a reported tool call",
                "fs/* and terminal/* only as advertised",
            },
        ),
        ("deaf-to-cancel", UNANSWERED | {"prompt turn", "exits when stdin closes"}),
    ],
)
def test_each_hostile_agent_fails_exactly_its_cases(
    reports: dict[str, Report], name: str, expected: set[str]
) -> None:
    agent = AGENTS[name]
    report = reports[f"hostile:{name}"]
    assert set(failed(report)) == expected, f"{agent.misbehaviour}\n{text(report)}"
