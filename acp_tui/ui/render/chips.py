"""Chips: one-line labels for content that is not text (images, audio, resources, links)."""

from __future__ import annotations

from rich.text import Text

from acp_tui.protocol.content import ContentBlock, block_label, image_data
from acp_tui.protocol.images import ImageError, inspect_data, too_large_to_show

_ICONS = {
    "image": "▣",
    "audio": "♪",
    "resource": "▤",
    "resource_link": "↗",
}


def chip_text(block: ContentBlock, note: str | None = None) -> Text:
    """`▣ image · cat.png · image/png · 640×480 · 12.0 KB` as a tinted pill, then `note` (why
    a picture is not drawn) if any; an image too big to draw says so by itself."""  # noqa: RUF002
    label = block_label(block)
    kind, _, rest = label.partition(" · ")
    picture = image_data(block)
    icon = _ICONS.get("image" if picture is not None else block.type, "◆")
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" {icon} {kind} ", "acp.chip.kind")
    if rest:
        text.append(f"{rest} ", "acp.chip")
    note = note or (_too_large(picture[0]) if picture is not None else None)
    if note:
        text.append(f" {note}", "acp.warning")
    return text


def _too_large(data: str) -> str | None:
    try:
        reason = too_large_to_show(inspect_data(data))
    except ImageError:
        return None  # broken: the label says so
    return f"too large to show: {reason}" if reason else None
