"""Elicitation: the form model and its checks (pure), and `elicitation/create` end to end with
the demo agent over real pipes: advertised, answered, bound to the turn, validated against the
schema, headless policy and jsonl events."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from acp_tui.demo.questions import ASK_FORM
from acp_tui.protocol import methods as m
from acp_tui.protocol.content import text_block
from acp_tui.session.client import AgentClient
from acp_tui.session.elicitation import (
    Form,
    PendingElicitation,
    check_answer,
    check_answers,
    describe_answer,
    initial_value,
    parse_form,
    url_host,
    url_warnings,
)
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission
from acp_tui.session.state import Notice
from tests.demo.test_client import acp_tui
from tests.support.schema import validate_transcript

DEMO = [sys.executable, "-m", "acp_tui.demo", "--speed", "0"]
VERSIONS = pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])

# -- the form model ---------------------------------------------------------------------------


def test_parse_form_reads_every_kind_of_field_with_defaults_and_requirements() -> None:
    form = parse_form(ASK_FORM)
    kinds = {f.name: f.kind for f in form.fields}
    assert kinds == {
        "name": "text",
        "language": "choice",
        "extras": "choices",
        "line_length": "integer",
        "strict": "boolean",
        "owner": "text",
        "due": "text",
    }
    fields = {f.name: f for f in form.fields}
    assert fields["name"].required and fields["language"].required
    assert not fields["owner"].required
    assert [c.title for c in fields["language"].choices] == ["Python", "Rust", "TypeScript"]
    assert fields["language"].choices[0].description == "typed, with ruff"
    assert [c.value for c in fields["extras"].choices] == ["tests", "ci", "docs"]
    assert initial_value(fields["extras"]) == ["tests"]
    assert initial_value(fields["line_length"]) == "100"
    assert initial_value(fields["strict"]) is True
    assert fields["due"].hint() == "date, YYYY-MM-DD"
    assert fields["line_length"].hint() == "60 to 160"
    assert form.title == "Set up a new project"


def test_parse_form_is_lenient_with_what_it_does_not_know() -> None:
    form = parse_form(
        {
            "properties": {
                "color": {"type": "_rgb", "title": "Colour"},
                "bad": "not a schema",
                "pick": {"type": "string", "enum": ["a", "b"], "default": "zzz"},
            },
            "required": "not a list",
        }
    )
    color, bad, pick = form.fields
    assert (color.kind, color.asked_type) == ("text", "_rgb")
    assert "typed as text" in color.hint()
    assert (bad.kind, bad.title) == ("text", "bad")
    assert pick.kind == "choice" and pick.default is None  # a default outside the choices
    assert parse_form(None) == Form(())
    assert parse_form({"properties": []}) == Form(())


def test_check_answers_builds_the_content_or_says_what_is_wrong() -> None:
    form = parse_form(ASK_FORM)
    entered: dict[str, Any] = {f.name: initial_value(f) for f in form.fields}
    content, problems = check_answers(form, entered)
    assert problems == {"name": "required"}
    entered |= {"name": "my-app", "owner": "me@example.com", "due": "2027-01-31"}
    content, problems = check_answers(form, entered)
    assert problems == {}
    assert content == {
        "name": "my-app",
        "language": "python",
        "extras": ["tests"],
        "line_length": 100,
        "strict": True,
        "owner": "me@example.com",
        "due": "2027-01-31",
    }
    entered |= {"name": "My App", "line_length": "7", "owner": "nobody", "due": "31/01/2027"}
    _, problems = check_answers(form, entered)
    assert problems == {
        "name": "must match ^[a-z0-9-]+$",
        "line_length": "at least 60",
        "owner": "an email address, like name@example.com",
        "due": "a date, YYYY-MM-DD",
    }


@pytest.mark.parametrize(
    ("spec", "entered", "expected"),
    [
        ({"type": "number"}, " 2.5 ", 2.5),
        ({"type": "integer"}, "12", 12),
        ({"type": "string"}, "   ", None),
        ({"type": "string", "format": "uri"}, "https://example.com/x", "https://example.com/x"),
        ({"type": "string", "format": "date-time"}, "2027-01-31T10:00:00Z", "2027-01-31T10:00:00Z"),
        ({"type": "boolean"}, False, False),
        ({"type": "array", "items": {"enum": ["a", "b", "c"]}}, ["c", "a"], ["a", "c"]),
        ({"type": "array", "items": {"enum": ["a", "b"]}}, [], None),
    ],
)
def test_check_answer_converts_valid_entries(
    spec: dict[str, Any], entered: Any, expected: Any
) -> None:
    [form_field] = parse_form({"properties": {"x": spec}}).fields
    assert check_answer(form_field, entered) == expected


@pytest.mark.parametrize(
    ("spec", "entered", "problem"),
    [
        ({"type": "number"}, "two", "a number"),
        ({"type": "number"}, "nan", "a finite number"),
        ({"type": "integer"}, "2.5", "a whole number"),
        ({"type": "integer", "maximum": 3}, "4", "at most 3"),
        ({"type": "string", "minLength": 3}, "ab", "at least 3 characters"),
        ({"type": "string", "format": "uri"}, "not a url", "a URL, like https://example.com"),
        ({"type": "string", "enum": ["a"]}, "b", "not one of the choices"),
        ({"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 2}, ["a"], "pick at least 2"),
        (
            {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1},
            ["a", "b"],
            "pick at most 1",
        ),
    ],
)
def test_check_answer_rejects_invalid_entries(
    spec: dict[str, Any], entered: Any, problem: str
) -> None:
    [form_field] = parse_form({"properties": {"x": spec}}).fields
    with pytest.raises(ValueError, match=f"^{problem}$"):
        check_answer(form_field, entered)


def test_url_warnings_flag_what_deserves_a_second_look() -> None:
    assert url_host("https://auth.example.com/device?code=1") == "auth.example.com"
    assert url_warnings("https://auth.example.com/device") == []
    assert url_warnings("http://localhost:8080/cb") == []
    assert url_warnings("http://example.com/") == ["it is not encrypted (http)"]
    assert "its host is an internationalized name" in url_warnings("https://xn--pple-43d.com/")[0]
    assert any(
        "user name before the host" in w for w in url_warnings("https://google.com@evil.io/")
    )
    assert any("bare IP address" in w for w in url_warnings("https://10.0.0.1/login"))
    assert url_warnings("javascript:alert(1)")[0].startswith("it is not a web address")


async def test_an_answer_with_nothing_picked_says_so() -> None:
    """Claude's multi-select question with its "Other" text: nothing ticked, nothing typed is
    not "You answered"; a multi-select left empty beside another answer reads "none"."""
    caches = {"type": "array", "title": "Caches", "items": {"enum": ["redis", "memcached"]}}
    schema = {"properties": {"q": caches, "other": {"type": "string", "title": "Other"}}}
    request = m.ElicitationRequest("form", "Which caches?", "s", requested_schema=schema)
    future = asyncio.get_running_loop().create_future()
    pending = PendingElicitation(request, future, parse_form(schema))

    def described(content: dict[str, Any]) -> tuple[str, str | None]:
        return describe_answer(pending, m.ElicitationResponse("accept", content))

    assert described({}) == ("You left it unanswered: Which caches?", None)
    assert described({"other": "a dict"}) == (
        "You answered: Which caches?",
        "Caches: none\nOther: a dict",
    )
    assert described({"q": ["redis"]}) == ("You answered: Which caches?", "Caches: redis")


# -- with the demo agent, over real pipes ------------------------------------------------------


def refuse(pending: PendingPermission) -> Any:
    async def answer() -> None:
        pending.cancel()

    return answer()


async def run_client(
    tmp_path: Path,
    version: int,
    prompts: list[str],
    decide: Any,
) -> tuple[AgentClient, list[str], Path]:
    transcript = tmp_path / f"t-{time.monotonic_ns()}.jsonl"
    options = ClientOptions(cwd=tmp_path, protocol_version=version, transcript=transcript)
    client = AgentClient(DEMO, options, decide_permission=refuse, decide_elicitation=decide)
    stops: list[str] = []
    try:
        await client.start()
        session = await client.new_session()
        for prompt in prompts:
            stops.append(str(await asyncio.wait_for(session.prompt([text_block(prompt)]), 30)))
        client.last_session = session  # type: ignore[attr-defined]
    finally:
        await client.close()
    return client, stops, transcript


def agent_text(client: AgentClient) -> str:
    state = client.last_session.state  # type: ignore[attr-defined]
    return "\n".join(m.text for m in state.messages.values() if m.role == "agent")


def notices(client: AgentClient) -> list[tuple[str, str, str | None]]:
    state = client.last_session.state  # type: ignore[attr-defined]
    return [(n.severity, n.title, n.detail) for n in state.timeline if isinstance(n, Notice)]


def sent(transcript: Path, method: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    return [x["msg"] for x in lines if x["dir"] == "send" and x["msg"].get("method") == method]


@VERSIONS
async def test_an_accepted_form_reaches_the_agent(tmp_path: Path, version: int) -> None:
    asked: list[PendingElicitation] = []

    async def fill_in(pending: PendingElicitation) -> None:
        asked.append(pending)
        entered = {f.name: initial_value(f) for f in pending.form.fields} | {"name": "my-app"}
        content, problems = check_answers(pending.form, entered)
        assert problems == {}
        pending.accept(content)

    client, stops, transcript = await run_client(tmp_path, version, ["/ask"], fill_in)
    assert stops == ["end_turn"]
    [pending] = asked
    assert pending.request.message == "How should I set up the new project?"
    assert [f.name for f in pending.form.fields][:2] == ["name", "language"]
    text = agent_text(client)
    assert "| Project name | `'my-app'` |" in text
    assert "| Extras | `['tests']` |" in text
    [initialize] = sent(transcript, "initialize")
    capabilities = initialize["params"]["clientCapabilities" if version == 1 else "capabilities"]
    assert capabilities["elicitation"] == {"form": {}, "url": {}}
    [(_, title, detail)] = [n for n in notices(client) if n[0] == "answer"]
    assert title == "You answered: How should I set up the new project?"
    assert detail is not None and "Project name: my-app" in detail and "Language: Python" in detail
    assert validate_transcript(transcript, version=version, sender="client") > 0
    assert validate_transcript(transcript, version=version, sender="agent") > 0


async def test_a_declined_form_is_said_so(tmp_path: Path) -> None:
    async def decline(pending: PendingElicitation) -> None:
        pending.decline()

    client, stops, _ = await run_client(tmp_path, 1, ["/ask"], decline)
    assert stops == ["end_turn"]
    assert "You declined" in agent_text(client)
    assert ("answer", "You declined: How should I set up the new project?", None) in notices(client)


@VERSIONS
async def test_cancelling_the_turn_answers_the_open_question_cancel(
    tmp_path: Path, version: int
) -> None:
    transcript = tmp_path / "t.jsonl"
    options = ClientOptions(cwd=tmp_path, protocol_version=version, transcript=transcript)
    opened = asyncio.Event()
    asked: list[PendingElicitation] = []

    async def wait(pending: PendingElicitation) -> None:
        asked.append(pending)
        opened.set()

    client = AgentClient(DEMO, options, decide_permission=refuse, decide_elicitation=wait)
    try:
        await client.start()
        session = await client.new_session()
        turn = asyncio.ensure_future(session.prompt([text_block("/ask")]))
        await asyncio.wait_for(opened.wait(), 30)
        assert session.pending_elicitations == asked
        await session.cancel()
        assert await asyncio.wait_for(turn, 30) == "cancelled"
        assert asked[0].done and session.pending_elicitations == []
    finally:
        await client.close()
    answers = [
        json.loads(line)["msg"]
        for line in transcript.read_text().splitlines()
        if '"action"' in line and '"send"' in line
    ]
    assert [a["result"] for a in answers] == [{"action": "cancel"}]
    assert validate_transcript(transcript, version=version, sender="client") > 0


async def test_a_url_is_opened_then_completed(tmp_path: Path) -> None:
    async def consent(pending: PendingElicitation) -> None:
        assert pending.mode == "url"
        assert url_host(pending.request.url or "") == "auth.example.com"
        pending.accept()

    client, stops, transcript = await run_client(tmp_path, 1, ["/signin"], consent)
    assert stops == ["end_turn"]
    assert "Signed in" in agent_text(client)
    shown = [(severity, title) for severity, title, _ in notices(client)]
    about = "Sign in to the (pretend) example service to connect your account."
    assert ("answer", f"You opened auth.example.com: {about}") in shown
    assert ("info", f"Done: {about}") in shown
    assert validate_transcript(transcript, version=1, sender="client") > 0


async def test_an_unadvertised_mode_is_refused(tmp_path: Path) -> None:
    """Without a front end to ask, acp-tui advertises no elicitation, and the agent says so."""
    transcript = tmp_path / "t.jsonl"
    options = ClientOptions(cwd=tmp_path, transcript=transcript)
    client = AgentClient(DEMO, options, decide_permission=refuse)
    try:
        await client.start()
        session = await client.new_session()
        assert await session.prompt([text_block("/ask")]) == "end_turn"
        text = "\n".join(m.text for m in session.state.messages.values() if m.role == "agent")
    finally:
        await client.close()
    assert "does not advertise **form** elicitation" in text
    [initialize] = sent(transcript, "initialize")
    assert "elicitation" not in initialize["params"]["clientCapabilities"]


@VERSIONS
async def test_headless_offers_no_questions_by_default(tmp_path: Path, version: int) -> None:
    """Nobody is there to answer: elicitation is not advertised, and the agent says it
    cannot ask (Claude Code drops its AskUserQuestion tool: `test_real_agents`)."""
    run = await acp_tui(tmp_path, version, "-p", "/ask")
    assert run.status == 0, run.err
    assert "does not advertise **form** elicitation" in run.out
    assert "the agent asked" not in run.err
    run.assert_agent_valid()


@VERSIONS
async def test_headless_declines_when_told_and_reports_it(tmp_path: Path, version: int) -> None:
    run = await acp_tui(
        tmp_path, version, "-p", "/ask", "--output-format", "jsonl", "--elicitation", "decline"
    )
    assert run.status == 0, run.err
    [event] = [e for e in run.events() if e["type"] == "elicitation"]
    assert event["action"] == "decline"
    assert event["mode"] == "form"
    assert event["message"] == "How should I set up the new project?"
    assert event["fields"][:2] == ["name", "language"]
    assert any("You declined" in json.dumps(e) for e in run.events() if e["type"] == "message")
    run.assert_agent_valid()


async def test_headless_elicitation_cancel_policy_in_text_mode(tmp_path: Path) -> None:
    run = await acp_tui(tmp_path, 1, "-p", "/signin", "--elicitation", "cancel")
    assert run.status == 0, run.err
    assert "the agent asked 'Sign in to the (pretend) example service" in run.err
    assert "cancelled (--elicitation cancel)" in run.err
    assert "Not signed in" in run.out
