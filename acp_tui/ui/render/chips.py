"""Chips: one-line labels for content that is not text (images, audio, resources, links)."""

from __future__ import annotations

from rich.text import Text

from acp_tui.protocol.content import ContentBlock, block_label

_ICONS = {
    "image": "▣",
    "audio": "♪",
    "resource": "▤",
    "resource_link": "↗",
}


def chip_text(block: ContentBlock) -> Text:
    """`▣ image · cat.png · image/png · 12.0 KB` as a tinted pill."""
    label = block_label(block)
    kind, _, rest = label.partition(" · ")
    icon = _ICONS.get(block.type, "◆")
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" {icon} {kind} ", "acp.chip.kind")
    if rest:
        text.append(f"{rest} ", "acp.chip")
    return text
