"""The permission dialog as a person meets it: keys typed as it opens are not answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events

from acp_tui.protocol import methods as m
from acp_tui.session.controller import PendingPermission
from acp_tui.ui import key_guard
from acp_tui.ui.app import AcpApp
from acp_tui.ui.key_guard import KeyGuard
from acp_tui.ui.pilot import send, wait_idle, wait_until
from acp_tui.ui.widgets.permission_panel import PermissionPanel
from acp_tui.ui.widgets.prompt_input import PromptInput
from tests.support.ui import started_app


def panel_of(app: AcpApp) -> PermissionPanel:
    return app.chat.query_one(PermissionPanel)


def answer_of(pending: PendingPermission | None) -> str | None:
    """The option a request was answered with; None while it waits (or if cancelled)."""
    assert pending is not None
    if not pending.done:
        return None
    outcome = pending.future.result().outcome
    return outcome.option_id if isinstance(outcome, m.SelectedOutcome) else None


async def wait_open(app: AcpApp, pilot: Any) -> None:
    """Until a request is shown, however new (its guard may still be on)."""
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
    # Long enough that the press below surely comes within it, even on a slow machine.
    monkeypatch.setattr(key_guard, "KEY_GUARD_SECONDS", 1.0)
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
        await wait_until(pilot, lambda: not panel.guard.armed)
        await pilot.press("a")
        await wait_idle(app, pilot)
        assert answer_of(pending) == "allow_once"
        assert "Edited by the ACP demo agent" in (tmp_path / "workspace" / "app.py").read_text()
