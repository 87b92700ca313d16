"""What every conversation of one acp-tui run shares: the workspace and its checkpoints, the
saved permission rules, and the record store.

One of each, whatever the number of conversations: a rule saved in one conversation answers in
all of them, and one shadow repository checkpoints the turns of every agent in the workspace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from acp_tui.checkpoints.checkpointer import Checkpointer
from acp_tui.conversation.permissions import AgentPolicy
from acp_tui.records.store import RecordStore
from acp_tui.services.permissions import (
    RULES_FILE,
    Mode,
    PermissionPolicy,
    PermissionRulesError,
    Rule,
)


class Shared:
    """The workspace's checkpoints, the saved rules and the records, for every conversation."""

    def __init__(
        self,
        workspace: Path,
        *,
        permission: Mode,
        checkpoints: Checkpointer | bool = False,
        ignore: Sequence[Path | None] = (),
        agent_state: Sequence[str] | None = None,
        record: bool = False,
        rules: PermissionPolicy | None = None,
        rules_dir: Path | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.workspace = workspace
        self.permission: Mode = permission
        """`--permission` (or the config's): who answers when no rule does."""
        if not isinstance(checkpoints, Checkpointer):
            checkpoints = Checkpointer(
                workspace,
                enabled=checkpoints,
                ignore=ignore,
                agent_state=agent_state,
                on_warning=on_warning,
            )
        self.checkpoints = checkpoints
        """Taken around every turn of every conversation: made here (`True`: on, with acp-tui's
        own files in the workspace, `ignore`, and the agents' state folders, `agent_state`,
        left out), or given, already staging the first turn's checkpoint."""
        self.record = record
        """Whether conversations are recorded (`--no-record` turns it off)."""
        self._rules_dir = rules_dir
        self._rules = rules
        self._store: RecordStore | None = None
        self._on_warning = on_warning or (lambda _message: None)

    @property
    def rules(self) -> PermissionPolicy:
        """The saved rules and the mode, read on first use (a file that cannot be read: no
        saved rules, and a warning)."""
        if self._rules is None:
            try:
                self._rules = PermissionPolicy.load(self.permission, self._rules_dir)
            except PermissionRulesError as error:
                self._on_warning(f"Permission rules ignored: {error}")
                path = self._rules_dir / RULES_FILE if self._rules_dir is not None else None
                self._rules = PermissionPolicy(self.permission, path=path)
        return self._rules

    def policy_for(self, agent_rules: list[Rule]) -> AgentPolicy:
        """A conversation's policy: the saved rules (these, not a copy) and its agent's own."""
        return AgentPolicy(self.rules, agent_rules)

    def save_rule(self, rule: Rule) -> Path:
        """Add `rule` to the saved rules, for every conversation, and write them; where.
        Raises OSError when they cannot be written (the rule holds for this run)."""
        rules = self.rules
        rules.add_rule(rule)
        rules.save()
        return rules.path

    @property
    def store(self) -> RecordStore | None:
        """The record store (opened on first use), or None when nothing is recorded."""
        if self._store is None and self.record:
            self._store = RecordStore.open(on_warning=self._on_warning)
        return self._store

    async def warm_up(self) -> None:
        """A first checkpoint of the workspace, ahead of the first turn (see `Checkpointer`)."""
        await self.checkpoints.warm_up()

    def stop_checkpoints(self) -> None:
        """No more checkpoints: the one being taken is abandoned (its git stopped)."""
        self.checkpoints.close()

    def close(self) -> None:
        """No more checkpoints; the records written out."""
        self.checkpoints.close()
        if self._store is not None:
            self._store.close()
