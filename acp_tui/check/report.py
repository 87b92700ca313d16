"""`acp-tui check`'s report: text for people, JSON for scripts, JUnit XML for CI (red exactly
when the exit code says so: only a broken MUST is a `<failure>`)."""

from __future__ import annotations

import json
import shlex
from typing import Any
from xml.etree import ElementTree

from acp_tui.check.context import Finding
from acp_tui.check.run import Report

MARKS = {"passed": "✓", "failed": "✗", "note": "!", "n/a": "-", "skipped": "·"}
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
        head = f"{MARKS[finding.status]} {finding.case:<{width}}  "
        if finding.status == "failed" and finding.rule is not None:
            lines.append(f"{head}{finding.rule.level}  {finding.detail}")
            lines.append(f"    rule: {finding.rule.cite()}")
        elif finding.status == "note" and finding.note is not None:
            lines.append(f"{head}note  {finding.detail}")
            lines.append(f"    {finding.note.cite()}")
        else:
            prefix = "n/a: " if finding.status == "n/a" else ""
            lines.append(f"{head}{prefix}{finding.detail}{model}")
            continue
        if finding.line:
            lines.append(f"    line: {_short(finding.line)}")
    lines += ["", summary(report)]
    return "\n".join(lines) + "\n"


def summary(report: Report) -> str:
    if report.stopped is not None:
        return f"stopped at initialize: {report.stopped}"
    if report.unsupported is not None:
        return f"ACP v{report.version} not supported ({report.unsupported}): nothing of it checked"
    counts = {status: 0 for status in MARKS}
    for finding in report.findings:
        counts[finding.status] += 1
    musts = sum(finding.breaks_must for finding in report.findings)
    verdict = "every MUST holds" if report.passed else f"{musts} MUST broken"
    parts = [f"{counts['passed']} passed", f"{counts['failed']} failed ({verdict})"]
    parts += [f"{counts['note']} notes", f"{counts['n/a']} not applicable"]
    if counts["skipped"]:
        parts.append(f"{counts['skipped']} skipped")
    return ", ".join(parts)


def as_json(report: Report) -> str:
    data = {
        "agent": report.agent,
        "command": report.argv,
        "protocolVersion": report.version,
        "prompt": report.options.prompt,
        "outcome": report.outcome,
        "passed": report.passed,
        "stopped": report.stopped,
        "unsupported": report.unsupported,
        "cases": [_finding(f) for f in report.findings],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _finding(finding: Finding) -> dict[str, Any]:
    data: dict[str, Any] = {
        "case": finding.case,
        "status": finding.status,
        "detail": finding.detail,
        "seconds": finding.seconds,
    }
    if finding.rule is not None:
        data["rule"] = {
            "level": finding.rule.level,
            "page": finding.rule.page,
            "text": finding.rule.text,
        }
    if finding.note is not None:
        data["note"] = finding.note.text
    if finding.line is not None:
        data["line"] = finding.line
    if finding.needs_model:
        data["needsModel"] = True
    return data


def junit(report: Report) -> str:
    failures = sum(f.breaks_must for f in report.findings)
    skipped = sum(f.status in ("n/a", "skipped") for f in report.findings)
    suite = ElementTree.Element(
        "testsuite",
        name=f"acp-tui check: {report.agent} (ACP v{report.version})",
        tests=str(len(report.findings) + (report.unsupported is not None)),
        failures=str(failures + (report.unsupported is not None)),
        skipped=str(skipped),
        time=f"{sum(f.seconds for f in report.findings):.3f}",
    )
    for finding in report.findings:
        case = ElementTree.SubElement(
            suite, "testcase", classname="acp", name=finding.case, time=f"{finding.seconds:.3f}"
        )
        if finding.breaks_must and finding.rule is not None:
            failure = ElementTree.SubElement(
                case, "failure", message=f"MUST: {finding.detail}", type="MUST"
            )
            failure.text = f"{finding.rule.cite()}\n{finding.line or ''}"
        elif finding.status in ("n/a", "skipped"):
            ElementTree.SubElement(case, "skipped", message=f"{finding.status}: {finding.detail}")
        elif finding.status in ("failed", "note"):
            # A SHOULD, advice or note: reported, never red.
            properties = ElementTree.SubElement(case, "properties")
            level = finding.rule.level if finding.rule is not None else "note"
            quoted = finding.rule or finding.note
            cite = quoted.cite() if quoted is not None else ""
            for name, value in (("level", level), ("detail", finding.detail), ("rule", cite)):
                ElementTree.SubElement(properties, "property", name=name, value=value)
            if finding.line:
                ElementTree.SubElement(case, "system-out").text = finding.line
    if report.unsupported is not None:
        case = ElementTree.SubElement(suite, "testcase", classname="acp", name="version")
        ElementTree.SubElement(
            case, "failure", message=f"ACP v{report.version} not supported", type="unsupported"
        ).text = report.unsupported
    ElementTree.indent(suite)
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _short(line: str) -> str:
    return line if len(line) <= _LINE_CHARS else line[:_LINE_CHARS] + "…"
