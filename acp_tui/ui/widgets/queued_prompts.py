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
    _first = 0
    """The row of the first queued prompt: 1 under a prompt held for its checkpoint."""

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
    QueuedPrompts > .option-list--option-disabled { color: $foreground; text-style: none; }
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

    def show(self, prompts: list[Prompt], held: Prompt | None = None) -> None:
        """The queue, after the prompt `held` for its checkpoint (not sent yet; shown, not
        editable here: a cancel withdraws it)."""
        # The queued prompt highlighted stays so, whether a held row comes or goes above it.
        chosen = self.highlighted - self._first if self.highlighted is not None else 0
        self._first = 1 if held is not None else 0
        self.clear_options()
        if held is not None:
            label = Content.assemble(
                ("◷ checkpointing the workspace  ", "$text-warning"),
                _one_line(held),
                ("  ·  esc withdraws it", "$foreground-muted"),
            )
            self.add_option(Option(label, disabled=True))
        self.add_options(
            Option(
                Content.assemble(
                    ("◷ queued ", "$text-warning"),
                    (f"{index + 1}  ", "$foreground-muted"),
                    _one_line(prompt),
                )
            )
            for index, prompt in enumerate(prompts)
        )
        self.set_class(bool(prompts) or held is not None, "-has-items")
        if prompts:
            self.highlighted = self._first + min(max(chosen, 0), len(prompts) - 1)
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
        if self.highlighted is not None and self.highlighted >= self._first:
            self.post_message(self.Edit(self.highlighted - self._first))

    def action_remove(self) -> None:
        if self.highlighted is not None and self.highlighted >= self._first:
            self.post_message(self.Remove(self.highlighted - self._first))


def _one_line(prompt: Prompt) -> Content:
    count = len(prompt.attachments)
    images = "" if not count else f"  ▣ {count} image" + ("s" if count > 1 else "")
    return Content.assemble(prompt.text.replace("\n", " ⏎ "), (images, "$foreground-muted"))
