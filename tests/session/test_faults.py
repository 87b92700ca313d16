"""`AgentClient` against hostile agents: what a front end (the TUI) builds on after a crash.

The headless cases are in `tests/headless/test_faults.py`; these drive the session client
directly, as the TUI does, to check the pieces its "restart the agent" and "resume the session"
rest on.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from acp_tui.protocol.content import text_block
from acp_tui.protocol.jsonrpc import ConnectionClosed
from acp_tui.session.change import Change
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission, Session
from acp_tui.session.state import Message, Notice, SessionState
from acp_tui.transport.connection import Connection
from tests.agents.hostile import AGENTS, LOG_ENV, AgentLog, check_transcript, read_transcript
from tests.session.test_fuzz import WriterStub


def texts(state: SessionState) -> list[tuple[str, str]]:
    return [(item.role, item.text) for item in state.timeline if isinstance(item, Message)]


async def refuse(pending: PendingPermission) -> None:
    pending.cancel()


@pytest.fixture
def agent_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "agent.log"
    monkeypatch.setenv(LOG_ENV, str(path))
    return path


async def test_after_a_crash_the_agent_restarts_and_loads_the_session(
    tmp_path: Path, agent_log: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    transcript = tmp_path / "transcript.jsonl"
    problems: list[str] = []
    client = AgentClient(
        AGENTS["crashes-once-then-loads"].argv(),
        ClientOptions(cwd=workspace, transcript=transcript, startup_timeout=10),
        decide_permission=refuse,
        on_problem=problems.append,
    )
    try:
        await client.start()
        session = await client.new_session()
        # The crash fails the turn, saying why, and the session says so too.
        reason = "the agent exited with code 70 (stderr: panic: the model backend went away)"
        with pytest.raises(ConnectionClosed) as failed:
            await asyncio.wait_for(session.prompt([text_block("first")]), 10)
        assert failed.value.message == reason
        assert client.exited.is_set() and not session.busy
        last = session.state.timeline[-1]
        assert isinstance(last, Notice) and (last.severity, last.title) == ("error", reason)
        # What the user had is still there: the prompt and the half answer.
        assert texts(session.state) == [("user", "first"), ("agent", "Half an answer")]
        # Anything asked of the dead agent fails at once, saying why.
        with pytest.raises(ConnectionClosed, match="exited with code 70"):
            await client.request("session/list", {})

        # Restart it; it can load the session, which replays the conversation.
        await client.close()
        await client.start()
        assert client.info.supports("load")
        loaded = await client.open_session(session.id)
        assert texts(loaded.state) == [("user", "first"), ("agent", "Half an answer")]
        assert await asyncio.wait_for(loaded.prompt([text_block("again")]), 10) == "end_turn"
        assert texts(loaded.state)[-1] == ("agent", "You said: again")
    finally:
        await client.close()
    assert problems == []
    log = AgentLog.read(agent_log)
    assert len(log.pids) == 2
    # One transcript for both processes, complete and in order.
    check_transcript(read_transcript(transcript), log)


async def test_abandoning_a_turn_the_agent_will_not_end_returns_at_once(
    tmp_path: Path, agent_log: Path
) -> None:
    # What a front end does when the agent ignores a cancel: give up on the turn. The prompt
    # must return then, not wait for an answer that will never come.
    client = AgentClient(
        AGENTS["long-command"].argv(),
        # It runs its command without asking: no guard, or the command would be refused.
        ClientOptions(cwd=tmp_path, startup_timeout=10, guard=False),
        decide_permission=refuse,
    )
    try:
        await client.start()
        session = await client.new_session()
        started = asyncio.Event()
        session.listeners.append(
            lambda _session, change: started.set() if change.kind == "tool_call" else None
        )
        turn = asyncio.ensure_future(session.prompt([text_block("go")]))
        await asyncio.wait_for(started.wait(), 10)
        await session.cancel()
        await asyncio.sleep(0.2)
        assert session.busy and session.state.status == "cancelling"  # ignored
        session.abandon_turn("the agent ignored the cancel")
        assert await asyncio.wait_for(turn, 1) is None
        assert session.state.status == "idle" and not session.busy
        last = session.state.timeline[-1]
        assert isinstance(last, Notice) and last.title == "the agent ignored the cancel"
    finally:
        await client.close()
    log = AgentLog.read(agent_log)
    assert "session/cancel" in [m.get("method") for m in log.got_messages()]


async def test_an_update_a_listener_fails_on_loses_none_of_those_read_with_it(
    tmp_path: Path,
) -> None:
    """Updates reach the session a read's run at a time: one that fails is said, and the rest
    of its run is applied all the same."""
    problems: list[str] = []
    client = AgentClient(
        ["unused"],
        ClientOptions(cwd=tmp_path),
        decide_permission=refuse,
        on_problem=problems.append,
    )
    session = client.sessions["s"] = Session(client, "s")

    def fails_on_two(_session: Session, change: Change) -> None:
        if isinstance(change.item, Message) and change.item.text.endswith("two "):
            raise RuntimeError("a listener's bug")

    session.listeners.append(fails_on_two)
    words = ["one ", "two ", "three ", "four "]
    lines = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": "s",
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        # One message a word: chunks of one message read together are
                        # joined into one update (`join_chunks`).
                        "messageId": f"m{number}",
                        "content": {"type": "text", "text": word},
                    },
                },
            }
        )
        for number, word in enumerate(words)
    ]
    reader = asyncio.StreamReader()
    reader.feed_data("".join(line + "\n" for line in lines).encode())  # one read: one run
    reader.feed_eof()
    connection = Connection(
        reader,
        WriterStub(),  # type: ignore[arg-type]
        client,
        on_problem=problems.append,
        typed_notifications=client.typed_notifications,
    )
    await asyncio.wait_for(connection.run(), 10)
    assert texts(session.state) == [("agent", word) for word in words]
    assert problems == ['could not handle a notification: RuntimeError("a listener\'s bug")']
