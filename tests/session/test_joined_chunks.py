"""Chunks read together are joined (`join_chunks`): the state shows what the chunks one by one
would have shown, and nothing that must stay apart is joined."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_tui.protocol.content import text_block
from acp_tui.protocol.updates import SessionNotification
from acp_tui.session import reducer
from acp_tui.session.joined_chunks import join_chunks
from acp_tui.session.state import Message, SessionState
from tests.agents.flood_agent import SESSION
from tests.support import TEST_AGENTS


def notification(update: dict[str, Any], session: str = "s") -> SessionNotification:
    params = {"sessionId": session, "update": update}
    return msgspec.json.decode(msgspec.json.encode(params), type=SessionNotification)


def chunk(text: str, kind: str = "agent_message_chunk", **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}, **fields}


def shown(notifications: list[SessionNotification]) -> list[tuple[str, str, str]]:
    """(session, kind, text) of each notification, the text of a chunk or its kind's name."""
    return [
        (n.session_id, n.update.__class__.__name__, getattr(n.update.content, "text", "?"))  # type: ignore[union-attr]
        for n in notifications
    ]


def test_a_run_of_plain_chunks_of_one_message_becomes_one_chunk() -> None:
    read = [
        notification(chunk("a", messageId="m1")),
        notification(chunk("b", messageId="m1")),
        notification(chunk("c", "agent_thought_chunk")),
        notification(chunk("d", "agent_thought_chunk")),
        notification(chunk("e", messageId="m1")),
        notification(chunk("f", messageId="m2")),
        notification(chunk("g", "user_message_chunk")),
        notification(chunk("h", "user_message_chunk")),
        notification(chunk("i")),
        notification(chunk("j"), session="t"),
        notification(chunk("k"), session="t"),
    ]
    assert shown(join_chunks(read)) == [
        ("s", "AgentMessageChunk", "ab"),
        ("s", "AgentThoughtChunk", "cd"),
        ("s", "AgentMessageChunk", "e"),
        ("s", "AgentMessageChunk", "f"),
        ("s", "UserMessageChunk", "g"),  # the user's chunks stay apart
        ("s", "UserMessageChunk", "h"),
        ("s", "AgentMessageChunk", "i"),
        ("t", "AgentMessageChunk", "jk"),
    ]


@pytest.mark.parametrize(
    "apart",
    [
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "x", "annotations": {"priority": 1}},
        },
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "x", "_meta": {"k": 1}},
        },
        chunk("x", _meta={"k": 1}),
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "image", "data": "AA==", "mimeType": "image/png"},
        },
        {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Read"},
    ],
    ids=["annotated", "block meta", "update meta", "image", "tool call"],
)
def test_what_carries_more_than_text_stays_apart_and_ends_the_run(apart: dict[str, Any]) -> None:
    read = [notification(chunk("a")), notification(apart), notification(chunk("b"))]
    joined = join_chunks(read)
    assert len(joined) == 3
    assert joined[1] is read[1]
    assert msgspec.json.encode(joined[1]) == msgspec.json.encode(read[1])


def test_a_notification_with_its_own_meta_is_not_joined() -> None:
    params = {"sessionId": "s", "update": chunk("b"), "_meta": {"trace": "t1"}}
    marked = msgspec.json.decode(msgspec.json.encode(params), type=SessionNotification)
    read = [notification(chunk("a")), marked, notification(chunk("c"))]
    assert shown(join_chunks(read)) == [
        ("s", "AgentMessageChunk", "a"),
        ("s", "AgentMessageChunk", "b"),
        ("s", "AgentMessageChunk", "c"),
    ]


def _random_update(rng: random.Random) -> tuple[str, dict[str, Any]]:
    session = rng.choice(["s", "s", "s", "t"])
    roll = rng.random()
    if roll < 0.75:
        kind = rng.choice(
            ["agent_message_chunk"] * 4 + ["agent_thought_chunk", "user_message_chunk"]
        )
        fields: dict[str, Any] = {}
        if rng.random() < 0.5:
            fields["messageId"] = rng.choice(["m1", "m2", "m3"])
        text = rng.choice(["word ", "two words ", "\n\n# A heading\n", "`x` "])
        if rng.random() < 0.05:
            annotated = {"type": "text", "text": text, "annotations": {"priority": 0.5}}
            return session, {"sessionUpdate": kind, "content": annotated, **fields}
        return session, chunk(text, kind, **fields)
    if roll < 0.82:
        image = {"type": "image", "data": "AA==", "mimeType": "image/png"}
        return session, {"sessionUpdate": "agent_message_chunk", "content": image}
    if roll < 0.92:
        return session, {
            "sessionUpdate": "tool_call",
            "toolCallId": f"c{rng.randrange(3)}",
            "title": "Edit",
        }
    return session, {
        "sessionUpdate": "agent_message",
        "messageId": "m1",
        "content": [{"type": "text", "text": "whole"}],
    }


def _timeline(state: SessionState) -> list[Any]:
    """The state's items as plain data, each message's adjacent text blocks as one (how a
    message's text is cut into blocks is the reducer's business, not what it shows)."""
    items = []
    for item in state.timeline:
        data = msgspec.to_builtins(item)
        if isinstance(item, Message):
            content: list[Any] = []
            for block in data["content"]:
                if (
                    content
                    and set(block) == {"type", "text"}
                    and set(content[-1]) == {"type", "text"}
                ):
                    content[-1] = {"type": "text", "text": content[-1]["text"] + block["text"]}
                else:
                    content.append(block)
            data["content"] = content
        items.append(data)
    return items


@pytest.mark.parametrize("seed", range(100))
def test_joined_or_one_by_one_the_state_shows_the_same(seed: int) -> None:
    rng = random.Random(seed)
    read = [
        notification(update, session)
        for session, update in (_random_update(rng) for _ in range(400))
    ]
    cut = sorted(rng.sample(range(1, len(read)), 12))  # the reads the updates came in
    reads = [read[a:b] for a, b in zip([0, *cut], [*cut, len(read)], strict=True)]
    one_by_one = {"s": SessionState(session_id="s"), "t": SessionState(session_id="t")}
    joined = {"s": SessionState(session_id="s"), "t": SessionState(session_id="t")}
    for state in [*one_by_one.values(), *joined.values()]:  # a turn, its prompt shown
        reducer.begin_turn(state, [text_block("hello world")])
        reducer.add_notice(state, "info", "something shown before the agent's echo")
    for n in read:
        reducer.apply(one_by_one[n.session_id], n.update)
    applied = 0
    for part in reads:
        for n in join_chunks(part):
            reducer.apply(joined[n.session_id], n.update)
            applied += 1
    assert applied < len(read)
    for session in ("s", "t"):
        assert _timeline(joined[session]) == _timeline(one_by_one[session])


def test_an_answer_streamed_down_a_real_pipe_reads_whole_in_fewer_updates(
    tmp_path: Path,
) -> None:
    """`acp-tui -p` on an agent that writes 3,000 chunks at once: the text printed is the text
    sent, in fewer message events than chunks."""
    words = [f"word{n} " for n in range(3000)]
    flood = tmp_path / "flood.jsonl"
    flood.write_text(
        "".join(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": SESSION, "update": chunk(word)},
                }
            )
            + "\n"
            for word in words
        )
    )
    agent = [sys.executable, str(TEST_AGENTS / "flood_agent.py"), str(flood)]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_tui",
            "--no-record",
            "--no-checkpoints",
            "-p",
            "go",
            "--output-format",
            "jsonl",
            "--",
            *agent,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=True,
    )
    events = [json.loads(line) for line in run.stdout.splitlines()]
    appended = [event["append"]["text"] for event in events if event.get("role") == "agent"]
    assert "".join(appended) == "".join(words)
    assert len(appended) < len(words)
