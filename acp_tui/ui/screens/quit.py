"""Asks before quitting (Ctrl+C on an empty, idle prompt)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class QuitScreen(ModalScreen[bool]):
    """`Quit acp-tui?` y / n."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter,ctrl+c", "answer(True)", "Quit"),
        Binding("n,escape", "answer(False)", "Stay"),
    ]

    DEFAULT_CSS = """
    QuitScreen > Vertical {
        width: 44;
        height: auto;
        padding: 1 2;
        border: round $accent;
        background: $surface;
    }
    QuitScreen .quit--question { text-style: bold; }
    QuitScreen .quit--keys { color: $text-muted; margin: 1 0 0 0; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Quit acp-tui?", classes="quit--question")
            yield Static("The session is closed and the agent stopped.")
            yield Static("y / enter  quit     n / esc  stay", classes="quit--keys")

    def action_answer(self, quit_: bool) -> None:
        self.dismiss(quit_)
