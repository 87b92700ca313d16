"""The session picker (Ctrl+O): the agent's sessions and acp-tui's records in this workspace,
the most recent first; Enter opens one."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from acp_tui.records import SessionEntry
from acp_tui.ui.screens.dialog import Dialog


class SessionsScreen(Dialog[SessionEntry | None]):
    """Pick a session: title, when, and where it comes from (agent, local record)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Close")]

    DEFAULT_CSS = """
    SessionsScreen > Vertical { width: 90; }
    SessionsScreen OptionList { height: auto; max-height: 24; border: none; }
    SessionsScreen .sessions--empty { color: $text-muted; padding: 1 0; }
    """

    def __init__(self, entries: list[SessionEntry], current: str | None = None) -> None:
        super().__init__()
        self.entries = entries
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Sessions in this workspace"
            box.border_subtitle = "↑↓ choose · enter open · esc close"
            if not self.entries:
                yield Static("No earlier sessions here.", classes="sessions--empty")
            yield OptionList(*(self._option(index, e) for index, e in enumerate(self.entries)))

    def _option(self, index: int, entry: SessionEntry) -> Option:
        when = entry.updated_at.astimezone().strftime("%Y-%m-%d %H:%M") if entry.updated_at else ""
        mark = "● " if entry.session_id == self.current else "  "
        label = Content.assemble(
            (mark, "$text-accent"),
            (f"{entry.label[:50]:<50}", "bold"),
            (f"  {when:<16}", "$text-muted"),
            (f"  {entry.source}", "$text-muted"),
        )
        return Option(label, id=str(index))

    def on_mount(self) -> None:
        self.query_one(OptionList).display = bool(self.entries)
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.entries[int(event.option.id or 0)])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
