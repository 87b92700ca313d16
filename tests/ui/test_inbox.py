"""One inbox for every conversation, and notifications: the session bar marks who needs the
user, Ctrl+G goes there, the palette lists them, the terminal's title counts them; and the
terminal is told (OSC 777, OSC 9, OSC 99, wrapped for tmux, else the bell) when nobody looks
at the conversation that needs the user. On the real app and demo agent processes; what the
app writes to the terminal is caught at Textual's driver."""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual import events
from textual.drivers.headless_driver import HeadlessDriver
from textual.pilot import Pilot

from acp_tui.config import Config, Notify, Startup, demo_agent
from acp_tui.ui.app import AcpApp
from acp_tui.ui.command_palette import app_commands
from acp_tui.ui.notify import notification, terminal_sequence, tmux_passthrough
from acp_tui.ui.widgets.permission_panel import PermissionPanel
from acp_tui.ui.widgets.prompt_input import PromptInput
from acp_tui.ui.widgets.session_bar import SessionBar
from tests.support.cli import run_cli
from tests.support.pilot import (
    core,
    demo_app,
    demo_workspace,
    new_conversation,
    send,
    wait_idle,
    wait_permission,
    wait_started,
    wait_until,
)

TERMINALS = ("TMUX", "TERM_PROGRAM", "LC_TERMINAL", "KITTY_WINDOW_ID", "WT_SESSION")
TERMINALS += ("ConEmuPID", "ITERM_SESSION_ID", "WEZTERM_PANE", "GHOSTTY_RESOURCES_DIR")


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the app writes to the terminal (the test driver writes nothing anywhere); the
    terminal is foot, outside tmux, unless a test says otherwise."""
    for name in TERMINALS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "foot")
    out: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "write", lambda self, data: out.append(data))
    return out


def notifications(written: list[str]) -> list[str]:
    """What was written but frames and titles: the notifications and bells."""
    return [w for w in written if w.startswith(("\x1b]777", "\x1b]9;", "\x1b]99", "\x1bP", "\x07"))]


def titles(written: list[str]) -> list[str]:
    return [w[4:-1] for w in written if w.startswith("\x1b]2;")]


def _bar(app: AcpApp) -> str:
    return str(app.chat.query_one(SessionBar).render())


@asynccontextmanager
async def inbox_app(
    tmp_path: Path, notify: Notify | None = None
) -> AsyncIterator[tuple[AcpApp, Pilot[int]]]:
    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state")
    if notify is not None:
        agent = app.conversation.agent = demo_agent()
        agent.command = app.argv
        app.startup = Startup(Config(tmp_path / "config.toml"), agent, "ask", record=False)
        app.startup.notify = notify
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        yield app, pilot


async def background_permission(app: AcpApp, pilot: Pilot[int]) -> None:
    """The first of two conversations asks for permission while the second is shown (its
    prompt sent from there, so that the request cannot come while the first is shown)."""
    await new_conversation(app, pilot)
    first = app.conversations[0]
    assert first.chat is not None
    first.chat.query_one(PromptInput).post_message(PromptInput.Submitted("/edit app.py"))
    await wait_until(pilot, lambda: first.need == "permission")
    await pilot.pause()


# -- the escape sequences --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "sequence"),
    [
        ({"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}, "osc99"),
        ({"TERM": "tmux-256color", "TMUX": "/tmp/t,1,0", "KITTY_WINDOW_ID": "1"}, "osc99"),
        ({"TERM_PROGRAM": "iTerm.app"}, "osc9"),
        ({"TERM": "screen", "TMUX": "x", "LC_TERMINAL": "iTerm2"}, "osc9"),
        ({"WT_SESSION": "0b3c"}, "osc9"),
        ({"ConEmuPID": "42"}, "osc9"),
        ({"TERM_PROGRAM": "WezTerm"}, "osc777"),
        ({"TERM_PROGRAM": "tmux", "WEZTERM_PANE": "3"}, "osc777"),
        ({"TERM": "xterm-ghostty"}, "osc777"),
        ({"TERM": "foot-extra"}, "osc777"),
        ({"TERM": "rxvt-unicode-256color"}, "osc777"),
        ({"TERM": "xterm-256color"}, "bell"),  # no telling which: the bell
        ({"TERM": "tmux-256color", "TMUX": "x", "TERM_PROGRAM": "tmux"}, "bell"),
    ],
)
def test_the_sequence_is_picked_for_the_terminal(environ: dict[str, str], sequence: str) -> None:
    assert terminal_sequence(environ) == sequence


def test_each_sequence_and_its_tmux_wrapping() -> None:
    foot = {"TERM": "foot"}
    assert notification("acp-tui · 1 Fix", "Done; all green", foot) == (
        "\x1b]777;notify;acp-tui · 1 Fix;Done; all green\x07"
    )
    assert notification("t;x", "b", foot) == "\x1b]777;notify;t,x;b\x07"  # the title ends at ;
    assert notification("t", "b", {}, "osc9") == "\x1b]9;t: b\x07"
    kitty = notification("t", "b", {}, "osc99")
    assert kitty.startswith("\x1b]99;i=acp-tui-") and ":d=0;t\x1b\\\x1b]99;i=acp-tui-" in kitty
    assert kitty.endswith(":d=1:p=body;b\x1b\\")
    assert notification("t", "b", {"TERM": "dumb"}) == "\x07"
    # A control character in what the agent said would end the sequence early.
    assert (
        notification("t", "a\x07b\x1b]2;owned\nc", foot) == "\x1b]777;notify;t;a b ]2;owned c\x07"
    )
    # Inside tmux: passed through (ESC doubled), and the bell for tmux's own window mark.
    inside = notification("t", "b", {"TERM": "foot", "TMUX": "/tmp/tmux-0/default,1,0"})
    assert inside == "\x1bPtmux;\x1b\x1b]777;notify;t;b\x07\x1b\\\x07"
    assert tmux_passthrough("\x1b]99;x\x1b\\") == "\x1bPtmux;\x1b\x1b]99;x\x1b\x1b\\\x1b\\"
    assert notification("t", "b", {"TMUX": "x"}) == "\x07"  # unknown terminal: the bell alone


# -- notifications from the app ----------------------------------------------------------------


async def test_a_background_permission_is_notified_marked_counted_and_a_key_away(
    tmp_path: Path, written: list[str]
) -> None:
    async with inbox_app(tmp_path) as (app, pilot):
        await background_permission(app, pilot)
        first, second = app.conversations
        [told] = notifications(written)
        assert told.startswith("\x1b]777;notify;acp-tui · 1 ")
        assert told.endswith(";Permission: Edit app.py\x07")
        await wait_until(pilot, lambda: "◆ permission" in _bar(app))
        assert "ctrl+g waiting" in _bar(app)
        assert titles(written)[-1] == "acp-tui · 1 waiting"
        [command] = [c for c in app_commands(app) if c.title.startswith("Waiting: ")]
        assert command.title == f"Waiting: {first.label}"
        assert command.help.startswith("It asks for permission")

        await pilot.press("ctrl+g")  # to the one that waits
        await wait_permission(app, pilot)
        assert app.conversation is first
        await pilot.press("ctrl+g")  # nothing else waits: it stays
        await pilot.pause()
        assert app.conversation is first
        await pilot.press("a")
        await wait_idle(app, pilot)
        # Answered, the turn ended while looking: nothing waits, nothing more told.
        await wait_until(pilot, lambda: titles(written)[-1] == "acp-tui")
        assert len(notifications(written)) == 1
        assert first.need is None and second.need is None
        assert not [c for c in app_commands(app) if c.title.startswith("Waiting: ")]


async def test_a_turn_that_ends_while_the_terminal_has_no_focus(
    tmp_path: Path, written: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WT_SESSION", "0b3c")  # Windows Terminal: OSC 9
    async with inbox_app(tmp_path) as (app, pilot):
        await send(app, pilot, "slow 2")  # a turn of two seconds
        await wait_until(pilot, lambda: core(app).busy)
        app.post_message(events.AppBlur())  # the user went to another window
        await wait_until(pilot, lambda: not app.app_focus)
        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: notifications(written))
        [told] = notifications(written)
        assert told.startswith("\x1b]9;acp-tui · 1 ") and told.endswith("\x07")
        assert app.conversation.need == "done"
        assert titles(written)[-1] == "acp-tui · 1 waiting"

        app.post_message(events.AppFocus())  # back: seen
        await wait_until(pilot, lambda: app.conversation.need is None)
        assert titles(written)[-1] == "acp-tui"


async def test_nothing_is_told_to_a_user_who_is_looking(tmp_path: Path, written: list[str]) -> None:
    async with inbox_app(tmp_path) as (app, pilot):
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        await pilot.press("a")
        await wait_idle(app, pilot)
        assert notifications(written) == []
        assert app.conversation.need is None


async def test_a_long_turn_is_told_even_to_a_user_who_is_looking(
    tmp_path: Path, written: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm-kitty")
    monkeypatch.setenv("KITTY_WINDOW_ID", "1")
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    async with inbox_app(tmp_path, Notify(long_turn=0.001)) as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        await wait_until(pilot, lambda: notifications(written))
        [told] = notifications(written)
        # kitty's OSC 99, passed through tmux, and the bell for tmux.
        assert told.startswith("\x1bPtmux;\x1b\x1b]99;i=acp-tui-") and told.endswith("\x1b\\\x07")
        assert app.conversation.need is None  # seen as it ended: no mark


async def test_an_agent_that_dies_in_the_background_rings_the_bell(
    tmp_path: Path, written: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")  # no known notification: the bell
    async with inbox_app(tmp_path) as (app, pilot):
        await new_conversation(app, pilot)
        first = app.conversations[0]
        core(first).client.process.process.kill()  # type: ignore[union-attr]
        await wait_until(pilot, lambda: "✗ failed" in _bar(app))
        assert notifications(written) == ["\x07"]
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: first.need is None)  # seen
        assert app.conversation is first and "✗ stopped" in _bar(app)


async def test_notifications_off_and_events_left_out(tmp_path: Path, written: list[str]) -> None:
    async with inbox_app(tmp_path, Notify(events=frozenset({"done"}))) as (app, pilot):
        await background_permission(app, pilot)
        assert notifications(written) == []  # not a permission
        assert app.conversations[0].need == "permission"  # marked all the same
    async with inbox_app(tmp_path, Notify(enabled=False)) as (app, pilot):
        await background_permission(app, pilot)
        assert notifications(written) == []


async def test_a_desktop_notification_through_notify_send(
    tmp_path: Path, written: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir, said = tmp_path / "bin", tmp_path / "said"
    bin_dir.mkdir()
    fake = bin_dir / "notify-send"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {said}\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    async with inbox_app(tmp_path, Notify(desktop=True)) as (app, pilot):
        await background_permission(app, pilot)
        await wait_until(pilot, lambda: said.exists() and said.read_text().count("\n") == 4)
        app_name, dashes, title, body = said.read_text().splitlines()
        assert (app_name, dashes) == ("--app-name=acp-tui", "--")
        assert title.startswith("acp-tui · 1 ") and body == "Permission: Edit app.py"
        assert len(notifications(written)) == 1  # the terminal too


def test_headless_sends_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "foot")
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    result = run_cli(tmp_path, "-p", "hello", "--cwd", str(demo_workspace(tmp_path / "w")))
    assert result.returncode == 0 and result.stdout
    assert "\x1b" not in result.stdout + result.stderr
    assert "\x07" not in result.stdout + result.stderr


async def test_the_panel_stays_with_its_conversation(tmp_path: Path, written: list[str]) -> None:
    """Ctrl+G shows the conversation that asked: its own dialog, with the keys."""
    async with inbox_app(tmp_path) as (app, pilot):
        await background_permission(app, pilot)
        assert app.conversations[1].chat is not None
        assert not app.conversations[1].chat.query(PermissionPanel)
        await pilot.press("ctrl+g")
        await wait_permission(app, pilot)
        await wait_started(app, pilot)
        assert app.chat.query_one(PermissionPanel).queue


@pytest.mark.parametrize("shown", [True, False])
async def test_in_tmux_without_focus_events_tmux_is_asked_whether_it_shows_the_pane(
    tmp_path: Path, written: list[str], monkeypatch: pytest.MonkeyPatch, shown: bool
) -> None:
    """tmux tells no program of a window switch unless `focus-events` is on (it is off by
    default): a turn that ends while the terminal seems to have focus is told, and marked,
    when tmux shows another window, until a key says the user is back."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "tmux"  # `display-message -p -t PANE '#{window_active} #{session_attached}'`
    fake.write_text(f"#!/bin/sh\necho '{int(shown)} 1'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")
    monkeypatch.setenv("TMUX_PANE", "%0")
    async with inbox_app(tmp_path) as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        if shown:
            assert app.conversation.need is None
            assert notifications(written) == []
            return
        await wait_until(pilot, lambda: app.conversation.need == "done")
        [told] = notifications(written)  # foot's, through tmux, and the bell
        assert told.startswith("\x1bPtmux;\x1b\x1b]777;notify;acp-tui · 1 ")
        assert told.endswith("\x07\x1b\\\x07")
        assert titles(written)[-1] == "acp-tui · 1 waiting"
        await pilot.press("end")  # back
        await wait_until(pilot, lambda: app.conversation.need is None)
        assert titles(written)[-1] == "acp-tui"


async def blurred(app: AcpApp, pilot: Pilot[int], prompt: str) -> None:
    """The terminal loses focus, and then `prompt` is sent (as if typed before: a key would
    give the focus back)."""
    app.post_message(events.AppBlur())
    await wait_until(pilot, lambda: not app.app_focus)
    app.chat.query_one(PromptInput).post_message(PromptInput.Submitted(prompt))


async def test_a_failed_prompt_and_a_background_question_need_the_user(
    tmp_path: Path, written: list[str]
) -> None:
    async with inbox_app(tmp_path) as (app, pilot):
        await blurred(app, pilot, "error")  # the demo agent fails the prompt
        await wait_until(pilot, lambda: app.conversation.need == "failed")
        [told] = notifications(written)
        assert ";The agent failed the prompt: " in told

        await new_conversation(app, pilot)  # a key: the user is back, and saw it first
        first = app.conversations[0]
        assert first.chat is not None and first.need is None
        first.chat.query_one(PromptInput).post_message(PromptInput.Submitted("ask"))
        await wait_until(pilot, lambda: first.need == "question")
        asked = "Question: How should I set up the new project?"
        await wait_until(pilot, lambda: notifications(written)[-1].endswith(f";{asked}\x07"))
        await wait_until(pilot, lambda: "◆ question" in _bar(app))


async def test_a_budget_reached_unseen(tmp_path: Path, written: list[str]) -> None:
    from acp_tui.conversation.budget import Budget
    from tests.agents.hostile import AGENTS

    app = demo_app(
        demo_workspace(tmp_path / "workspace"), tmp_path / "state", argv=AGENTS["costly"].argv()
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        app.chat.raise_budget(Budget(max_cost=0.5))
        await blurred(app, pilot, "go")
        await wait_until(pilot, lambda: app.conversation.need == "budget")
        await wait_until(pilot, lambda: notifications(written))  # as the turn ends
        [told] = notifications(written)
        assert told.endswith(";Budget reached: $0.50 of $0.50\x07")
        assert titles(written)[-1] == "acp-tui · 1 waiting"
        app.chat.raise_budget(Budget())  # removed: nothing stops it
        await wait_until(pilot, lambda: titles(written)[-1] == "acp-tui")
        assert app.conversation.need is None


async def test_nothing_is_written_while_the_app_has_handed_the_terminal_over(
    tmp_path: Path, written: list[str]
) -> None:
    """A sign-in command, the user's editor: Textual's writer is stopped meanwhile (written
    to, it would block once thirty writes wait); the title is set again once back."""
    async with inbox_app(tmp_path) as (app, pilot):
        await new_conversation(app, pilot)
        app.app_suspend_signal.publish(app)  # as `App.suspend` does (not in a test driver)
        first = app.conversations[0]
        assert first.chat is not None
        first.chat.query_one(PromptInput).post_message(PromptInput.Submitted("/edit app.py"))
        await wait_until(pilot, lambda: first.need == "permission")
        assert notifications(written) == [] and titles(written) == []
        app.app_resume_signal.publish(app)
        await wait_until(pilot, lambda: titles(written) == ["acp-tui · 1 waiting"])
