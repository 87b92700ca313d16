"""The permission policy: modes, saved rules, which option answers, and the rules file."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_tui.protocol.methods import PermissionRequest
from acp_tui.services.permissions import (
    RULES_FILE,
    Decision,
    PermissionPolicy,
    PermissionRulesError,
    Rule,
    config_dir,
)

ALL_FOUR = [
    {"optionId": "ao", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "aa", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "ro", "name": "Reject once", "kind": "reject_once"},
    {"optionId": "ra", "name": "Always reject", "kind": "reject_always"},
]


def request(
    options: list[dict[str, str]] = ALL_FOUR, kind: str | None = "edit", **extra: Any
) -> PermissionRequest:
    tool_call: dict[str, Any] = {"toolCallId": "call-1"}
    if kind is not None:
        tool_call["kind"] = kind
    message = {"sessionId": "s", "toolCall": tool_call, "options": options, **extra}
    return msgspec.json.decode(msgspec.json.encode(message), type=PermissionRequest)


def options(*kinds: str) -> list[dict[str, str]]:
    return [{"optionId": f"opt-{kind}", "name": kind, "kind": kind} for kind in kinds]


@pytest.mark.parametrize(
    ("mode", "offered", "outcome", "option", "reason"),
    [
        ("ask", ALL_FOUR, "ask", None, "--permission ask"),
        ("allow", ALL_FOUR, "selected", "ao", "--permission allow (allow_once)"),
        ("reject", ALL_FOUR, "selected", "ro", "--permission reject (reject_once)"),
        ("allow", options("allow_always", "reject_once"), "selected", "opt-allow_always",
         "--permission allow (allow_always)"),
        ("reject", options("allow_once", "reject_always"), "selected", "opt-reject_always",
         "--permission reject (reject_always)"),
        ("reject", options("allow_once"), "cancelled", None,
         "--permission reject; the agent offered no reject option (allow_once), so: cancelled"),
        ("allow", options("reject_once", "custom"), "ask", None,
         "--permission allow, but the agent offered no allow option (reject_once, custom), so "
         "the user decides"),
    ],
)  # fmt: skip
def test_the_mode_decides_when_no_rule_matches(
    mode: Any, offered: list[dict[str, str]], outcome: str, option: str | None, reason: str
) -> None:
    decision = PermissionPolicy(mode).decide(request(offered))
    assert decision == Decision(outcome, reason, option)  # type: ignore[arg-type]


WS = "/home/me/project"

RULES = [
    Rule("*", "ask"),
    Rule("read", "allow"),
    Rule("execute", "reject", "/home/me"),
    Rule("execute", "allow", WS),
    Rule("*", "reject", "/home/me/project/vendor"),
]


@pytest.mark.parametrize(
    ("kind", "workspace", "rule"),
    [
        ("read", WS, Rule("read", "allow")),
        ("edit", WS, Rule("*", "ask")),
        (None, WS, Rule("*", "ask")),
        ("execute", WS, Rule("execute", "allow", WS)),  # the deepest workspace wins
        ("execute", WS + "/src", Rule("execute", "allow", WS)),  # rules hold below it too
        ("execute", "/home/me/other", Rule("execute", "reject", "/home/me")),
        ("execute", "/elsewhere", Rule("*", "ask")),
        ("execute", None, Rule("*", "ask")),  # no workspace: only global rules
        ("read", WS + "/vendor", Rule("*", "reject", "/home/me/project/vendor")),
        ("read", "/home/me/project-2", Rule("read", "allow")),  # not a string prefix
    ],
)
def test_the_most_specific_rule_wins(kind: str | None, workspace: str | None, rule: Rule) -> None:
    assert (
        PermissionPolicy("allow", RULES).rule_for(kind, Path(workspace) if workspace else None)
        == rule
    )


def test_the_rule_saved_last_wins_a_tie() -> None:
    policy = PermissionPolicy("ask", [Rule("*", "reject"), Rule("*", "allow")])
    assert policy.decide(request()).option_id == "ao"


def test_a_rule_decides_and_says_so() -> None:
    policy = PermissionPolicy("ask", [Rule("read", "allow", WS), Rule("execute", "ask")])
    decision = policy.decide(request(kind="read"), workspace=WS)
    assert decision == Decision(
        "selected", f"rule: always allow read in {WS} (allow_once)", "ao", Rule("read", "allow", WS)
    )
    # A rule to ask beats `--permission allow`.
    asking = PermissionPolicy("allow", [Rule("execute", "ask")]).decide(request(kind="execute"))
    assert (asking.ask, asking.reason) == (True, "rule: always ask for execute")


def test_the_kind_the_session_knows_beats_the_requests_own() -> None:
    policy = PermissionPolicy("ask", [Rule("execute", "reject")])
    assert policy.decide(request(kind=None), "execute").option_id == "ro"
    assert policy.decide(request(kind="execute")).option_id == "ro"
    assert policy.decide(request(kind="read"), None).ask


def test_a_v2_command_subject_counts_as_execute() -> None:
    v2 = request(kind=None, title="Run make?", subject={"type": "command", "command": "make"})
    v2.tool_call = None
    assert PermissionPolicy("ask", [Rule("execute", "reject")]).decide(v2).option_id == "ro"


def test_responses() -> None:
    assert msgspec.json.encode(Decision("selected", "", "ao").response()) == (
        b'{"outcome":{"outcome":"selected","optionId":"ao"}}'
    )
    assert msgspec.json.encode(Decision("cancelled", "").response()) == (
        b'{"outcome":{"outcome":"cancelled"}}'
    )
    with pytest.raises(ValueError, match="ask the user"):
        Decision("ask", "").response()


# -- the rules file -----------------------------------------------------------------------------


def test_rules_are_saved_and_loaded(tmp_path: Path) -> None:
    policy = PermissionPolicy.load("ask", tmp_path / "config")
    assert policy.rules == [] and policy.path == tmp_path / "config" / RULES_FILE
    odd = '/home/me/"quoted" \\ back\tslash\x7f ünï'
    policy.add_rule(Rule("read", "allow", WS))
    policy.add_rule(Rule("execute", "ask"))
    policy.add_rule(Rule("edit", "reject", odd))
    policy.add_rule(Rule("read", "reject", WS))  # replaces the first
    policy.save()
    text = policy.path.read_text()
    assert text.startswith("# acp-tui permission rules")
    assert tomllib.loads(text)["rule"][0] == {"kind": "execute", "decision": "ask"}
    loaded = PermissionPolicy.load("reject", tmp_path / "config")
    assert loaded.mode == "reject"
    assert loaded.rules == [
        Rule("execute", "ask"),
        Rule("edit", "reject", odd),
        Rule("read", "reject", WS),
    ]
    loaded.remove_rule("execute", None)
    loaded.save()
    assert PermissionPolicy.load("ask", tmp_path / "config").rules == loaded.rules
    assert sorted(p.name for p in (tmp_path / "config").iterdir()) == [RULES_FILE]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("rule = [", "cannot read permission rules"),
        ("rule = 3", "`rule` must be an array of tables"),
        ("rule = [1]", "rule 1 is not a table"),
        ('[[rule]]\ndecision = "allow"', "rule 1: `kind` must be a string"),
        ('[[rule]]\nkind = "rm -rf"\ndecision = "allow"', "rule 1: a rule's kind is a tool kind"),
        ('[[rule]]\nkind = "read"\ndecision = "yes"', "rule 1: `decision` must be allow"),
        ('[[rule]]\nkind = "read"\ndecision = "allow"\nworkspace = "rel"', "absolute path"),
    ],
)
def test_a_broken_rules_file_is_an_error_naming_it(tmp_path: Path, text: str, error: str) -> None:
    (tmp_path / RULES_FILE).write_text(text)
    with pytest.raises(PermissionRulesError, match=error) as caught:
        PermissionPolicy.load("ask", tmp_path)
    assert str(tmp_path / RULES_FILE) in str(caught.value)


def test_a_rules_file_that_is_not_utf8_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / RULES_FILE).write_bytes(b'[[rule]]\nkind = "read\xff"\ndecision = "allow"\n')
    with pytest.raises(PermissionRulesError, match="cannot read permission rules") as caught:
        PermissionPolicy.load("ask", tmp_path)
    assert str(tmp_path / RULES_FILE) in str(caught.value)


def test_bad_modes_and_kinds_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown permission mode 'yolo'"):
        PermissionPolicy("yolo")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tool kind"):
        PermissionPolicy().add_rule(Rule("", "allow"))


def test_config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_dir() == tmp_path / "acp-tui"
    assert PermissionPolicy().path == tmp_path / "acp-tui" / RULES_FILE
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert config_dir() == tmp_path / "home" / ".config" / "acp-tui"
