"""Prompts typed while the agent was busy, waiting their turn (editable, removable)."""

from __future__ import annotations

from typing import ClassVar

import msgspec
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from acp_tui.conversation.attachments import Attachment


class QueuedPrompt(msgspec.Struct, frozen=True):
    """A prompt the user sent: its text and the images attached to it."""

    text: str
    attachments: tuple[Attachment, ...] = ()


class QueuedPrompts(OptionList):
    """The queue, oldest first. Each is sent when the turn before it ends."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,e", "edit", "Edit"),
        Binding("delete,backspace,x", "remove", "Remove"),
    ]

    DEFAULT_CSS = """
    QueuedPrompts {
        display: none;
        height: auto;
        max-height: 6;
        margin: 0 1;
        padding: 0 1;
        border: none;
        border-left: outer $warning 60%;
        background: $warning 8%;
    }
    QueuedPrompts.-has-items { display: block; }
    QueuedPrompts:focus { background: $warning 15%; }
    QueuedPrompts > .option-list--option-highlighted { background: $warning 20%; }
    """

    class Edit(Message):
        """Take the queued prompt at `index` back into the input."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class Remove(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def show(self, prompts: list[QueuedPrompt]) -> None:
        highlighted = self.highlighted
        self.clear_options()
        self.add_options(
            Option(
                Content.assemble(
                    ("◷ queued ", "$text-warning"),
                    (f"{index + 1}  ", "$foreground-muted"),
                    prompt.text.replace("\n", " ⏎ "),
                    (_images(prompt), "$foreground-muted"),
                )
            )
            for index, prompt in enumerate(prompts)
        )
        self.set_class(bool(prompts), "-has-items")
        if prompts:
            self.highlighted = min(highlighted or 0, len(prompts) - 1)
        self.can_focus = bool(prompts)

    def action_edit(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Edit(self.highlighted))

    def action_remove(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Remove(self.highlighted))


def _images(prompt: QueuedPrompt) -> str:
    count = len(prompt.attachments)
    return "" if not count else f"  ▣ {count} image" + ("s" if count > 1 else "")
