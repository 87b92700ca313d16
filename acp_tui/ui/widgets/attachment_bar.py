"""The images waiting to go with the next prompt: a chip each, above the prompt."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from acp_tui.conversation.attachments import Attachment
from acp_tui.ui.render.chips import chip_text
from acp_tui.ui.widgets.render_view import RenderView

HINT = "backspace on an empty prompt removes the last image"


class AttachmentBar(RenderView):
    """Chips for the attachments of the prompt being written; hidden when there are none."""

    DEFAULT_CSS = """
    AttachmentBar {
        display: none;
        margin: 0 1;
        padding: 0 1;
    }
    AttachmentBar.-has-items { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(self._content, id=id)
        self.attachments: list[Attachment] = []

    def add(self, attachment: Attachment) -> None:
        """Add `attachment` to the prompt being written, as a chip at the end."""
        self.attachments.append(attachment)
        self._changed()

    def pop(self) -> Attachment | None:
        """Remove the last attachment (None when there is none)."""
        if not self.attachments:
            return None
        attachment = self.attachments.pop()
        self._changed()
        return attachment

    def take(self) -> tuple[Attachment, ...]:
        """All the attachments, for the prompt being sent; the bar is empty after."""
        taken = tuple(self.attachments)
        self.attachments.clear()
        self._changed()
        return taken

    def _changed(self) -> None:
        self.set_class(bool(self.attachments), "-has-items")
        self.invalidate()

    def _content(self) -> RenderableType:
        chips = [chip_text(attachment.block) for attachment in self.attachments]
        return Group(*chips, Text(HINT, "acp.muted"))
