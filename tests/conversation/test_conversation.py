"""`Conversation` driven with no front end at all (no Textual, no headless printer): a start,
turns, a permission answered by policy, a checkpoint around each turn, a cancel and a resume,
against the built-in demo agent and a real agent (Claude Code, offline on the fake model).
And the one turn: the TUI and headless mode both run a prompt through `Conversation.run_turn`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from acp_tui.checkpoints.checkpointer import Checkpointer
from acp_tui.config import DEMO_COMMAND, AgentConfig
from acp_tui.conversation.agent_link import Opening
from acp_tui.conversation.conversation import Conversation
from acp_tui.conversation.front_end import FrontEnd
from acp_tui.conversation.prompt import Prompt
from acp_tui.conversation.shared import Shared
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.change import Change
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import Session
from acp_tui.session.state import Message, PermissionAnswer
from tests.support import real_agents
from tests.support.checkpoints import staging_held
from tests.support.fake_model import FakeModel
from tests.support.pilot import DEMO_FILES, demo_workspace, send, wait_idle
from tests.support.ui import started_app


class Watcher(FrontEnd):
    """A front end with no screen and nobody to ask: it only remembers what it heard."""

    def __init__(self) -> None:
        self.heard: list[str] = []
        self.changes: list[Change] = []

    def agent_started(self, info: AgentInfo) -> None:
        self.heard.append(f"started {info.name}")

    def agent_exited(self, description: str) -> None:
        self.heard.append(f"exited {description}")

    def session_shown(self, session: Session) -> None:
        self.heard.append("session shown")

    def prompt_held(self, prompt: Prompt | None) -> None:
        self.heard.append(f"held {prompt.text}" if prompt is not None else "held no more")

    def say(self, severity: str, title: str, detail: str | None = None) -> None:
        self.heard.append(f"{severity}: {title}")

    def listen(self, session: Session, change: Change) -> None:
        self.changes.append(change)

    def policy_answers(self) -> list[PermissionAnswer]:
        return [c.delta for c in self.changes if c.kind == "permission" and c.delta.by == "policy"]


@asynccontextmanager
async def conversation(
    workspace: Path,
    agent: AgentConfig,
    watcher: Watcher,
    *,
    opening: Opening | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Conversation]:
    shared = Shared(workspace, permission="allow", checkpoints=True, record=True)
    options = ClientOptions(cwd=workspace, env=env or {}, startup_timeout=60)
    talk = Conversation(agent, options, shared, watcher, opening=opening)
    talk.subscribe(watcher.listen)
    try:
        await talk.start()
        yield talk
    finally:
        await talk.close()
        shared.close()


def texts(talk: Conversation, role: str) -> list[str]:
    assert talk.session is not None
    timeline = talk.session.state.timeline
    return [item.text for item in timeline if isinstance(item, Message) and item.role == role]


async def until(condition: Any, timeout: float = 30) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


async def cancel_midway(talk: Conversation, prompt: str, streaming: Any) -> str | None:
    """Send `prompt`, cancel the turn once `streaming()`; its stop reason."""
    turn = asyncio.ensure_future(talk.run_turn(Prompt(prompt)))
    await until(streaming)
    assert talk.cancel(grace=20)
    end = await asyncio.wait_for(turn, 30)
    return end.stop_reason


# -- the demo agent --------------------------------------------------------------------------


async def test_a_conversation_with_the_demo_agent_and_no_front_end(tmp_path: Path) -> None:
    workspace = demo_workspace(tmp_path / "workspace")
    demo = AgentConfig("demo", [*DEMO_COMMAND, "--speed", "0", "--data-dir", str(tmp_path)])
    watcher = Watcher()
    async with conversation(workspace, demo, watcher) as talk:
        assert watcher.heard[:2] == ["started acp-tui-demo", "session shown"]
        assert talk.session is not None
        session_id = talk.session.id

        hello = await talk.run_turn(Prompt("hello"))
        assert (hello.stop_reason, hello.error) == ("end_turn", None)
        assert texts(talk, "agent")

        edit = await talk.run_turn(Prompt("/edit app.py"))  # asks before it writes
        assert edit.stop_reason == "end_turn"
        [answer] = watcher.policy_answers()
        assert answer.reason is not None and answer.reason.startswith("--permission allow")
        assert (workspace / "app.py").read_text() != DEMO_FILES["app.py"]
        assert edit.changes is not None  # checkpointed before and after
        assert [(f.path, f.status) for f in edit.changes.files] == [("app.py", "modified")]

        session = talk.session
        stop = await cancel_midway(talk, "slow 30", lambda: "1/30" in texts(talk, "agent")[-1])
        assert stop == "cancelled"
        assert session.state.stop_reason == "cancelled"

    # Another conversation goes on with that session: its history is there.
    again = Watcher()
    async with conversation(workspace, demo, again, opening=Opening(resume=session_id)) as talk:
        assert talk.session is not None and talk.session.id == session_id
        assert texts(talk, "user")[:2] == ["hello", "/edit app.py"]
        assert (await talk.run_turn(Prompt("hello again"))).stop_reason == "end_turn"


async def test_a_prompt_held_for_its_checkpoint_is_said_and_can_be_withdrawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint that takes long (the first of a big workspace) holds the prompt: the
    front end hears so, and a cancel withdraws the prompt before it is sent."""
    workspace = demo_workspace(tmp_path / "workspace")
    demo = AgentConfig("demo", [*DEMO_COMMAND, "--speed", "0", "--data-dir", str(tmp_path)])
    watcher = Watcher()
    async with conversation(workspace, demo, watcher) as talk:
        with staging_held():
            turn = asyncio.ensure_future(talk.run_turn(Prompt("hello")))
            await until(lambda: "held hello" in watcher.heard)
            assert talk.preparing and talk.cancel(grace=20)
            end = await asyncio.wait_for(turn, 30)
        assert end.withdrawn and end.stop_reason is None
        assert watcher.heard[-1] == "held no more" and not talk.preparing
        assert talk.session is not None and talk.session.state.turn == 0
        assert not texts(talk, "user")  # never sent
        assert not talk.cancel(grace=20)  # nothing left to cancel

        end = await talk.run_turn(Prompt("hello"))
        assert (end.stop_reason, end.withdrawn) == ("end_turn", False)
        assert texts(talk, "user") == ["hello"] and talk.session.state.turn == 1

        # Withdrawn as the checkpoint is taken, before the turn goes on: the user's word wins,
        # and the checkpoint taken is not the next turn's.
        before_turn = Checkpointer.before_turn

        async def taken_then_withdrawn(self: Checkpointer, session: Session, text: str) -> bool:
            taken = await before_turn(self, session, text)
            assert talk.preparing and talk.cancel(grace=20)
            return taken

        monkeypatch.setattr(Checkpointer, "before_turn", taken_then_withdrawn)
        end = await talk.run_turn(Prompt("not this one"))
        assert end.withdrawn and texts(talk, "user") == ["hello"]
        assert talk.shared.checkpoints._running == {}
        monkeypatch.setattr(Checkpointer, "before_turn", before_turn)
        end = await talk.run_turn(Prompt("hello again"))
        assert end.stop_reason == "end_turn" and talk.session.state.turn == 2


# -- a real agent ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.mark.timeout(900)  # Claude is installed from npm on first use
async def test_a_conversation_with_claude_and_no_front_end(
    claude_agent_acp: list[str], model: FakeModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = real_agents.claude(claude_agent_acp)
    env = claude.environment(tmp_path / "home", model.url)
    for name in set(os.environ) - set(env):  # the agent gets ours with `env` laid over it
        monkeypatch.delenv(name)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    target = workspace / "new.txt"
    agent = AgentConfig.for_command(claude.argv)
    watcher = Watcher()
    async with conversation(workspace, agent, watcher, env=env) as talk:
        assert talk.session is not None
        session_id = talk.session.id

        write = await talk.run_turn(Prompt(f"DO:write {target} written-by-a-conversation"))
        assert write.stop_reason == "end_turn", watcher.heard
        assert target.read_text() == "written-by-a-conversation\n"
        assert [a.option_id is not None for a in watcher.policy_answers()] == [True]
        assert write.changes is not None
        assert [(f.path, f.status) for f in write.changes.files] == [("new.txt", "added")]

        def slow_chunks() -> bool:
            return any("slow chunk" in text for text in texts(talk, "agent"))

        assert await cancel_midway(talk, "DO:slow", slow_chunks) == "cancelled"

    again = Watcher()
    resumed = Opening(resume=session_id)
    async with conversation(workspace, agent, again, opening=resumed, env=env) as talk:
        assert talk.session is not None and talk.session.id == session_id
        assert any("DO:write" in text for text in texts(talk, "user"))  # the history shown
        assert (await talk.run_turn(Prompt("hello"))).stop_reason == "end_turn"


# -- one turn, two front ends ------------------------------------------------------------------


@pytest.fixture
def prompts_sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Who called `Session.prompt`, for every prompt sent in this test."""
    callers: list[str] = []
    prompt = Session.prompt

    async def spied(session: Session, content: Any) -> str | None:
        frame = sys._getframe(1)
        callers.append(f"{frame.f_globals['__name__']}.{frame.f_code.co_name}")
        return await prompt(session, content)

    monkeypatch.setattr(Session, "prompt", spied)
    return callers


async def test_the_tui_and_headless_mode_run_the_same_turn(
    tmp_path: Path, prompts_sent: list[str]
) -> None:
    from acp_tui.headless.run import HeadlessOptions, run_headless

    async with started_app(tmp_path / "tui") as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
    assert prompts_sent == ["acp_tui.conversation.conversation.run_turn"]

    workspace = demo_workspace(tmp_path / "headless")
    out = tmp_path / "out.txt"
    with out.open("w") as stream:
        options = HeadlessOptions(prompts=["hello"], record=False, out=stream, err=stream)
        argv = [*DEMO_COMMAND, "--speed", "0", "--no-persist"]
        assert await run_headless(argv, ClientOptions(cwd=workspace), options) == 0
    assert prompts_sent == ["acp_tui.conversation.conversation.run_turn"] * 2
