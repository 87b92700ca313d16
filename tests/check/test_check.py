"""`acp-tui check`: the demo agent keeps every rule (v1 and v2); a stand-in agent with one flaw
fails exactly the case for it (or gets a note, where the spec states no rule), quoting the rule
at its level; one root cause fails one case; reports as text, JSON and JUnit XML; exit 0 only
when every MUST holds; what is no agent (`cat`, `sleep`) stops the run at once, said plainly."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest

from acp_tui.check.context import Options
from acp_tui.check.report import text
from acp_tui.check.run import Report, run_check
from tests.agents.check_standin import FLAWS

STANDIN = [sys.executable, str(Path(__file__).resolve().parents[1] / "agents" / "check_standin.py")]
DEMO = [sys.executable, "-m", "acp_tui.demo", "--speed", "1"]
ACP_TUI = [sys.executable, "-m", "acp_tui"]
QUICK = Options(call_timeout=5, turn_timeout=20)

EXPECTED: dict[str, dict[str, str]] = {
    "none": {},
    "init-silent": {"initialize (ACP v1)": "MUST"},
    "echo-version": {"initialize: offer 2": "MUST", "initialize: offer 99": "MUST"},
    "bad-auth-ok": {"authenticate: unknown method id": "note"},
    "no-session-id": {"session/new": "MUST"},
    "set-mode-fails": {"session/set_mode": "note"},
    "config-no-options": {"session/set_config_option": "MUST"},
    "unknown-method-ok": {"unknown method": "note"},
    "extension-ok": {"unknown extension method": "advice"},
    "params-internal": {"invalid params": "note"},
    "answers-notifications": {"unknown notification ignored": "SHOULD"},
    "unknown-session-ok": {"unknown sessionId": "note"},
    "bad-stop-reason": {"prompt turn": "MUST"},
    "late-updates": {"nothing after the turn's end": "note"},
    "no-resource-link": {"prompt: resource_link": "MUST"},
    "deaf-to-cancel": {"cancel mid-turn": "MUST"},
    "late-after-cancel": {"nothing after a cancelled turn": "MUST"},
    "allowed-not-run": {"permission: allowed, the tool runs": "SHOULD"},
    "runs-rejected": {"permission: rejected, the tool does not run": "note"},
    "cancel-permission-end-turn": {"cancel while a permission request waits": "MUST"},
    "list-broken": {"session/list": "MUST"},
    "load-no-replay": {"session/load (fresh process)": "MUST"},
    "resume-replays": {"session/resume": "MUST"},
    "close-fails": {"session/close": "MUST"},
    "delete-unknown-fails": {"session/delete: unknown id": "SHOULD"},
    "parse-silent": {"malformed JSON": "note"},
    "bad-update": {"every message matches the schema": "MUST"},
    "stdout-noise": {"stdout carries only ACP messages": "MUST"},
    "permission-first": {"permission requests name a reported tool call": "note"},
    "unannounced-update": {"tool_call_update only for announced ids": "note"},
    "uses-fs": {"no fs/* unless advertised": "MUST"},
    "uses-terminal": {"no terminal/* unless advertised": "MUST"},
    "no-exit": {"exits when stdin closes": "note"},
}


# One worker runs the module (its fixture checks the stand-in once per flaw): spread over
# workers, each would run every check again, all at once, and starve the cancel cases.
pytestmark = pytest.mark.xdist_group("check")

AT_ONCE = 6
"""Checks run together: each mostly waits, but a turn streams, and a loaded machine must still
see a cancelled turn end within the checker's bound."""


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    """The stand-in checked once per flaw, `AT_ONCE` at a time: each check mostly waits."""

    async def check_all() -> list[Report]:
        gate = asyncio.Semaphore(AT_ONCE)

        async def check(flaw: str) -> Report:
            async with gate:
                return await run_check([*STANDIN, flaw], QUICK)

        return await asyncio.gather(*(check(flaw) for flaw in FLAWS))

    return dict(zip(FLAWS, asyncio.run(check_all()), strict=True))


def found(report: Report) -> dict[str, str]:
    """The failed cases with the level of the rule each broke, and the notes."""
    return {
        f.case: f.rule.level if f.rule is not None else "note"
        for f in report.findings
        if f.status in ("failed", "note")
    }


def test_every_flaw_has_its_case() -> None:
    assert set(EXPECTED) == set(FLAWS)


def test_there_are_at_least_35_cases(reports: dict[str, Report]) -> None:
    assert len(reports["none"].findings) >= 35, text(reports["none"])


def test_an_agent_that_keeps_the_rules_passes_every_case(reports: dict[str, Report]) -> None:
    report = reports["none"]
    assert found(report) == {}, text(report)
    statuses = {f.case: f.status for f in report.findings}
    assert [case for case, status in statuses.items() if status not in ("passed", "n/a")] == []
    assert [case for case, status in statuses.items() if status == "n/a"] == [
        "v2: user message",
        "v2: running",
        "v2: messageId",
        "v2: requires_action while asking",
    ]


@pytest.mark.parametrize("flaw", [flaw for flaw in EXPECTED if flaw != "none"])
def test_each_flaw_fails_its_case_and_no_other(reports: dict[str, Report], flaw: str) -> None:
    report = reports[flaw]
    assert found(report) == EXPECTED[flaw], f"{FLAWS[flaw]}\n{text(report)}"
    musts = [level for level in EXPECTED[flaw].values() if level == "MUST"]
    assert report.passed == (not musts)
    for finding in report.findings:
        if finding.status == "failed":
            assert finding.rule is not None and finding.rule.text in text(report)


def test_one_root_cause_is_one_failure(reports: dict[str, Report]) -> None:
    # The made-up stop reason is also outside the schema: the schema case does not count it.
    statuses = {f.case: f for f in reports["bad-stop-reason"].findings}
    assert statuses["every message matches the schema"].status == "skipped"
    assert "prompt turn" in statuses["every message matches the schema"].detail
    # No session: what needs one says so, once per step.
    findings = reports["no-session-id"].findings
    skipped = [f for f in findings if f.status == "skipped"]
    assert len(skipped) == 12
    assert skipped[-1].detail == "only what session/new reported"  # its answer's schema
    assert all("session/new failed" in f.detail for f in skipped[:-1])


def test_no_answer_to_initialize_stops_the_run(reports: dict[str, Report]) -> None:
    report = reports["init-silent"]
    assert report.outcome == "stopped"
    [finding] = report.findings
    assert "no answer within 5 s" in finding.detail
    assert "still running" in finding.detail


def test_the_cancel_case_is_the_same_every_time(reports: dict[str, Report]) -> None:
    finding = next(f for f in reports["none"].findings if f.case == "cancel mid-turn")
    assert finding.detail == "cancelled (attempt 1)"


@pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
async def test_the_demo_agent_keeps_every_rule(version: int) -> None:
    report = await run_check(DEMO, Options(version=version, prompt="hello", long_prompt="slow 2"))
    assert {case: level for case, level in found(report).items() if level != "note"} == {}, text(
        report
    )
    assert report.passed
    statuses = {f.case: f.status for f in report.findings}
    for case in ("session/new", "prompt turn", "cancel mid-turn", "session/list", "session/resume"):
        assert statuses[case] == "passed", text(report)
    assert report.agent == "acp-tui demo agent 0.1.0"


async def _command(*args: str, timeout: float = 120) -> tuple[int, str, str, float]:
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *ACP_TUI, "check", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode(), time.monotonic() - started


async def test_the_command_reports_in_text_json_and_junit(tmp_path: Path) -> None:
    junit = tmp_path / "check.xml"
    transcript = tmp_path / "traffic.jsonl"
    code, out, err, _ = await _command(
        "--json", "--junit", str(junit), "--transcript", str(transcript), "--call-timeout", "5",
        "--", *STANDIN, "extension-ok",
    )  # fmt: skip
    assert code == 0, err  # advice is no MUST
    report = json.loads(out)
    [case] = [c for c in report["cases"] if c["status"] == "failed"]
    assert case["case"] == "unknown extension method"
    assert case["rule"]["level"] == "advice"
    assert case["rule"]["page"] == "v1/extensibility#custom-requests"
    assert json.loads(case["line"])["result"] == {}
    suite = ElementTree.parse(junit).getroot()
    assert suite.get("failures") == "0"  # CI is green when the exit code is 0
    [advice] = [c for c in suite.iter("testcase") if c.get("name") == "unknown extension method"]
    properties = {p.get("name"): p.get("value") for p in advice.iter("property")}
    assert properties["level"] == "advice"
    assert all(float(c.get("time", "-1")) >= 0 for c in suite.iter("testcase"))
    processes = {json.loads(line)["process"] for line in transcript.read_text().splitlines()}
    assert processes == {"session", "offer 1", "offer 2", "offer 99", "load"}


async def test_a_broken_must_is_a_junit_failure_and_exit_1(tmp_path: Path) -> None:
    junit = tmp_path / "check.xml"
    code, out, _, _ = await _command(
        "--junit", str(junit), "--call-timeout", "5", "--", *STANDIN, "uses-fs"
    )
    assert code == 1
    assert 'rule: v1/file-system#checking-support: "If `readTextFile`' in out
    assert [f.get("type") for f in ElementTree.parse(junit).getroot().iter("failure")] == ["MUST"]


async def test_an_unwritable_junit_path_is_said_before_the_run(tmp_path: Path) -> None:
    code, out, err, seconds = await _command("--junit", str(tmp_path / "no" / "x.xml"), "--", "cat")
    assert code == 2 and out == ""
    assert err.startswith(f"acp-tui check: --junit {tmp_path / 'no' / 'x.xml'}: ")
    assert seconds < 30


async def test_cat_is_no_agent() -> None:
    code, out, _, seconds = await _command("--", "cat")
    assert code == 1
    assert "writes back what it is sent, word for word: not an ACP agent" in out
    assert out.rstrip().splitlines()[-1].startswith("stopped at initialize")
    assert seconds < 30


async def test_an_agent_that_never_answers_is_waited_for_once() -> None:
    code, out, _, seconds = await _command("--call-timeout", "3", "--", "sleep", "100")
    assert code == 1
    assert "no answer within 3 s" in out
    assert seconds < 20


async def test_a_v1_agent_checked_as_v2_is_not_supported() -> None:
    code, out, _, _ = await _command("--protocol-version", "2", "--", *STANDIN, "none")
    assert code == 3
    assert "ACP v2 not supported (offered 2, it answered 1): nothing of it checked" in out


async def test_a_missing_agent_is_a_clear_error() -> None:
    code, _, err, _ = await _command("--", "/no/such/agent", timeout=60)
    assert code == 2
    assert err.strip() == "acp-tui check: agent command not found: /no/such/agent"
