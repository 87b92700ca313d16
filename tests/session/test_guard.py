"""What a granted permission covers, for the guard (`acp_tui.session.guard.Grants`)."""

from __future__ import annotations

import pytest

from acp_tui.protocol.updates import ConfigOption, ConfigSelectOption
from acp_tui.session.guard import Grants
from acp_tui.session.state import Mode, SessionState, ToolCallState


def state_with(*calls: ToolCallState) -> SessionState:
    state = SessionState("s")
    state.tool_calls = {call.id: call for call in calls}
    return state


def test_nothing_granted_covers_nothing() -> None:
    grants, state = Grants(), state_with()
    assert not grants.covers(state, "write") and not grants.covers(state, "command")


@pytest.mark.parametrize(
    ("kind", "write", "command"),
    [
        ("edit", True, False),
        ("delete", True, False),
        ("move", True, False),
        ("execute", False, True),
        ("other", True, True),  # the agent did not say: both
        ("read", False, False),
        ("search", False, False),
        ("fetch", False, False),
    ],
)
def test_an_allowed_open_call_covers_what_its_kind_does(
    kind: str, write: bool, command: bool
) -> None:
    call = ToolCallState("c1", 1, kind=kind, status="in_progress")
    grants, state = Grants(), state_with(call)
    grants.allowed("c1", kind, always=False)
    assert (grants.covers(state, "write"), grants.covers(state, "command")) == (write, command)
    call.status = "completed"  # once the call is over, it covers nothing more
    assert not grants.covers(state, "write") and not grants.covers(state, "command")


def test_a_call_allowed_before_it_was_announced_covers_in_its_turn_only() -> None:
    grants, state = Grants(), state_with()
    grants.allowed("later", None, always=False, turn=state.turn)
    assert grants.covers(state, "write") and grants.covers(state, "command")
    state.turn += 1  # never announced: it covers nothing in the next turn
    assert not grants.covers(state, "write") and not grants.covers(state, "command")


def test_allow_always_covers_its_kind_for_the_session() -> None:
    grants = Grants()
    state = state_with(ToolCallState("c1", 1, kind="edit", status="completed"))
    grants.allowed("c1", "edit", always=True)
    assert grants.covers(state, "write") and not grants.covers(state, "command")


@pytest.mark.parametrize(
    ("mode", "covered"),
    [
        (Mode("acceptEdits", "Accept Edits"), True),  # Claude
        (Mode("bypassPermissions", "Bypass Permissions"), True),
        (Mode("yolo", "YOLO"), True),  # Gemini
        (Mode("auto", "Agent"), True),  # Codex
        (Mode("full-access", "Agent (full access)"), True),
        (Mode("default", "Default"), False),
        (Mode("plan", "Plan Mode"), False),
        (Mode("read-only", "Read Only"), False),
    ],
)
def test_a_mode_that_acts_without_asking_covers_everything(mode: Mode, covered: bool) -> None:
    state = state_with()
    state.modes = [Mode("default", "Default"), mode]
    state.current_mode = mode.id
    assert Grants().covers(state, "write") is covered
    assert Grants().covers(state, "command") is covered


def test_so_does_a_mode_chosen_as_a_config_option() -> None:
    state = state_with()
    choices = [ConfigSelectOption("Ask", "ask"), ConfigSelectOption("Accept edits", "accept")]
    option = ConfigOption("Mode", category="mode", current_value="ask", options=choices)
    state.config_options = [option]
    assert not Grants().covers(state, "write")
    option.current_value = "accept"
    assert Grants().covers(state, "write")
