"""Every rule `acp-tui check` quotes is on the page it names, word for word, at the level it
gives: the spec's own words, not ours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acp_tui.check import rules
from acp_tui.check.rules import Rule

DOCS = Path(__file__).resolve().parent / "spec"
"""The cited pages, copied from the spec (see `spec/SOURCE.md`)."""


def _quoted() -> list[Rule]:
    found = []
    for value in vars(rules).values():
        if isinstance(value, Rule):
            found.append(value)
            if value.v2 is not None:
                found.append(value.v2)
    return found


def _plain(markdown: str) -> str:
    """The page as read: no bold markers, links as their text, one space between words."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown.replace("**", ""))
    return " ".join(text.split())


@pytest.mark.parametrize("rule", _quoted(), ids=lambda rule: f"{rule.page} {rule.text[:40]}")
def test_each_quoted_rule_is_on_its_page_at_its_level(rule: Rule) -> None:
    page = DOCS / (rule.page.split("#")[0] + ".mdx")
    assert page.exists(), rule.page
    assert " ".join(rule.text.split()) in _plain(page.read_text()), rule.text
    words = set(re.findall(r"\b(MUST|SHOULD|should)\b", rule.text))
    level = {"MUST": "MUST", "SHOULD": "SHOULD", "advice": "should"}[rule.level]
    assert level in words, (rule.level, rule.text)
    if rule.level == "SHOULD":
        assert "MUST" not in words


def test_there_are_rules() -> None:
    assert len(_quoted()) > 30
