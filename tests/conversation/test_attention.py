"""What a conversation needs of the user (`acp_tui.conversation.attention`), with no front end
but one that remembers what it heard: the demo agent's turns, its permission request and its
question, its death; and which of those are worth a notification."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from acp_tui.config import DEMO_COMMAND, AgentConfig, Notify
from acp_tui.conversation.attention import Call, worth_telling
from acp_tui.conversation.conversation import Conversation
from acp_tui.conversation.front_end import FrontEnd
from acp_tui.conversation.prompt import Prompt
from acp_tui.conversation.shared import Shared
from acp_tui.session.elicitation import PendingElicitation
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission
from tests.support.pilot import demo_workspace


class Asked(FrontEnd):
    """Someone to ask, who leaves every request and question waiting."""

    asks_permission = True
    answers_questions = True

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.waiting: list[PendingPermission | PendingElicitation] = []

    async def ask_permission(self, pending: PendingPermission) -> None:
        self.waiting.append(pending)

    async def ask_question(self, pending: PendingElicitation) -> None:
        self.waiting.append(pending)

    def needs_you(self, call: Call) -> None:
        self.calls.append(call)


@asynccontextmanager
async def talking(tmp_path: Path, front_end: FrontEnd) -> AsyncIterator[Conversation]:
    workspace = demo_workspace(tmp_path / "workspace")
    demo = AgentConfig("demo", [*DEMO_COMMAND, "--speed", "0", "--no-persist"])
    shared = Shared(workspace, permission="ask", checkpoints=False)
    talk = Conversation(demo, ClientOptions(cwd=workspace), shared, front_end)
    try:
        await talk.start()
        yield talk
    finally:
        await talk.close()
        shared.close()


async def until(condition: object, timeout: float = 15) -> None:
    async def poll() -> None:
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


async def test_a_turn_ended_unseen_is_news_until_the_user_looks(tmp_path: Path) -> None:
    front_end = Asked()
    async with talking(tmp_path, front_end) as talk:
        attention = talk.attention
        await talk.run_turn(Prompt("hello"))
        [call] = front_end.calls
        assert (call.need, call.looking) == ("done", False)
        assert call.body and "\n" not in call.body  # the answer's first line
        assert attention.needs == ["done"]

        attention.look(True)
        assert attention.need is None  # seen
        await talk.run_turn(Prompt("hello"))  # while looking: told, but no news
        assert front_end.calls[-1].looking and attention.need is None


async def test_a_request_and_a_question_need_the_user_while_they_wait(tmp_path: Path) -> None:
    front_end = Asked()
    async with talking(tmp_path, front_end) as talk:
        attention = talk.attention
        attention.look(True)
        turn = asyncio.ensure_future(talk.run_turn(Prompt("/edit app.py")))
        await until(lambda: front_end.waiting)
        assert attention.need == "permission"
        assert front_end.calls[-1].need == "permission"
        assert front_end.calls[-1].body.startswith("Permission: ")
        [request] = front_end.waiting
        assert isinstance(request, PendingPermission)
        request.cancel()
        await turn
        assert attention.need is None  # looking: the turn's end is no news

        turn = asyncio.ensure_future(talk.run_turn(Prompt("ask")))
        await until(lambda: len(front_end.waiting) == 2)
        assert attention.needs == ["question"]
        assert front_end.calls[-1].need == "question"
        question = front_end.waiting[1]
        assert isinstance(question, PendingElicitation)
        question.decline()
        await turn
        assert attention.need is None


async def test_an_agent_that_dies_is_news(tmp_path: Path) -> None:
    front_end = Asked()
    async with talking(tmp_path, front_end) as talk:
        assert talk.client is not None and talk.client.process is not None
        talk.client.process.process.kill()
        await until(lambda: front_end.calls)
        [call] = front_end.calls
        assert call.need == "failed" and call.body.startswith("The agent stopped: ")
        assert talk.attention.needs == ["failed"]


@pytest.mark.parametrize(
    ("call", "notify", "told"),
    [
        (Call("done", "", looking=False), Notify(), True),
        (Call("done", "", looking=True, seconds=5), Notify(), False),
        (Call("done", "", looking=True, seconds=31), Notify(), True),  # a long turn
        (Call("done", "", looking=True, seconds=31), Notify(long_turn=0), False),
        (Call("permission", "", looking=True, seconds=99), Notify(), False),
        (Call("permission", "", looking=False), Notify(enabled=False), False),
        (Call("failed", "", looking=False), Notify(events=frozenset({"done"})), False),
    ],
)
def test_what_is_worth_telling(call: Call, notify: Notify, told: bool) -> None:
    assert worth_telling(call, notify) is told
