"""The agent's plan as a checklist, updated in place as entries move along; a Markdown plan
(an approved plan of Claude Code's plan mode) as Markdown."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.content import Content
from textual.widgets import Static

from acp_tui.session.state import PlanState
from acp_tui.ui.widgets.block import Block
from acp_tui.ui.widgets.markdown_view import MarkdownView

STATUS_MARKS = {
    "pending": ("○", "$foreground-muted"),
    "in_progress": ("◐", "$text-warning"),
    "completed": ("✓", "$text-success"),
    "cancelled": ("⊘", "$foreground-muted"),
    "failed": ("✗", "$text-error"),
}
PRIORITY_STYLES = {
    "high": "$text-error",
    "medium": "$text-warning",
    "low": "$foreground-muted",
}


def plan_content(plan: PlanState) -> Content:
    """The checklist: a mark per status, the entry, its priority where priorities differ
    (agents that have none send `medium` for every entry); done entries struck out."""
    if not plan.entries:
        return Content(plan.text or f"({plan.type} plan)")
    lines: list[Content] = []
    ranked = len({entry.priority for entry in plan.entries}) > 1
    # Priorities line up in a column after the longest entry (within reason).
    column = min(max(len(entry.content) for entry in plan.entries), 60) + 2
    for entry in plan.entries:
        mark, mark_style = STATUS_MARKS.get(entry.status, ("•", "$foreground-muted"))
        text_style = {
            "completed": "$foreground 55% strike",
            "cancelled": "$foreground 55% strike",
            "in_progress": "bold",
        }.get(entry.status, "")
        line = Content.assemble((f"{mark} ", mark_style), (entry.content, text_style))
        if ranked:
            priority_style = PRIORITY_STYLES.get(entry.priority, "$foreground-muted")
            line = Content.assemble(
                line,
                " " * max(2, column - len(entry.content)),
                (entry.priority, f"{priority_style} italic"),
            )
        lines.append(line)
    return Content("\n").join(lines)


class PlanView(Block):
    """A plan: one checklist, patched when the agent sends the plan again."""

    DEFAULT_CSS = """
    PlanView {
        border: round $primary 40%;
        border-title-color: $text-primary;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        padding: 0 1;
        margin: 1 1 0 1;
    }
    PlanView:focus {
        border: round $accent 70%;
    }
    PlanView > Static, PlanView > MarkdownView {
        width: 1fr;
    }
    """

    item: PlanState

    def compose(self) -> ComposeResult:
        yield Static()
        yield MarkdownView()

    def on_mount(self) -> None:
        if not self.composed:
            return
        self._ready = True
        self.border_title = "Plan"
        self.sync()

    def sync(self, delta: Any = None) -> None:
        if not self._ready:
            return
        plan = self.item
        entries = plan.entries
        done = sum(1 for entry in entries if entry.status == "completed")
        self.border_subtitle = f"{done}/{len(entries)} done" if entries else ""
        markdown = plan.text if plan.type == "markdown" and not entries else None
        checklist, view = self.query_one(Static), self.query_one(MarkdownView)
        checklist.display, view.display = markdown is None, markdown is not None
        if markdown is None:
            checklist.update(plan_content(plan))
        elif view.source != markdown:
            view.clear()
            view.append(markdown)

    def text(self) -> str:
        return "\n".join(
            f"[{'x' if e.status == 'completed' else ' '}] {e.content}" for e in self.item.entries
        ) or (self.item.text or "")
