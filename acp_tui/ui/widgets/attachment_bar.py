"""The images waiting to go with the next prompt: a chip each, above the prompt, both those
attached (a pasted path, the clipboard) and those the prompt mentions (`@shot.png`)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.text import Text

from acp_tui.conversation.attachments import Attachment, image_from_file
from acp_tui.conversation.mentions import NO_IMAGES
from acp_tui.protocol.images import ImageError
from acp_tui.ui.render.chips import chip_text
from acp_tui.ui.widgets.render_view import RenderView

HINT = "backspace on an empty prompt removes the last image"

Mentioned = tuple[str, Attachment | ImageError]
"""An image the prompt mentions: its name as written, and the image read (or why it cannot
be sent as one)."""


class AttachmentBar(RenderView):
    """Chips for the images of the prompt being written; hidden when there are none."""

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
        self.mentioned: list[Mentioned] = []
        """The images the prompt mentions, which go with it (as `prompt_blocks` sends them)."""
        self._takes_images = True
        self._read: dict[tuple[Path, int, int], Attachment | ImageError] = {}
        """Each image mentioned, read once (by its path, time and size)."""

    def add(self, *attachments: Attachment) -> None:
        """Add `attachments` to the prompt being written, as chips at the end."""
        self.attachments.extend(attachments)
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

    def mention(self, images: list[tuple[str, Path]], *, takes_images: bool) -> None:
        """The prompt mentions `images` (name as written, path) now: a chip each, saying so
        when one goes as a link instead (too large, not an image, an agent that takes none)."""
        self._takes_images = takes_images
        read: dict[tuple[Path, int, int], Attachment | ImageError] = {}
        self.mentioned = [(name, self._image(name, path, read)) for name, path in images]
        self._read = read  # only what is mentioned now: each may hold 5 MB
        self._changed()

    def _image(
        self, name: str, path: Path, read: dict[tuple[Path, int, int], Attachment | ImageError]
    ) -> Attachment | ImageError:
        try:
            stat = path.stat()
        except OSError as error:
            return ImageError(f"{name} cannot be read: {error.strerror or error}")
        key = (path, stat.st_mtime_ns, stat.st_size)
        if key not in read:
            try:
                read[key] = self._read.get(key) or image_from_file(path, name)
            except ImageError as error:
                read[key] = error
        return read[key]

    def _changed(self) -> None:
        self.set_class(bool(self._chips()), "-has-items")
        self.invalidate()

    def _content(self) -> RenderableType:
        lines = self._chips()
        if self.attachments:
            lines.append(Text(HINT, "acp.muted"))
        return Group(*lines)

    def _chips(self) -> list[Text]:
        lines = [chip_text(attachment.block) for attachment in self.attachments]
        attached = {attachment.block.data for attachment in self.attachments}
        for name, image in self.mentioned:
            if isinstance(image, ImageError):
                chip = Text.assemble((" ▣ image ", "acp.chip.kind"), " ")
                chip.append(f"{image}; it goes as a link", "acp.warning")
            elif image.block.data in attached:
                continue  # pasted and mentioned: it goes once, its chip is above
            elif not self._takes_images:
                chip = chip_text(image.block, f"{NO_IMAGES}: it goes as a link")
            else:
                chip = chip_text(image.block)
                chip.append(f" @{name}", "acp.muted")
            lines.append(chip)
        return lines
