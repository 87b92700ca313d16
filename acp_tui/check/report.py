"""`acp-tui check`'s report: text for people, JSON for scripts, JUnit XML for CI."""

from __future__ import annotations

import json
import shlex
from typing import Any
from xml.etree import ElementTree

from acp_tui.check.cases import Finding
from acp_tui.check.run import Report

MARKS = {"passed": "✓", "failed": "✗", "n/a": "-", "skipped": "·"}
_LINE_CHARS = 300


def text(report: Report) -> str:
    width = max((len(f.case) for f in report.findings), default=0)
    lines = [
        f"acp-tui check: {report.agent} over ACP v{report.version}",
        f"  command: {shlex.join(report.argv)}",
        "",
    ]
    for finding in report.findings:
        model = "  (needs a model)" if finding.needs_model else ""
        if finding.status == "failed" and finding.rule is not None:
            lines.append(
                f"{MARKS['failed']} {finding.case:<{width}}  {finding.rule.level}  {finding.detail}"
            )
            lines.append(f"    rule: {finding.rule.cite()}")
            if finding.line:
                lines.append(f"    line: {_short(finding.line)}")
        else:
            note = "n/a: " if finding.status == "n/a" else ""
            lines.append(
                f"{MARKS[finding.status]} {finding.case:<{width}}  {note}{finding.detail}{model}"
            )
    lines += ["", summary(report)]
    return "\n".join(lines) + "\n"


def summary(report: Report) -> str:
    counts = {status: 0 for status in MARKS}
    for finding in report.findings:
        counts[finding.status] += 1
    musts = sum(finding.breaks_must for finding in report.findings)
    verdict = "every MUST holds" if report.passed else f"{musts} MUST broken"
    parts = [f"{counts['passed']} passed", f"{counts['failed']} failed ({verdict})"]
    parts += [f"{counts['n/a']} not applicable"]
    if counts["skipped"]:
        parts.append(f"{counts['skipped']} skipped")
    return ", ".join(parts)


def as_json(report: Report) -> str:
    data = {
        "agent": report.agent,
        "command": report.argv,
        "protocolVersion": report.version,
        "prompt": report.prompt,
        "passed": report.passed,
        "cases": [_finding(f) for f in report.findings],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _finding(finding: Finding) -> dict[str, Any]:
    data: dict[str, Any] = {
        "case": finding.case,
        "status": finding.status,
        "detail": finding.detail,
    }
    if finding.rule is not None:
        data["rule"] = {
            "level": finding.rule.level,
            "page": finding.rule.page,
            "text": finding.rule.text,
        }
    if finding.line is not None:
        data["line"] = finding.line
    if finding.needs_model:
        data["needsModel"] = True
    return data


def junit(report: Report) -> str:
    failures = sum(f.status == "failed" for f in report.findings)
    skipped = sum(f.status in ("n/a", "skipped") for f in report.findings)
    suite = ElementTree.Element(
        "testsuite",
        name=f"acp-tui check: {report.agent} (ACP v{report.version})",
        tests=str(len(report.findings)),
        failures=str(failures),
        skipped=str(skipped),
    )
    for finding in report.findings:
        case = ElementTree.SubElement(suite, "testcase", classname="acp", name=finding.case)
        if finding.status == "failed" and finding.rule is not None:
            failure = ElementTree.SubElement(
                case,
                "failure",
                message=f"{finding.rule.level}: {finding.detail}",
                type=finding.rule.level,
            )
            failure.text = f"{finding.rule.cite()}\n{finding.line or ''}"
        elif finding.status in ("n/a", "skipped"):
            ElementTree.SubElement(case, "skipped", message=finding.detail)
    ElementTree.indent(suite)
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _short(line: str) -> str:
    return line if len(line) <= _LINE_CHARS else line[:_LINE_CHARS] + "…"
