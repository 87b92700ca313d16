"""Answering the agent's permission requests by policy: one conversation's rules, and the
words that say why a request was answered without asking.

The saved rules (`permissions.toml`) are one set for the whole app: every conversation decides
with the same `PermissionPolicy`, so a rule saved from one conversation's dialog holds in all of
them at once. Each conversation adds its own agent's rules from the config file, which never
apply to another agent and are never saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from acp_tui.protocol import methods as m
from acp_tui.services.permissions import Decision, Mode, PermissionPolicy, Rule


class AgentPolicy:
    """The saved rules plus an agent's rules from the config file. Both decide together, the
    most specific first, a saved rule winning a tie."""

    def __init__(self, saved: PermissionPolicy, agent_rules: Sequence[Rule] = ()) -> None:
        self.saved = saved
        """The app's saved rules and its `--permission` mode (shared, not copied)."""
        self.agent_rules = list(agent_rules)

    @property
    def mode(self) -> Mode:
        return self.saved.mode

    def decide(
        self,
        request: m.PermissionRequest,
        tool_kind: str | None = None,
        *,
        workspace: str | Path | None = None,
    ) -> Decision:
        merged = PermissionPolicy(
            self.saved.mode, [*self.agent_rules, *self.saved.rules], path=self.saved.path
        )
        return merged.decide(request, tool_kind, workspace=workspace)


def without_asking(decision: Decision, request: m.PermissionRequest) -> Decision:
    """`decision`, for a front end with nobody to ask (headless): a decision to ask becomes a
    refusal, whose reason says why."""
    if not decision.ask:
        return decision
    refusal = PermissionPolicy("reject").decide(request)
    reason = f"{decision.reason}; no one to ask in headless mode: {refusal.reason}"
    return msgspec.structs.replace(refusal, reason=reason)


def answered_title(decision: Decision, request: m.PermissionRequest) -> str:
    """The line that says a request was answered by policy, and by which rule."""
    verb = "allowed" if decision.allows(request) else "rejected"
    if decision.rule is not None:
        return f"{verb} by rule: {decision.rule.describe()}"
    return f"Permission answered: {decision.reason}"
