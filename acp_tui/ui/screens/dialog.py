"""The frame every acp-tui dialog shares."""

from __future__ import annotations

from typing import TypeVar

from textual.screen import ModalScreen

ResultType = TypeVar("ResultType")


class Dialog(ModalScreen[ResultType]):
    """A modal screen showing one framed box (its `Vertical`): subclasses set the width."""

    DEFAULT_CSS = """
    Dialog > Vertical {
        height: auto;
        max-width: 95%;
        max-height: 80%;
        padding: 0 1;
        border: round $accent;
        border-title-color: $text-accent;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
    }
    """
