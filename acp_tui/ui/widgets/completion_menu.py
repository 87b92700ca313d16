"""The menu above the prompt that completes `/commands` and `@paths`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from acp_tui.protocol.updates import AvailableCommand

MUTED = "$foreground-muted"


@dataclass(frozen=True, slots=True)
class Completion:
    value: str
    """What replaces the token (without its `/` or `@`)."""
    description: str = ""
    hint: str = ""
    """For commands: what input the command takes."""


def command_completions(commands: Sequence[AvailableCommand], typed: str) -> list[Completion]:
    """The agent's commands that begin with what was typed after `/` (any case)."""
    needle = typed.lower()
    return [
        Completion(
            command.name,
            command.description,
            command.input.hint if command.input and isinstance(command.input.hint, str) else "",
        )
        for command in commands
        if command.name.lower().startswith(needle)
    ]


class CompletionMenu(OptionList, can_focus=False):
    """A list of completions; the prompt keeps focus and drives it with Up, Down, Tab, Enter."""

    DEFAULT_CSS = """
    CompletionMenu {
        display: none;
        height: auto;
        max-height: 10;
        margin: 0 1;
        border: round $accent 50%;
        background: $surface;
        padding: 0 0;
    }
    CompletionMenu > .option-list--option-highlighted {
        background: $accent 25%;
    }
    """

    def show(self, completions: list[Completion], prefix: str) -> None:
        self.clear_options()
        if not completions:
            self.display = False
            return
        options = []
        for completion in completions[:50]:
            label = Content.assemble(
                (f"{prefix}{completion.value}", "bold"),
                (f"  {completion.hint}" if completion.hint else "", "$text-accent italic"),
                (f"  {completion.description}" if completion.description else "", MUTED),
            )
            options.append(Option(label, id=completion.value))
        self.add_options(options)
        self.highlighted = 0
        self.display = True

    def selected_value(self) -> str | None:
        if self.highlighted is None:
            return None
        return self.get_option_at_index(self.highlighted).id
