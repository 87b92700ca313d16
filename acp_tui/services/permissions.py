"""Who answers `session/request_permission`: the user, a saved rule, or the `--permission` mode.

One policy serves the TUI and headless mode alike, and every agent the same way.

Rules come first. A rule is what the user saved from the permission dialog: "always allow
`read` in /home/me/project", "always ask for `execute`" (everywhere). The most specific rule
that matches decides: one for the session's workspace (or a directory holding it; the deepest
wins) beats one for every workspace, and a rule for the tool's kind beats a `*` rule; among
equals, the one saved last wins. Without a matching rule, the mode decides: `ask` (the TUI's
default) leaves it to the user, `allow` and `reject` answer at once.

Answering picks one of the options the agent offered. Allowing prefers `allow_once` over
`allow_always`, so the decision stays ours (an agent remembers "always" by itself, and would
not hear of a rule being removed later); rejecting prefers `reject_once` over `reject_always`.
When the agent offered no option of the needed kind: nothing to reject with is answered
`cancelled` (the spec's other way to say no); nothing to allow with falls back to asking the
user, who can read the agent's own option names. Every decision carries a `reason` to show.

Rules live in `permissions.toml` in the config directory (`$XDG_CONFIG_HOME/acp-tui`, default
`~/.config/acp-tui`), apart from the main config so saving a rule never rewrites a file the user
edits by hand. It is read with `tomllib` and written whole, atomically::

    [[rule]]
    kind = "read"            # a tool kind (read, edit, delete, move, search, execute, think,
                             # fetch, switch_mode, other) or "*" for any
    decision = "allow"       # allow | reject | ask
    workspace = "/home/me/project"   # optional: without it, the rule holds everywhere
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast, get_args

import msgspec

from acp_tui.paths import config_dir

if TYPE_CHECKING:
    from acp_tui.protocol.methods import PermissionRequest, PermissionResponse

Mode = Literal["ask", "allow", "reject"]
"""`--permission`: who answers when no rule matches."""

RuleDecision = Literal["allow", "reject", "ask"]

RULES_FILE = "permissions.toml"

ANY_KIND = "*"


class PermissionRulesError(ValueError):
    """The rules file cannot be read as rules; the message names the file and the entry."""


class Rule(msgspec.Struct, frozen=True):
    """A standing answer for one kind of tool call (or `*`), in one workspace or everywhere."""

    kind: str
    decision: RuleDecision
    workspace: str | None = None

    def describe(self) -> str:
        """The rule in words, e.g. "always allow read in /home/me/project"."""
        what = "any tool" if self.kind == ANY_KIND else self.kind
        where = f" in {self.workspace}" if self.workspace else ""
        if self.decision == "ask":
            return f"always ask for {what}{where}"
        return f"always {self.decision} {what}{where}"

    def matches(self, kind: str | None, workspace: Path | None) -> bool:
        if self.kind != ANY_KIND and self.kind != kind:
            return False
        if self.workspace is None:
            return True
        return workspace is not None and workspace.is_relative_to(self.workspace)

    def specificity(self) -> tuple[int, int]:
        depth = -1 if self.workspace is None else len(Path(self.workspace).parts)
        return (depth, 0 if self.kind == ANY_KIND else 1)


class Decision(msgspec.Struct, frozen=True):
    """What to do with one permission request, and why (to show the user).

    `outcome` is "ask" (show the dialog), "selected" (answer with `option_id`) or "cancelled".
    `rule` is the saved rule that decided, if one did.
    """

    outcome: Literal["ask", "selected", "cancelled"]
    reason: str
    option_id: str | None = None
    rule: Rule | None = None

    @property
    def ask(self) -> bool:
        return self.outcome == "ask"

    def allows(self, request: PermissionRequest) -> bool:
        """Whether the answer is one of `request`'s allow options."""
        return self.outcome == "selected" and any(
            option.option_id == self.option_id and option.kind.startswith("allow")
            for option in request.options
        )

    def response(self) -> PermissionResponse:
        """The answer to send; only for a decision that does not ask."""
        # Not at the top: the config reads rules from here, and the agent is spawned once the
        # config is read, before the protocol's types are imported.
        from acp_tui.protocol.methods import CancelledOutcome, PermissionResponse, SelectedOutcome

        if self.outcome == "selected" and self.option_id is not None:
            return PermissionResponse(SelectedOutcome(self.option_id))
        if self.outcome == "cancelled":
            return PermissionResponse(CancelledOutcome())
        raise ValueError("this decision is to ask the user; there is no answer yet")


class PermissionPolicy:
    """The mode and the saved rules; `decide` applies them to one request."""

    def __init__(
        self, mode: Mode = "ask", rules: Iterable[Rule] = (), *, path: Path | None = None
    ) -> None:
        if mode not in get_args(Mode):
            raise ValueError(f"unknown permission mode {mode!r}: use ask, allow or reject")
        self.mode: Mode = mode
        self.rules: list[Rule] = list(rules)
        self.path = path if path is not None else config_dir() / RULES_FILE

    @classmethod
    def load(cls, mode: Mode = "ask", directory: Path | None = None) -> PermissionPolicy:
        """The policy with the rules saved in `directory` (default: `config_dir()`), if any."""
        path = (directory if directory is not None else config_dir()) / RULES_FILE
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return cls(mode, path=path)
        except OSError as exc:
            raise PermissionRulesError(f"cannot read permission rules from {path}: {exc}") from exc
        # Here, once there is a rules file: most runs have none (and the TUI loads the policy
        # only after its first frame, issue 14).
        import tomllib

        try:
            document = tomllib.loads(data.decode())
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise PermissionRulesError(f"cannot read permission rules from {path}: {exc}") from exc
        return cls(mode, _parse_rules(path, document.get("rule", [])), path=path)

    # -- deciding -----------------------------------------------------------------------------

    def decide(
        self,
        request: PermissionRequest,
        tool_kind: str | None = None,
        *,
        workspace: str | Path | None = None,
    ) -> Decision:
        """Decide one request. `tool_kind` is the kind of the tool call it is about, as the
        session knows it (a v1 request often repeats only the id); without it, the request's
        own `kind` is used, and a v2 command subject counts as `execute`. `workspace` is the
        session's cwd: rules for other workspaces do not apply."""
        kind = tool_kind or _kind_of(request)
        where = Path(workspace) if workspace is not None else None
        rule = self.rule_for(kind, where)
        if rule is not None:
            decision = _apply(rule.decision, request, f"rule: {rule.describe()}", rule)
        else:
            decision = _apply(self.mode, request, f"--permission {self.mode}", None)
        if decision.allows(request) and _about_nothing(request):
            # Allowing blind what the agent did not name is never a standing answer's to give.
            reason = f"{decision.reason}, but the request names no tool call: the user decides"
            return Decision("ask", reason, rule=decision.rule)
        return decision

    def rule_for(self, kind: str | None, workspace: Path | None) -> Rule | None:
        """The rule that decides for this kind in this workspace, if any."""
        best: Rule | None = None
        for rule in self.rules:  # later rules win ties: `>=`
            if rule.matches(kind, workspace) and (
                best is None or rule.specificity() >= best.specificity()
            ):
                best = rule
        return best

    # -- editing and saving -------------------------------------------------------------------

    def add_rule(self, rule: Rule) -> None:
        """Add a rule, replacing any for the same kind and workspace (call `save` to keep it)."""
        if rule.kind != ANY_KIND:
            _check_kind(rule.kind)
        self.remove_rule(rule.kind, rule.workspace)
        self.rules.append(rule)

    def remove_rule(self, kind: str, workspace: str | None) -> None:
        self.rules = [r for r in self.rules if (r.kind, r.workspace) != (kind, workspace)]

    def save(self) -> None:
        """Write the rules to `path` atomically (temp file + rename), creating the directory."""
        import tempfile  # here: rules are saved far less often than acp-tui starts

        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = _format_rules(self.rules)
        fd, temp = tempfile.mkstemp(prefix=".permissions-", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise


def _about_nothing(request: PermissionRequest) -> bool:
    """A request that names neither a tool call nor (v2) a command."""
    return request.tool_call_update is None and (
        request.subject is None or request.subject.type != "command"
    )


def _kind_of(request: PermissionRequest) -> str | None:
    tool_call = request.tool_call_update
    if tool_call is not None and isinstance(tool_call.kind, str):
        return tool_call.kind
    if request.subject is not None and request.subject.type == "command":
        return "execute"
    return None


def _apply(
    decision: RuleDecision, request: PermissionRequest, why: str, rule: Rule | None
) -> Decision:
    if decision == "ask":
        return Decision("ask", why, rule=rule)
    kinds = (
        ("allow_once", "allow_always") if decision == "allow" else ("reject_once", "reject_always")
    )
    for kind in kinds:
        option = next((o for o in request.options if o.kind == kind), None)
        if option is not None:
            return Decision("selected", f"{why} ({kind})", option.option_id, rule)
    offered = ", ".join(o.kind or "?" for o in request.options) or "none"
    if decision == "reject":
        reason = f"{why}; the agent offered no reject option ({offered}), so: cancelled"
        return Decision("cancelled", reason, rule=rule)
    reason = f"{why}, but the agent offered no allow option ({offered}), so the user decides"
    return Decision("ask", reason, rule=rule)


def _check_kind(kind: str) -> None:
    if not kind or not kind.replace("_", "").isalnum():
        raise ValueError(
            f"a rule's kind is a tool kind such as read or execute, or *; got {kind!r}"
        )


def _parse_rules(path: Path, entries: object) -> list[Rule]:
    if not isinstance(entries, list):
        raise PermissionRulesError(f"{path}: `rule` must be an array of tables ([[rule]])")
    rules = []
    for number, entry in enumerate(entries, 1):
        where = f"{path}: rule {number}"
        if not isinstance(entry, dict):
            raise PermissionRulesError(f"{where} is not a table")
        kind, decision, workspace = entry.get("kind"), entry.get("decision"), entry.get("workspace")
        if not isinstance(kind, str):
            raise PermissionRulesError(f"{where}: `kind` must be a string (a tool kind, or *)")
        if kind != ANY_KIND:
            try:
                _check_kind(kind)
            except ValueError as exc:
                raise PermissionRulesError(f"{where}: {exc}") from None
        if decision not in get_args(RuleDecision):
            raise PermissionRulesError(f"{where}: `decision` must be allow, reject or ask")
        if workspace is not None and not (isinstance(workspace, str) and os.path.isabs(workspace)):
            raise PermissionRulesError(f"{where}: `workspace` must be an absolute path")
        rules.append(Rule(kind, cast(RuleDecision, decision), workspace))
    return rules


_HEADER = """\
# acp-tui permission rules: standing answers to agents' permission requests.
# Saved from the permission dialog; you may edit this file (acp-tui rewrites it when you save
# a rule from the dialog). kind: a tool kind or "*"; decision: allow | reject | ask;
# workspace (optional): the rule holds only in this directory and below.
"""


def _format_rules(rules: Sequence[Rule]) -> str:
    parts = [_HEADER]
    for rule in rules:
        parts.append(f"\n[[rule]]\nkind = {_toml_string(rule.kind)}\n")
        parts.append(f"decision = {_toml_string(rule.decision)}\n")
        if rule.workspace is not None:
            parts.append(f"workspace = {_toml_string(rule.workspace)}\n")
    return "".join(parts)


def _toml_string(value: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    escaped = []
    for char in value:
        if char in '"\\':
            escaped.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04x}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'
