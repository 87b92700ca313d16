"""A prompt as the user wrote it, and the content blocks it is sent as: its text, the files it
`@mentions`, the images attached to it, and (after a rewind) the summary of the turns kept.

What cannot go as asked (a file outside the workspace, an image for an agent that takes none)
is left out or sent as a link, and said in `problems`.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from acp_tui.conversation.attachments import Attachment
from acp_tui.conversation.mentions import NO_IMAGES, PromptContent, prompt_blocks
from acp_tui.protocol.content import ContentBlock, text_block
from acp_tui.session.agent_info import AgentInfo


class Prompt(msgspec.Struct, frozen=True):
    """What the user sends in one turn."""

    text: str
    attachments: tuple[Attachment, ...] = ()


def prompt_content(
    prompt: Prompt, workspace: Path, info: AgentInfo, *, context: str | None = None
) -> PromptContent:
    """The blocks `prompt` is sent as to the agent `info` describes; `context` goes first."""
    images = info.supports("image")
    content = prompt_blocks(
        prompt.text, workspace, embed=info.supports("embedded_context"), images=images
    )
    if prompt.attachments and not images:
        names = ", ".join(attachment.name for attachment in prompt.attachments)
        content.problems.append(f"{NO_IMAGES}: {names} not sent")
    elif images:
        content.blocks.extend(_new_images(content.blocks, prompt.attachments))
    if not prompt.text.strip() and len(content.blocks) > 1:
        del content.blocks[0]  # no text was typed: an empty text block tells the agent nothing
    if context is not None:
        content.blocks.insert(0, text_block(context))
    return content


def only_refused_images(prompt: Prompt, info: AgentInfo) -> bool:
    """Whether `prompt` is nothing but images, for an agent that takes none (they were attached
    before it said so): sent, it would be an empty text."""
    return not prompt.text.strip() and bool(prompt.attachments) and not info.supports("image")


def _new_images(
    blocks: list[ContentBlock], attachments: tuple[Attachment, ...]
) -> list[ContentBlock]:
    """The attachments' blocks, less the images already among `blocks` or each other (one both
    @mentioned and pasted goes once)."""
    sent = {block.data for block in blocks if block.type == "image"}
    new: list[ContentBlock] = []
    for attachment in attachments:
        if attachment.block.data not in sent:
            sent.add(attachment.block.data)
            new.append(attachment.block)
    return new
