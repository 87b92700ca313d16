"""Adjacent text chunks of one message, read together, joined into one update.

An agent streams an answer a few words a notification, and one read of its pipe brings
hundreds of them. Joined, they cost the reducer and every listener (the transcript's view, the
record, a headless run's printer) one append, not hundreds, and say what they said one by one
(`is_plain_text`): the same text, in the same message, in the same order. Only plain text
joins (no annotations, no `_meta` on the block, the update or the notification), and only
within one session, one kind of chunk and one `messageId`: anything else ends the run.

The agent's and its thoughts' chunks only. The user's are never a flood, and one of them may
claim the prompt acp-tui shows already (`reducer._claim_sent_prompt`): one by one, the next
without a `messageId` can then be a message of its own.
"""

from __future__ import annotations

from typing import Any, cast

from msgspec import UNSET
from msgspec.structs import replace

from acp_tui.protocol.content import text_block
from acp_tui.protocol.updates import AgentMessageChunk, AgentThoughtChunk, SessionNotification

Chunk = AgentMessageChunk | AgentThoughtChunk
_CHUNKS = frozenset({AgentMessageChunk, AgentThoughtChunk})


def join_chunks(notifications: list[SessionNotification]) -> list[SessionNotification]:
    """`notifications`, each run of joinable chunks as one chunk of their joined text."""
    joined: list[SessionNotification] = []
    head: Any = None  # the run's first notification, whose update is a `Chunk`
    texts: list[str] = []
    # Once a notification of a flood: one pass, no call but the appends.
    for notification in notifications:
        chunk: Any = notification.update  # a `Chunk` when its class says so
        kind = chunk.__class__
        if kind in _CHUNKS:
            block = chunk.content
            text = block.text
            if (  # `is_plain_text`, inlined: once a chunk
                text.__class__ is str
                and block.type == "text"
                and block.meta is UNSET
                and block.annotations is UNSET
                and chunk.meta is UNSET
                and notification.meta is UNSET
            ):
                if (
                    head is not None
                    and kind is head.update.__class__
                    and chunk.message_id == head.update.message_id
                    and notification.session_id == head.session_id
                ):
                    texts.append(text)
                    continue
                if head is not None:
                    joined.append(_joined(head, texts))
                head, texts = notification, [text]
                continue
        if head is not None:
            joined.append(_joined(head, texts))
            head = None
        joined.append(notification)
    if head is not None:
        joined.append(_joined(head, texts))
    return joined


def _joined(head: SessionNotification, texts: list[str]) -> SessionNotification:
    if len(texts) == 1:
        return head
    chunk = cast(Chunk, head.update)
    return replace(head, update=replace(chunk, content=text_block("".join(texts))))
