"""Content blocks and tool-call content, v1 and v2 draft.

Both are open unions on `type`. Each is one struct carrying the fields of every variant, so a
block of a type we have never seen still decodes, keeps its `type`, and can be shown plainly.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import msgspec
from msgspec import UNSET, UnsetType

from acp_tui.protocol.images import ImageError, inspect_data
from acp_tui.protocol.wire import Wire
from acp_tui.text import human_size

Meta = dict[str, Any] | None | UnsetType


class EmbeddedResource(Wire):
    uri: str
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    mime_type: str | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ContentBlock(Wire):
    """`text`, `image`, `audio`, `resource_link`, `resource`, or a type from the future."""

    type: str
    text: str | UnsetType = UNSET
    data: str | UnsetType = UNSET
    mime_type: str | UnsetType | None = UNSET
    uri: str | UnsetType | None = UNSET
    name: str | UnsetType = UNSET
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    size: int | UnsetType | None = UNSET
    resource: EmbeddedResource | UnsetType = UNSET
    annotations: Any = UNSET
    icons: Any = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


def text_block(text: str) -> ContentBlock:
    return ContentBlock(type="text", text=text)


def is_plain_text(block: ContentBlock) -> bool:
    """A text block that carries nothing but its text (no annotations, no `_meta`): two of
    them in a row say what one block with both texts says."""
    return (
        block.type == "text"
        and block.text.__class__ is str
        and block.meta is UNSET
        and block.annotations is UNSET
    )


def block_text(block: ContentBlock) -> str:
    """The text a block contributes to a message; non-text blocks contribute nothing."""
    return block.text if block.type == "text" and isinstance(block.text, str) else ""


def image_data(block: ContentBlock) -> tuple[str, str | None, str | None] | None:
    """(base64 data, uri, MIME type said) of a picture: an `image` block, or an embedded
    resource whose blob has an image MIME type. None for anything else."""
    if block.type == "image" and isinstance(block.data, str):
        uri = block.uri if isinstance(block.uri, str) else None
        return block.data, uri, block.mime_type if isinstance(block.mime_type, str) else None
    resource = block.resource
    if (
        block.type == "resource"
        and isinstance(resource, EmbeddedResource)
        and isinstance(resource.blob, str)
        and isinstance(resource.mime_type, str)
        and resource.mime_type.startswith("image/")
    ):
        return resource.blob, resource.uri, resource.mime_type
    return None


def block_label(block: ContentBlock) -> str:
    """A one-line description of a non-text block: what it is, its name, type and size."""
    picture = image_data(block)
    if picture is not None:
        return _image_label(*picture)
    if block.type == "resource" and isinstance(block.resource, EmbeddedResource):
        resource = block.resource
        size = len(resource.text) if isinstance(resource.text, str) else None
        return _label("resource", resource.uri, resource.mime_type, size)
    if block.type == "resource_link":
        return _label("link", block.name or block.uri, block.mime_type, block.size)
    if block.type in ("image", "audio"):  # here: without data
        size = len(block.data) * 3 // 4 if isinstance(block.data, str) else None
        return _label(block.type, block.uri, block.mime_type, size)
    return _label(block.type, block.name or block.uri or block.title, None, None)


def _label(kind: str, name: Any, mime: Any, size: Any) -> str:
    parts = [kind]
    if isinstance(name, str) and name:
        parts.append(name)
    if isinstance(mime, str) and mime:
        parts.append(mime)
    if isinstance(size, int):
        parts.append(human_size(size))
    return " · ".join(parts)


def _image_label(data: str, uri: str | None, said: str | None) -> str:
    """`image · cat.png · image/png · 640 by 480 pixels · 12.0 KB`, or what is wrong with it."""
    name = unquote(uri.rstrip("/").rsplit("/", 1)[-1]) if uri else None
    try:
        info = inspect_data(data)
    except ImageError as error:
        return _label("image", name, said, None) + f" · broken image: {error}"
    return " · ".join(
        (_label("image", name, info.mime_type, None), info.pixels, human_size(info.size))
    )


class DiffChange(Wire):
    """v2 structured diff entry: an operation on a path (or a pair of paths)."""

    operation: str
    path: str
    old_path: str | UnsetType = UNSET
    file_type: str | UnsetType | None = UNSET
    mime_type: str | UnsetType | None = UNSET


class DiffPatch(Wire):
    format: str
    text: str


class ToolCallContent(Wire):
    """`content` (a block), `diff` (v1: path/oldText/newText; v2: changes/patch), `terminal`."""

    type: str
    content: ContentBlock | UnsetType = UNSET
    path: str | UnsetType = UNSET
    old_text: str | UnsetType | None = UNSET
    new_text: str | UnsetType = UNSET
    changes: list[DiffChange] | UnsetType = UNSET
    patch: DiffPatch | UnsetType | None = UNSET
    terminal_id: str | UnsetType = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")


class ToolCallLocation(Wire):
    path: str
    line: int | UnsetType | None = UNSET
    meta: Meta = msgspec.field(default=UNSET, name="_meta")
