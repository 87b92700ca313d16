"""The permission dialog as a person meets it: keys typed as it opens are not answers, a
rejection can say why (the reason becomes the next prompt), and a request with no card of its
own still shows what it is about."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual import events

from acp_tui.protocol import methods as m
from acp_tui.protocol.content import ToolCallContent, text_block
from acp_tui.protocol.updates import ToolCallUpdate
from acp_tui.session.session import PendingPermission
from acp_tui.session.state import Message
from acp_tui.ui import key_guard
from acp_tui.ui.app import AcpApp
from acp_tui.ui.key_guard import KeyGuard
from acp_tui.ui.widgets.permission_panel import PermissionPanel, asks_for_reason, option_keys
from acp_tui.ui.widgets.prompt_input import PromptInput
from acp_tui.ui.widgets.transcript import Transcript
from tests.support import TEST_AGENTS
from tests.support.pilot import send, wait_idle, wait_permission, wait_until
from tests.support.ui import message_texts, started_app

REJECTING_AGENT = [
    sys.executable,
    str(TEST_AGENTS / "rejecting_agent.py"),
]
REAL_SHAPES = [sys.executable, str(TEST_AGENTS / "real_shapes.py")]
OPTIONS = [
    m.PermissionOption("yes", "Allow once", "allow_once"),
    m.PermissionOption("no", "Reject", "reject_once"),
]


def panel_of(app: AcpApp) -> PermissionPanel:
    return app.chat.query_one(PermissionPanel)


def prompts(app: AcpApp) -> list[str]:
    """What the user sent, in order."""
    assert app.session is not None
    timeline = app.session.state.timeline
    return [i.text for i in timeline if isinstance(i, Message) and i.role == "user"]


def answer_of(pending: PendingPermission | None) -> str | None:
    """The option a request was answered with; None while it waits (or if cancelled)."""
    assert pending is not None
    if not pending.done:
        return None
    outcome = pending.future.result().outcome
    return outcome.option_id if isinstance(outcome, m.SelectedOutcome) else None


def detail_text(panel: PermissionPanel) -> str:
    console = Console(width=100, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(panel._detail())
    return console.export_text()


async def wait_open(app: AcpApp, pilot: Any) -> None:
    """Until a request is shown, however new (its guard may still be on)."""
    await wait_until(pilot, lambda: app.chat.query(PermissionPanel))  # mounted when first asked
    await wait_until(pilot, lambda: panel_of(app).current is not None)


# -- the key guard ----------------------------------------------------------------------------


def key(character: str) -> events.Key:
    return events.Key(character, character)


def test_the_guard_swallows_answer_keys_for_its_time_and_longer_while_typing() -> None:
    now = [100.0]
    guard = KeyGuard(0.4, clock=lambda: now[0])
    assert not guard.intercept(key("a"))  # not armed: the key answers
    guard.arm()
    assert guard.intercept(key("a")) and guard.intercept(events.Key("enter", None))
    assert not guard.intercept(events.Key("escape", None))  # never an answer: it cancels
    now[0] += 0.3
    assert guard.intercept(key("r"))  # still typing: the guard holds on
    now[0] += 0.3
    assert guard.armed
    now[0] += 0.2
    assert not guard.armed and not guard.intercept(key("a"))


def test_the_guard_time_is_a_constant_tests_may_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(key_guard, "KEY_GUARD_SECONDS", 3.0)
    assert KeyGuard().duration == 3.0
    assert KeyGuard(0.1).duration == 0.1


async def test_a_key_typed_as_the_dialog_opens_does_not_answer_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The press below comes within the guard however slow the machine: the guard holds until
    # the test ends it, standing in for the user's pause.
    monkeypatch.setattr(key_guard, "KEY_GUARD_SECONDS", 3600.0)
    async with started_app(tmp_path) as (app, pilot):
        await send(app, pilot, "/edit app.py")
        await wait_open(app, pilot)
        panel = panel_of(app)
        pending = panel.current
        await pilot.press("a", "enter")
        await pilot.pause()
        assert answer_of(pending) is None and panel.has_class("-open")
        # The letter was meant for the prompt, and is there.
        assert app.chat.query_one(PromptInput).text == "a"
        panel.guard.disarm()
        await pilot.press("a")
        await wait_idle(app, pilot)
        assert answer_of(pending) == "allow_once"
        assert "Edited by the ACP demo agent" in (tmp_path / "workspace" / "app.py").read_text()


# -- reject with a reason ---------------------------------------------------------------------


def test_which_options_ask_for_a_reason() -> None:
    assert asks_for_reason(m.PermissionOption("r", "Reject", "reject_once"))
    assert asks_for_reason(m.PermissionOption("R", "Never", "reject_always"))
    assert asks_for_reason(m.PermissionOption("abort", "No, provide feedback", ""))
    assert asks_for_reason(m.PermissionOption("x", "No, tell Codex what to do differently", ""))
    assert not asks_for_reason(m.PermissionOption("a", "Yes", "allow_once"))
    assert not asks_for_reason(m.PermissionOption("a", "Yes, and tell me later", "allow_always"))
    assert not asks_for_reason(m.PermissionOption("skip", "Skip this step", ""))


async def test_a_rejection_with_a_reason_sends_it_first_when_the_turn_ends(tmp_path: Path) -> None:
    # The Codex way: ask before an edit, end the turn `cancelled` at a rejection.
    async with started_app(tmp_path, argv=REJECTING_AGENT) as (app, pilot):
        await send(app, pilot, "edit hello.txt")
        await wait_open(app, pilot)
        await send(app, pilot, "and then this")  # typed during the turn: queued
        assert [queued.text for queued in app.chat.queue] == ["and then this"]
        panel = panel_of(app)
        panel.focus()  # the user goes back to the dialog: it is guarded afresh
        await wait_until(pilot, lambda: panel.has_focus)
        await wait_permission(app, pilot)
        pending = panel.current
        await pilot.press("r")
        await pilot.pause()
        assert answer_of(pending) == "abort"  # answered at once, before any reason
        reason = panel.query_one(".permission--reason")
        assert panel.asking_reason and reason.has_focus and panel.has_class("-open")
        await wait_until(pilot, lambda: app.session is not None and not app.session.busy)
        assert prompts(app) == ["edit hello.txt"]  # the queue waits for the reason
        await pilot.press(*"use pathlib instead", "enter")
        await wait_idle(app, pilot)
        assert prompts(app) == ["edit hello.txt", "use pathlib instead", "and then this"]
        assert not panel.has_class("-open")
        assert app.chat.query_one(PromptInput).has_focus


async def test_an_agents_feedback_option_asks_for_the_reason_too(tmp_path: Path) -> None:
    async with started_app(tmp_path, argv=REJECTING_AGENT) as (app, pilot):
        await send(app, pilot, "edit hello.txt")
        await wait_permission(app, pilot)
        panel = panel_of(app)
        pending = panel.current
        await pilot.press("left", "enter")  # the last option: "No, provide feedback"
        await pilot.pause()
        assert answer_of(pending) == "abort" and panel.asking_reason
        await pilot.press(*"not that file", "enter")
        await wait_idle(app, pilot)
        assert prompts(app) == ["edit hello.txt", "not that file"]


async def test_escape_skips_the_reason_and_does_not_cancel_the_turn(tmp_path: Path) -> None:
    async with started_app(tmp_path) as (app, pilot):
        before = (tmp_path / "workspace" / "app.py").read_text()
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        assert panel_of(app).asking_reason
        await pilot.press("escape")
        await wait_idle(app, pilot)
        assert app.session is not None and app.session.state.stop_reason == "end_turn"
        assert prompts(app) == ["/edit app.py"]
        assert not panel_of(app).has_class("-open")
        assert app.chat.query_one(PromptInput).has_focus
        assert (tmp_path / "workspace" / "app.py").read_text() == before


async def test_a_reason_given_while_the_turn_runs_on_waits_for_its_end(tmp_path: Path) -> None:
    async with started_app(tmp_path) as (app, pilot):
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        await pilot.press("r", *"keep it as it is", "enter")
        await wait_idle(app, pilot)
        assert prompts(app) == ["/edit app.py", "keep it as it is"]


async def test_allowing_asks_for_no_reason(tmp_path: Path) -> None:
    async with started_app(tmp_path) as (app, pilot):
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        await pilot.press("a")
        await pilot.pause()
        assert not panel_of(app).asking_reason
        await wait_idle(app, pilot)
        assert app.chat.query_one(PromptInput).has_focus


# -- what a request is about ------------------------------------------------------------------


def bare_request(session_id: str, tool_call: ToolCallUpdate | None, **fields: Any) -> Any:
    return m.PermissionRequest(session_id, OPTIONS, tool_call=tool_call, **fields)


def pending_of(app: AcpApp, request: m.PermissionRequest) -> PendingPermission:
    """`request` as the session takes it from the agent: waiting, its tool call merged."""
    assert app.session is not None
    return app.session.permission_asked(request)


async def ask(app: AcpApp, pilot: Any, request: m.PermissionRequest) -> PendingPermission:
    """Show `request` as if the agent sent it (not to the policy: to the user)."""
    pending = pending_of(app, request)
    app.chat.ask_permission(pending)
    await wait_permission(app, pilot)
    return pending


async def test_the_dialog_is_mounted_when_first_asked_and_shows_what_came_meanwhile(
    tmp_path: Path,
) -> None:
    """Not on the first screen (issue 14): the first request mounts it; one more that comes
    before it is mounted waits behind the first, and the first has the keys."""
    async with started_app(tmp_path) as (app, pilot):
        assert app.session is not None
        assert app.chat.query_one_optional(PermissionPanel) is None
        first = pending_of(app, bare_request(app.session.id, None, title="First"))
        second = pending_of(app, bare_request(app.session.id, None, title="Second"))
        app.chat.ask_permission(first)
        app.chat.ask_permission(second)
        await wait_permission(app, pilot)
        panel = panel_of(app)
        assert panel.current is first and panel.border_title.endswith("1 of 2")
        assert "First" in str(panel.query_one(".permission--title").render())
        assert panel.has_focus
        await pilot.press("a")
        await wait_permission(app, pilot)
        assert panel.current is second and answer_of(first) == "yes"
        # Where it was composed before: below the transcript, above the queued prompts.
        order = [child.id for child in app.chat.query_one("#conversation").children]
        assert order.index("paused") < order.index("permission") < order.index("queue")


async def test_a_request_carrying_its_tool_call_shows_its_fields(tmp_path: Path) -> None:
    """The request is the only copy of the call (no update came before it): the session
    takes it in as the request comes, and the dialog shows it from there."""
    async with started_app(tmp_path) as (app, pilot):
        assert app.session is not None
        inline = ToolCallUpdate(
            "call-elsewhere",
            title="Delete `build/`",
            kind="delete",
            content=[ToolCallContent("content", content=text_block("12 files, 3 folders"))],
            raw_input={"path": "build/", "recursive": True},
        )
        await ask(app, pilot, bare_request(app.session.id, inline))
        assert app.session.state.tool_calls["call-elsewhere"].title == "Delete `build/`"
        panel = panel_of(app)
        title = str(panel.query_one(".permission--title").render())
        assert "delete" in title and "Delete build/" in title
        assert "The agent asks" not in title
        detail = detail_text(panel)
        assert "12 files, 3 folders" in detail
        assert '"recursive": true' in detail and '"path": "build/"' in detail
        assert "rule for this workspace" in panel.border_subtitle  # its kind is known


async def test_the_border_names_the_keys_of_the_options_offered_only(tmp_path: Path) -> None:
    """Claude Code offers no "always reject": the border does not offer R either."""
    async with started_app(tmp_path) as (app, pilot):
        assert app.session is not None
        options = [
            m.PermissionOption("always", "Yes, always", "allow_always"),
            m.PermissionOption("yes", "Yes", "allow_once"),
            m.PermissionOption("no", "No", "reject_once"),
        ]
        call = ToolCallUpdate("c", title="Edit app.py", kind="edit")
        await ask(app, pilot, m.PermissionRequest(app.session.id, options, tool_call=call))
        assert panel_of(app).border_subtitle == (
            "a allow · A always · r reject · ←→ enter · w/W rule for this workspace"
        )
        await ask(app, pilot, bare_request(app.session.id, None))  # no kind: no rule
        await pilot.press("a")
        await wait_until(
            pilot, lambda: panel_of(app).border_subtitle == "a allow · r reject · ←→ enter"
        )


async def test_a_request_with_no_tool_call_says_so_plainly(tmp_path: Path) -> None:
    async with started_app(tmp_path) as (app, pilot):
        assert app.session is not None
        await ask(app, pilot, bare_request(app.session.id, None))
        panel = panel_of(app)
        assert "permission" in str(panel.query_one(".permission--title").render())
        assert "said nothing more" in detail_text(panel)


async def test_an_inline_tool_call_shows_its_text_and_input(tmp_path: Path) -> None:
    async with started_app(tmp_path, argv=[*REJECTING_AGENT, "--v2"], protocol_version=2) as (
        app,
        pilot,
    ):
        await send(app, pilot, "bare")
        await wait_permission(app, pilot)
        panel = panel_of(app)
        assert "Delete build/?" in str(panel.query_one(".permission--title").render())
        detail = detail_text(panel)
        assert "12 files" in detail and '"recursive": true' in detail


async def test_a_dialog_opening_under_a_short_transcript_keeps_its_end_in_view(
    tmp_path: Path,
) -> None:
    # The conversation fits the view until the dialog takes the bottom of the screen: the
    # view then follows its end (the tool call asked about), not stay at its top.
    async with started_app(tmp_path, size=(110, 29)) as (app, pilot):
        transcript = app.chat.query_one(Transcript)
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        await wait_until(pilot, lambda: transcript.max_scroll_y > 0)  # it no longer fits
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y)
        assert transcript.following


# -- a key for every option -------------------------------------------------------------------


def test_each_option_has_a_key_of_its_own() -> None:
    def option(kind: str) -> m.PermissionOption:
        return m.PermissionOption(kind, kind, kind)

    kinds = ["allow_always", "allow_always", "allow_once", "reject_once", "reject_once", "x"]
    assert option_keys([option(kind) for kind in kinds]) == ["A", "2", "a", "r", "5", "6"]
    assert option_keys([option("x")] * 10)[-2:] == ["9", ""]  # the tenth: arrows and Enter


async def test_options_of_one_kind_each_have_their_own_key(tmp_path: Path) -> None:
    """Claude's request to leave plan mode offers three ways to allow always: the first
    is A, the others their number, each shown beside it, and each key answers its own."""
    async with started_app(tmp_path, argv=REAL_SHAPES) as (app, pilot):
        for key, answer in (("2", "exit-plan-auto"), ("A", "exit-plan-clear-auto")):
            await send(app, pilot, "exit-plan")
            await wait_permission(app, pilot)
            shown = str(panel_of(app).query_one(".permission--options").render())
            for option_key, name in (
                ("A", "Yes, clear context (12% used) and use auto mode"),
                ("2", "Yes, and use auto mode"),
                ("3", "Yes, and bypass permissions"),
                ("a", "Yes, manually approve edits"),
                ("r", "No, keep planning"),
            ):
                assert f" {option_key}  {name} " in shown
            await pilot.press(key)
            await wait_idle(app, pilot)
            assert message_texts(app)[-1] == f"exit-plan: {answer}"
