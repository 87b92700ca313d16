"""Real coding agents from npm (Claude Code, Codex, Gemini CLI), offline on a fake model.

Each test runs the real `acp-tui -p … --output-format jsonl` against a real agent, pinned and
installed by `tests/support/external_agents.py`, set up by `tests/support/real_agents.py` to
talk to one scripted `FakeModel` per module (`tests/support/fake_model.py`): a prompt such as
`DO:write PATH TEXT` makes the model call the agent's own write tool, so what a test checks is
what acp-tui did with what a real agent sent. Every message acp-tui sent is validated against
the ACP v1 schema, and no agent may reach for another host than the fake.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acp_tui.session.change import Change
from acp_tui.session.guard import unasked
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import Session
from acp_tui.ui.app import AcpApp
from acp_tui.ui.widgets.elicitation_panel import ElicitationPanel
from acp_tui.ui.widgets.message import AgentMessage
from tests.support import jsonl, real_agents
from tests.support.fake_model import HELLO, FakeModel
from tests.support.pilot import (
    send,
    wait_idle,
    wait_permission,
    wait_question,
    wait_started,
    wait_until,
)
from tests.support.real_agents import RealAgent
from tests.support.schema import validate_transcript
from tests.support.ui import message_texts

ACP_TUI = [sys.executable, "-m", "acp_tui"]
RUN_TIMEOUT_SECONDS = 90
"""One acp-tui run; a turn takes 1-5 s here, the rest is for a slow, loaded machine."""

# The session fixtures install the agents from npm on first use (a few minutes on a fresh
# machine, several hundred MB): the timeout covers that; RUN_TIMEOUT_SECONDS catches hangs.
pytestmark = pytest.mark.timeout(900)

_AGENTS: dict[str, tuple[str, Callable[[list[str]], RealAgent]]] = {
    "claude": ("claude_agent_acp", real_agents.claude),
    "codex": ("codex_acp", real_agents.codex),
    "gemini": ("gemini_cli", real_agents.gemini),
}


@pytest.fixture(scope="module")
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture(params=list(_AGENTS))
def agent(request: pytest.FixtureRequest) -> RealAgent:
    fixture, make = _AGENTS[request.param]
    return make(request.getfixturevalue(fixture))


@pytest.fixture
def claude(claude_agent_acp: list[str]) -> RealAgent:
    return real_agents.claude(claude_agent_acp)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@dataclass
class Run:
    status: int
    events: list[dict[str, Any]]
    err: str
    transcript: Path

    def messages(self, direction: str) -> list[dict[str, Any]]:
        """What acp-tui sent ("send") or received ("recv"), in order."""
        lines = self.transcript.read_text().splitlines()
        entries = [json.loads(line) for line in lines]
        return [e["msg"] for e in entries if e["dir"] == direction and isinstance(e["msg"], dict)]

    def agent_text(self) -> str:
        return "".join(
            e["append"]["text"] if "append" in e else _text(e["content"])
            for e in self.events
            if e["type"] == "message" and e["role"] == "agent"
        )

    def tool_calls(self) -> dict[str, dict[str, Any]]:
        """Each tool call as it was last reported, by id."""
        return jsonl.tool_calls(self.events)

    def permissions(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "permission"]

    def permission_answers(self) -> list[str]:
        """For each permission request answered: the kind of the option acp-tui chose (the
        agents' option ids differ: `reject`, `abort`, `cancel`), or the outcome if none."""
        offered = {
            json.dumps(m["id"]): {o["optionId"]: o["kind"] for o in m["params"]["options"]}
            for m in self.messages("recv")
            if m.get("method") == "session/request_permission"
        }
        answers = []
        for message in self.messages("send"):
            options = offered.get(json.dumps(message.get("id")))
            if "method" in message or options is None:
                continue  # ours, or the answer to another kind of request
            outcome = message["result"]["outcome"]
            answers.append(options.get(outcome.get("optionId"), outcome["outcome"]))
        return answers

    def explain(self) -> str:
        """For assertion messages: how the run ended and what the agent did."""
        calls = {i: (c["title"], c["status"]) for i, c in self.tool_calls().items()}
        return f"exit {self.status}; stderr: {self.err.strip()[-1500:]!r}; tool calls: {calls}"


def _text(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict))


async def headless(
    agent: RealAgent,
    model: FakeModel,
    tmp_path: Path,
    prompt: str,
    *,
    permission: str = "reject",
    cancel_when: Callable[[dict[str, Any]], bool] | None = None,
    options: tuple[str, ...] = (),
    configured: bool = False,
) -> Run:
    """`acp-tui -p PROMPT` on `agent` in `tmp_path/workspace`; with `cancel_when`, Ctrl+C
    (SIGINT) as soon as an event satisfies it; with `configured`, the agent is the config
    file's agent of its name (`--agent NAME`), not a command line."""
    transcript = tmp_path / "transcript.jsonl"
    argv = [
        *ACP_TUI,
        "--cwd",
        str(tmp_path / "workspace"),
        "--transcript",
        str(transcript),
        "--output-format",
        "jsonl",
        "--permission",
        permission,
        *agent.client_args,
        *options,
        "-p",
        prompt,
        *(["--agent", agent.name] if configured else ["--", *agent.argv]),
    ]
    blocked_before = len(model.blocked)
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=agent.environment(tmp_path / "home", model.url),
    )
    assert process.stdout is not None and process.stderr is not None
    events: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(RUN_TIMEOUT_SECONDS):
            stderr = asyncio.ensure_future(process.stderr.read())
            while line := await process.stdout.readline():
                events.append(json.loads(line))
                if cancel_when is not None and cancel_when(events[-1]):
                    process.send_signal(signal.SIGINT)
                    cancel_when = None
            err = (await stderr).decode()
            status = await process.wait()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(
            f"acp-tui did not finish within {RUN_TIMEOUT_SECONDS} s; last events: {events[-5:]}"
        ) from None
    blocked = model.blocked[blocked_before:]
    assert not blocked, f"the agent tried to reach {blocked} (refused by the fake model)"
    return Run(status, events, err, transcript)


def assert_sent_messages_valid(run: Run, version: int = 1) -> None:
    assert validate_transcript(run.transcript, version=version, sender="client") > 0


def assert_asked_once(run: Run) -> None:
    """The agent's own permission request was the only one: what it did after it (Gemini
    writes through `fs/write_text_file`) is covered, and the guard asked nothing more."""
    asked = [answer["toolCallId"] for answer in run.permissions()]
    assert len(asked) == 1 and not unasked(asked[0]), run.explain()


# -- headless, each agent ----------------------------------------------------------------------


async def test_hello(agent: RealAgent, model: FakeModel, tmp_path: Path, workspace: Path) -> None:
    run = await headless(agent, model, tmp_path, "hello")
    assert run.status == 0, run.explain()
    assert HELLO in run.agent_text()
    assert "end_turn" in jsonl.stop_reasons(run.events)
    assert_sent_messages_valid(run)


async def test_read_a_file(
    agent: RealAgent, model: FakeModel, tmp_path: Path, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("the notes say 5f0c2e\n")
    mark = model.mark()
    run = await headless(agent, model, tmp_path, f"DO:read {workspace / 'notes.txt'}")
    assert run.status == 0, run.explain()
    # The file's text came back to the model as the tool's result.
    results = model.tool_results_since(mark)
    assert any("the notes say 5f0c2e" in result for result in results), results
    assert [c["status"] for c in run.tool_calls().values()] == ["completed"], run.explain()
    assert_sent_messages_valid(run)


async def test_write_allowed(
    agent: RealAgent, model: FakeModel, tmp_path: Path, workspace: Path
) -> None:
    target = workspace / "new.txt"
    prompt = f"DO:write {target} written-by-acp-tui"
    run = await headless(agent, model, tmp_path, prompt, permission="allow")
    assert run.status == 0, run.explain()
    assert target.read_text() == "written-by-acp-tui\n", run.explain()
    assert [c["status"] for c in run.tool_calls().values()] == ["completed"], run.explain()
    assert_asked_once(run)
    assert_sent_messages_valid(run)


async def test_write_rejected(
    agent: RealAgent, model: FakeModel, tmp_path: Path, workspace: Path
) -> None:
    target = workspace / "new.txt"
    prompt = f"DO:write {target} written-by-acp-tui"
    run = await headless(agent, model, tmp_path, prompt, permission="reject")
    # Codex's only way to say no ("abort": "No, provide feedback") ends its turn `cancelled`.
    assert run.status == (130 if agent.name == "codex" else 0), run.explain()
    assert not target.exists(), run.explain()
    answers = run.permission_answers()
    assert answers, f"the agent asked no permission; {run.explain()}"
    assert all(kind.startswith("reject_") for kind in answers), answers
    # The refused call ended, and not as done: neither completed nor left running.
    for decision in run.permissions():
        call = run.tool_calls()[decision["toolCallId"]]
        assert call["status"] not in ("pending", "in_progress", "completed"), run.explain()
    assert_sent_messages_valid(run)


async def test_shell_command(
    agent: RealAgent, model: FakeModel, tmp_path: Path, workspace: Path
) -> None:
    target = workspace / "made-by-shell"
    run = await headless(agent, model, tmp_path, f"DO:bash touch {target}", permission="allow")
    assert run.status == 0, run.explain()
    assert target.is_file(), run.explain()
    assert [c["status"] for c in run.tool_calls().values()] == ["completed"], run.explain()
    assert_asked_once(run)
    assert_sent_messages_valid(run)


async def test_ctrl_c_cancels_a_streaming_answer(
    agent: RealAgent, model: FakeModel, tmp_path: Path, workspace: Path
) -> None:
    def streaming(event: dict[str, Any]) -> bool:
        return event["type"] == "message" and "slow chunk" in json.dumps(event)

    run = await headless(agent, model, tmp_path, "DO:slow", cancel_when=streaming)
    assert run.status == 130, run.explain()
    assert any(streaming(e) for e in run.events)
    assert "cancelled" in jsonl.stop_reasons(run.events)
    sent = run.messages("send")
    assert "session/cancel" in [m.get("method") for m in sent]
    prompt_ids = {m["id"] for m in sent if m.get("method") == "session/prompt"}
    answers = [m for m in run.messages("recv") if "method" not in m and m.get("id") in prompt_ids]
    assert [a.get("result", {}).get("stopReason") for a in answers] == ["cancelled"], answers
    assert_sent_messages_valid(run)


# -- Claude only -------------------------------------------------------------------------------

QUESTION = {
    "questions": [
        {
            "question": "Which database should I use?",
            "header": "Database",
            "multiSelect": False,
            "options": [
                {"label": "Postgres", "description": "relational"},
                {"label": "SQLite", "description": "a file"},
            ],
        }
    ]
}
ASK = f"DO:call AskUserQuestion {json.dumps(QUESTION)}"


async def test_claude_over_acp_v2_runs_a_shell_step(
    claude: RealAgent, model: FakeModel, tmp_path: Path, workspace: Path
) -> None:
    target = workspace / "made-over-v2"
    run = await headless(
        claude,
        model,
        tmp_path,
        f"DO:bash touch {target}",
        permission="allow",
        options=("--protocol-version", "2"),
    )
    assert run.status == 0, run.explain()
    assert target.is_file(), run.explain()
    [answer] = [m for m in run.messages("recv") if m.get("id") == 0 and "result" in m]
    assert answer["result"]["protocolVersion"] == 2
    assert [c["status"] for c in run.tool_calls().values()] == ["completed"], run.explain()
    assert_sent_messages_valid(run, version=2)


async def test_claude_asks_no_questions_headless(
    claude: RealAgent, model: FakeModel, tmp_path: Path, workspace: Path
) -> None:
    """Headless offers no elicitation, so Claude keeps AskUserQuestion from its model: a
    script's run is never stopped by a question nobody can answer."""
    mark = model.mark()
    run = await headless(claude, model, tmp_path, "hello")
    assert run.status == 0, run.explain()
    offered = [
        {tool.get("name") for tool in request.body.get("tools", [])}
        for request in model.since(mark)
        if isinstance(request.body, dict)
    ]
    assert any("Bash" in tools for tools in offered), offered  # the main loop's request
    assert not any("AskUserQuestion" in tools for tools in offered), offered
    [initialize] = [m for m in run.messages("send") if m.get("method") == "initialize"]
    assert "elicitation" not in initialize["params"]["clientCapabilities"]
    assert_sent_messages_valid(run)


def route_claude(
    claude: RealAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    """A config file naming Claude `claude`, its provider `main` routed as `route` (TOML)."""
    config = tmp_path / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f"[agents.claude]\ncommand = {json.dumps(claude.argv)}\n"
        f"[agents.claude.providers.main]\n{route}"
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


async def test_claudes_model_requests_go_where_the_config_routes_them(
    claude: RealAgent,
    model: FakeModel,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`providers/set`, which Claude offers: `[agents.claude.providers.main]` points it at
    another gateway (a second fake model) before the session starts, and the gateway its
    environment names gets none of the turn."""
    with FakeModel() as gateway:
        route_claude(
            claude,
            tmp_path,
            monkeypatch,
            f'api_type = "anthropic"\nbase_url = "{gateway.url}"\n'
            'headers = { "x-gateway-key" = "acp-tui" }\n',
        )
        mark = model.mark()
        run = await headless(claude, model, tmp_path, "hello", configured=True)
        routed = [request.path.partition("?")[0] for request in gateway.since(0)]
    assert run.status == 0, run.explain()
    assert HELLO in run.agent_text()
    assert "/v1/messages" in routed, routed
    assert "/v1/messages" not in [r.path.partition("?")[0] for r in model.since(mark)]
    [route] = [m for m in run.messages("send") if m.get("method") == "providers/set"]
    assert route["params"] == {
        "providerId": "main",
        "apiType": "anthropic",
        "baseUrl": gateway.url,
        "headers": {"x-gateway-key": "acp-tui"},
    }
    assert_sent_messages_valid(run)


async def test_a_route_claude_refuses_is_a_warning_and_the_turn_runs(
    claude: RealAgent,
    model: FakeModel,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    route_claude(
        claude,
        tmp_path,
        monkeypatch,
        'api_type = "_carrier_pigeon"\nbase_url = "https://coop.example"\n',
    )
    run = await headless(claude, model, tmp_path, "hello", configured=True)
    assert run.status == 0, run.explain()
    assert HELLO in run.agent_text()
    assert "acp-tui: provider 'main' not set: Invalid params: Unsupported apiType" in run.err
    assert_sent_messages_valid(run)


async def test_claudes_question_is_declined_headless(
    claude: RealAgent, model: FakeModel, tmp_path: Path, workspace: Path
) -> None:
    run = await headless(claude, model, tmp_path, ASK, options=("--elicitation", "decline"))
    assert run.status == 0, run.explain()
    [event] = [e for e in run.events if e["type"] == "elicitation"]
    assert (event["mode"], event["action"]) == ("form", "decline")
    assert event["message"] == "Which database should I use?"
    assert event["fields"] == ["question_0", "question_0_custom"]
    assert_sent_messages_valid(run)


# -- the TUI -----------------------------------------------------------------------------------


def agent_app(
    agent: RealAgent,
    model: FakeModel,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AcpApp:
    """The TUI on `agent` in `workspace`, with the environment the agent needs and no more."""
    env = agent.environment(tmp_path / "home", model.url)
    # The agent gets ours with `options.env` laid over it: drop what the environment leaves out.
    for name in set(os.environ) - set(env):
        monkeypatch.delenv(name)
    options = ClientOptions(cwd=workspace, env=env, transcript=tmp_path / "transcript.jsonl")
    return AcpApp(
        agent.argv,
        options,
        history_dir=tmp_path / "state" / "history",
        config_dir=tmp_path / "state" / "config",
    )


async def test_tui_asks_once_for_each_write_and_command(
    agent: RealAgent,
    model: FakeModel,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The normal flow, asking the user: one question for the agent's write, one for its
    command, each allowed once; the guard adds none (Gemini's write, after its request, comes
    through `fs/write_text_file`)."""
    app = agent_app(agent, model, tmp_path, workspace, monkeypatch)
    asked: list[str | None] = []

    def listen(_: Session, change: Change) -> None:
        if change.kind == "permission":  # a request answered
            asked.append(change.delta.tool_call_id)

    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot, timeout=60)
        assert app.session is not None
        app.session.listeners.append(listen)
        for prompt in (f"DO:write {workspace / 'new.txt'} hi", f"DO:bash touch {workspace / 'x'}"):
            await send(app, pilot, prompt)
            await wait_permission(app, pilot, timeout=60)
            await pilot.press("a")
            await wait_idle(app, pilot, timeout=60)
    assert (workspace / "new.txt").read_text() == "hi\n" and (workspace / "x").is_file()
    assert len(asked) == 2 and not any(unasked(call_id) for call_id in asked), asked


async def test_tui_answers_claudes_question(
    claude: RealAgent,
    model: FakeModel,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """AskUserQuestion, which Claude offers only to clients that advertise form elicitation:
    the question shows as a form, the user picks an option, and the tool gets the answer."""
    app = agent_app(claude, model, tmp_path, workspace, monkeypatch)
    mark = model.mark()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot, timeout=60)
        await send(app, pilot, ASK)
        await wait_question(app, pilot, timeout=60)
        panel = app.chat.query_one(ElicitationPanel)
        assert panel.border_title == "? Claude Agent 0.100.0 asks"
        await pilot.press("down", "enter", "ctrl+s")  # SQLite
        await wait_idle(app, pilot, timeout=60)
    results = "\n".join(model.tool_results_since(mark))
    assert '"Which database should I use?"="SQLite"' in results, results
    assert_sent_messages_valid(Run(0, [], "", tmp_path / "transcript.jsonl"))


async def test_tui_forks_a_claude_session(
    claude: RealAgent,
    model: FakeModel,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`session/fork`, which Claude offers: the fork shows the history, and Claude carries the
    conversation over: the model's next request holds the turn before the fork."""
    app = agent_app(claude, model, tmp_path, workspace, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot, timeout=60)
        await send(app, pilot, "the tortoise wins")
        await wait_idle(app, pilot, timeout=60)
        source = app.session
        assert app.can_fork
        app.action_fork()
        await wait_until(pilot, lambda: app.session is not source, timeout=60)
        assert "the tortoise wins" in message_texts(app)
        mark = model.mark()
        await send(app, pilot, "and the hare?")
        await wait_idle(app, pilot, timeout=60)
        asked = [json.dumps(request.body) for request in model.since(mark)]
        assert any("the tortoise wins" in body and "and the hare?" in body for body in asked)
    assert_sent_messages_valid(Run(0, [], "", tmp_path / "transcript.jsonl"))


async def test_claude_forks_a_session_of_an_earlier_run_headless(
    claude: RealAgent, model: FakeModel, tmp_path: Path, workspace: Path
) -> None:
    """`--resume --fork`: the session, from an earlier process, is forked without being
    opened, and Claude carries it over: the model's request holds the turn before."""
    first = await headless(claude, model, tmp_path, "the tortoise wins")
    assert first.status == 0, first.explain()
    mark = model.mark()
    forked = await headless(
        claude, model, tmp_path, "and the hare?", options=("--resume", "--fork")
    )
    assert forked.status == 0, forked.explain()
    sent = [m.get("method") for m in forked.messages("send")]
    assert "session/fork" in sent and "session/load" not in sent and "session/resume" not in sent
    asked = [json.dumps(request.body) for request in model.since(mark)]
    assert any("the tortoise wins" in body and "and the hare?" in body for body in asked)
    assert_sent_messages_valid(forked)


async def test_tui_shows_claudes_answer(
    claude: RealAgent,
    model: FakeModel,
    tmp_path: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = agent_app(claude, model, tmp_path, workspace, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot, timeout=60)
        await send(app, pilot, "hello")
        await wait_idle(app, pilot, timeout=60)
        assert any(HELLO in text for text in message_texts(app))
        shown = [
            "".join(widget._view.render_line(y).text for y in range(widget._view._line_count()))
            for widget in app.chat.query(AgentMessage)
        ]
        assert any(HELLO in text for text in shown), shown
    assert_sent_messages_valid(Run(0, [], "", tmp_path / "transcript.jsonl"))
