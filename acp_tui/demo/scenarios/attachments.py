"""What the prompt brought besides text: `image` describes its images and draws one back,
and `describe_attachments` lists every attachment for the default reply.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from acp_tui.demo import texts
from acp_tui.demo.picture import HEIGHT, WIDTH, demo_png
from acp_tui.demo.turn import Turn
from acp_tui.demo.wire import blob_resource, image_block
from acp_tui.protocol.images import ImageError, decode_data, inspect

THUMBNAIL = (24, 16)
THUMBNAIL_URI = "demo://pictures/rainbow-thumbnail.png"


async def image(turn: Turn, arg: str) -> None:
    """Say what the prompt's images are (read from their bytes), then draw one and send it: a
    thumbnail in a tool call's output (an embedded resource), the picture in a message."""
    if any(block.get("type") == "image" for block in turn.prompt):
        await turn.say(describe_attachments(turn.prompt))
    else:
        await turn.say(texts.IMAGE_NONE_SENT)
    data = demo_png()
    call = await turn.tool("Draw a picture", "other", raw_input={"width": WIDTH, "height": HEIGHT})
    await turn.pause(0.3)
    thumbnail = blob_resource(THUMBNAIL_URI, demo_png(*THUMBNAIL), "image/png")
    await call.update(status="completed", content=[thumbnail])
    info = inspect(data)
    await turn.say(texts.IMAGE_DRAWN.format(pixels=info.pixels, size=info.size))
    await turn.show(image_block(data, "image/png"))


def _describe_image(block: dict[str, Any]) -> str:
    name = unquote(str(block.get("uri") or "").rsplit("/", 1)[-1]) or "an image"
    try:
        data = decode_data(block.get("data") if isinstance(block.get("data"), str) else "")
        info = inspect(data)
    except ImageError as error:
        return f"- ▣ **{name}** (`{block.get('mimeType')}`): I could not read it ({error})"
    kind = info.mime_type.removeprefix("image/").upper()
    said = (
        f" (you said `{block.get('mimeType')}`)" if block.get("mimeType") != info.mime_type else ""
    )
    return f"- ▣ **{name}**: a {kind} image{said}, **{info.pixels}** pixels, {info.size:,} bytes"


def describe_attachments(prompt: list[dict[str, Any]]) -> str:
    lines = []
    for block in prompt:
        kind = block.get("type")
        if kind == "text":
            continue
        if kind == "resource_link":
            lines.append(f"- 🔗 **{block.get('name')}** (`{block.get('uri')}`)")
        elif kind == "resource":
            resource = block.get("resource") or {}
            uri = resource.get("uri", "?")
            if "text" in resource:
                count = resource["text"].count("\n") + 1
                lines.append(f"- 📄 `{uri}`: {count} lines of text")
            else:
                size = len(resource.get("blob", "")) * 3 // 4
                lines.append(f"- 📦 `{uri}`: about {size:,} bytes")
        elif kind == "image":
            lines.append(_describe_image(block))
        elif kind == "audio":
            size = len(block.get("data", "")) * 3 // 4
            lines.append(f"- 🔊 an audio clip ({block.get('mimeType')}, about {size:,} bytes)")
        else:
            lines.append(f"- a `{kind}` block I don't know")
    if not lines:
        return ""
    return texts.ATTACHMENTS_HEADER + "\n".join(lines) + "\n\n"
