"""Prompts typed while the agent was busy, waiting their turn (editable, removable)."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from acp_tui.conversation.prompt import Prompt


class QueuedPrompts(OptionList):
    """The queue, oldest first. Each is sent when the turn before it ends: after a cancel,
    at once."""

    first_after_cancel: Prompt | None = None
    """The first prompt queued when a turn was cancelled: until it has run, a second cancel
    drops the queue."""

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

    def show(self, prompts: list[Prompt]) -> None:
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

    def cancelled(self, queue: list[Prompt], running: Prompt | None) -> bool:
        """A turn was cancelled with `queue` waiting: it goes at once, which a toast says.
        True when this is the second cancel, before the first of them has run (`running`
        now, or still queued): the queue is to be dropped, the history keeps it."""
        first = self.first_after_cancel
        if first is not None and (first is running or any(p is first for p in queue)):
            self.first_after_cancel = None
            dropped = len(queue) + (first is running)
            plural = "s" if dropped > 1 else ""
            title = f"Queue dropped: {dropped} prompt{plural}"
            self.notify("↑ in the prompt brings them back", title=title)
            return True
        if queue:
            self.first_after_cancel = queue[0]
            count = f"{len(queue)} queued prompts go" if len(queue) > 1 else "queued prompt goes"
            self.notify(f"Your {count} now · ctrl+c again drops them", title="Turn cancelled")
        return False

    def action_edit(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Edit(self.highlighted))

    def action_remove(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Remove(self.highlighted))


def _images(prompt: Prompt) -> str:
    count = len(prompt.attachments)
    return "" if not count else f"  ▣ {count} image" + ("s" if count > 1 else "")
