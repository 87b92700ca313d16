"""A chat screen's two dialogs: the permission dialog and the question dialog.

They are mounted the first time the agent asks, not with the screen: the first frame needs
neither them nor their modules (bench/README.md, "Lazy imports"). Their messages reach the
screen's `on_permission_panel_*` / `on_elicitation_panel_*` handlers by name, so this module
imports their classes only for types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from acp_tui.ui.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from textual.screen import Screen

    from acp_tui.session.elicitation import PendingElicitation
    from acp_tui.session.session import PendingPermission
    from acp_tui.ui.widgets.elicitation_panel import ElicitationPanel
    from acp_tui.ui.widgets.permission_panel import PermissionPanel


class Dialogs:
    """The dialogs of one screen, mounted on first use below its transcript."""

    def __init__(
        self, screen: Screen[None], questions: Callable[[], list[PendingElicitation]]
    ) -> None:
        self._screen = screen
        self._waiting_questions = questions
        self._permissions: PermissionPanel | None = None
        self._questions: ElicitationPanel | None = None

    def permission_panel(self) -> PermissionPanel:
        """The permission dialog (mounted on first use, above the question dialog)."""
        if self._permissions is None:
            from acp_tui.ui.widgets.permission_panel import PermissionPanel

            screen = self._screen
            panel = PermissionPanel(id="permission")
            panel.root = getattr(screen, "workspace", None)
            panel.guard.draft = screen.query_one(PromptInput)  # keys typed as it opens land here
            screen.query_one("#conversation").mount(panel, after="#paused")
            self._permissions = panel
        return self._permissions

    def question_panel(self) -> ElicitationPanel:
        """The question dialog (mounted on first use, above the queued prompts)."""
        if self._questions is None:
            from acp_tui.ui.widgets.elicitation_panel import ElicitationPanel

            screen = self._screen
            panel = ElicitationPanel(id="question")
            panel.waiting = self._waiting_questions
            panel.guard.draft = screen.query_one(PromptInput)
            screen.query_one("#conversation").mount(panel, before="#queue")
            self._questions = panel
        return self._questions

    def mounted(self) -> list[PermissionPanel | ElicitationPanel]:
        """The dialogs mounted so far."""
        return [panel for panel in (self._permissions, self._questions) if panel is not None]

    def waiting(self) -> bool:
        """Whether a request or a question waits for the user."""
        return any(panel.queue for panel in self.mounted())

    @property
    def asking_reason(self) -> bool:
        """Whether the user may be typing why they rejected a request."""
        return self._permissions is not None and self._permissions.asking_reason

    def prune(self) -> None:
        """Requests and questions answered elsewhere (a cancel, the turn's end) leave."""
        for panel in self.mounted():
            panel.prune()

    def ask_permission(self, pending: PendingPermission) -> None:
        panel = self.permission_panel()
        panel.add(pending)
        # After the refresh: just shown (`-open`), the panel is focusable once its styles are.
        panel.call_after_refresh(panel.focus)

    def ask_question(self, pending: PendingElicitation, agent: str) -> None:
        panel = self.question_panel()
        panel.agent = agent
        panel.add(pending)
