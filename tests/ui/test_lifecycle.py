"""The TUI around the conversation: permission rules saved from the dialog, restarting a dead
agent, the session picker and export, and hostile agents (the TUI half of the faults suite)."""

from __future__ import annotations

import functools
import sys
import tomllib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.containers import Vertical
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static

from acp_tui.config import DEMO_COMMAND as DEMO_AGENT
from acp_tui.conversation.opening import SessionEntry
from acp_tui.conversation.sign_in import AuthChoice
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.session.state import Notice
from acp_tui.ui import chat_screen
from acp_tui.ui.app import AcpApp
from acp_tui.ui.command_palette import app_commands
from acp_tui.ui.screens import SessionsScreen, SignInScreen
from acp_tui.ui.widgets.inspector import Inspector
from acp_tui.ui.widgets.message import UserMessage
from acp_tui.ui.widgets.notice import NoticeLine
from acp_tui.ui.widgets.permission_panel import PermissionPanel
from acp_tui.ui.widgets.prompt_input import PromptInput
from acp_tui.ui.widgets.session_header import SessionHeader
from tests.agents.hostile import AGENTS
from tests.support import TEST_AGENTS
from tests.support.pilot import (
    choose_command,
    core,
    demo_app,
    demo_workspace,
    send,
    wait_idle,
    wait_permission,
    wait_started,
    wait_until,
)
from tests.support.ui import message_texts, started_app

AGENTS_DIR = TEST_AGENTS

Run = Callable[..., Any]


@pytest.fixture
def run(tmp_path: Path) -> Run:
    """`async with run() as (app, pilot)`: the app on a fresh demo agent and workspace."""
    return functools.partial(started_app, tmp_path)


def _notices(app: AcpApp) -> list[str]:
    return [notice.item.title for notice in app.chat.query(NoticeLine)]


# -- permission rules -------------------------------------------------------------------------


async def test_a_rule_saved_from_the_dialog_answers_the_next_request(
    run: Run, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    async with run() as (app, pilot):
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        panel = app.chat.query_one(PermissionPanel)
        assert "always allow edit here" in str(panel.query_one(".permission--options").render())
        await pilot.press("w")
        await wait_idle(app, pilot)
        assert "Edited by the ACP demo agent" in (workspace / "app.py").read_text()
        assert not panel.has_class("-open")

        await send(app, pilot, "/edit README.md")
        await wait_idle(app, pilot)
        assert not panel.queue
        assert "Edited by the ACP demo agent" in (workspace / "README.md").read_text()
        assert f"allowed by rule: always allow edit in {workspace}" in _notices(app)

    saved = tomllib.loads((tmp_path / "state" / "config" / "permissions.toml").read_text())
    assert saved["rule"] == [{"kind": "edit", "decision": "allow", "workspace": str(workspace)}]


async def test_a_reject_rule_saved_from_the_dialog(run: Run, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    async with run() as (app, pilot):
        before = (workspace / "app.py").read_text()
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        await pilot.press("W")
        await wait_idle(app, pilot)
        await send(app, pilot, "/edit app.py")
        await wait_idle(app, pilot)
        assert (workspace / "app.py").read_text() == before
        assert f"rejected by rule: always reject edit in {workspace}" in _notices(app)
        assert core(app).policy.saved.rules[-1].decision == "reject"


# -- restarting the agent ---------------------------------------------------------------------


async def test_restart_after_a_crash_reloads_the_session_and_keeps_the_draft(
    run: Run, tmp_path: Path
) -> None:
    async with run(argv=AGENTS["crashes-once-then-loads"].argv()) as (app, pilot):
        await send(app, pilot, "first question")
        await wait_until(pilot, lambda: not app.agent_running)
        header = app.chat.query_one(SessionHeader)
        assert header.status == "exited"
        assert any("exit" in (n.item.detail or "") for n in app.chat.query(NoticeLine))
        prompt = app.chat.query_one(PromptInput)
        prompt.insert("a draft in progress")
        assert app.check_action("restart_agent", ()) is True
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.agent_running and header.status == "idle")
        assert prompt.text == "a draft in progress"
        # The agent loaded the session: what it said before the crash is replayed.
        assert "Half an answer" in message_texts(app)
        prompt.clear()
        await send(app, pilot, "second question")
        await wait_idle(app, pilot)
        assert "You said: second question" in message_texts(app)
        assert app.check_action("restart_agent", ()) is False


async def test_restart_an_agent_that_cannot_reopen_keeps_the_record_on_screen(
    run: Run,
) -> None:
    agent = [sys.executable, str(AGENTS_DIR / "dies_mid_turn.py")]
    async with run(argv=agent) as (app, pilot):
        await send(app, pilot, "hello")
        await wait_until(pilot, lambda: not app.agent_running)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.agent_running and app.session is not None)
        await wait_until(pilot, lambda: any("new session" in t for t in _notices(app)))
        assert "hello" in message_texts(app)  # the record of the old session is still shown


# -- signing in -------------------------------------------------------------------------------

AUTH_AGENT = [sys.executable, str(AGENTS_DIR / "auth_agent.py")]


@pytest.fixture
def auth_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """`async with auth_app() as (app, pilot)`: the app on `auth_agent.py`, recording (so it
    signs in) with records of its own, not yet started (the sign-in dialog comes first)."""
    monkeypatch.setenv("AUTH_AGENT_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("AUTH_AGENT_KEY", raising=False)

    @asynccontextmanager
    async def started() -> AsyncIterator[tuple[AcpApp, Pilot[int]]]:
        workspace = demo_workspace(tmp_path / "workspace")
        app = demo_app(workspace, tmp_path / "state", argv=AUTH_AGENT, record=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SignInScreen))
            await pilot.pause()
            yield app, pilot

    return started


async def test_signing_in_from_the_dialog_opens_the_session(auth_app: Run, tmp_path: Path) -> None:
    async with auth_app() as (app, pilot):
        dialog = app.screen
        assert isinstance(dialog, SignInScreen)
        assert [(c.id, c.type_label) for c in dialog.choices] == [
            ("token", "agent"),
            ("api-key", "env var"),
        ]
        await pilot.press("enter")  # the first: Token (agent)
        await wait_started(app, pilot)
        assert app.screen is app.chat
        assert app.session is not None, _notices(app)
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        assert "signed in: hello" in message_texts(app)
    assert 'authenticate "token"' in (tmp_path / "calls.log").read_text()


@pytest.mark.parametrize("method", ["token", "api-key"])
async def test_a_sign_in_that_lapsed_mid_session_is_asked_for_again(
    auth_app: Run, method: str
) -> None:
    """-32000 on a prompt: the sign-in dialog. An agent method signs the process in; a key
    restarts the agent with it and reopens the session (as Ctrl+R does). Either way the user
    sends the prompt again: it is not sent twice behind their back."""
    async with auth_app() as (app, pilot):
        await pilot.press("enter")  # Token (agent)
        await wait_started(app, pilot)
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        await app.sign_out()  # the agent forgets the sign-in; acp-tui the method chosen
        await send(app, pilot, "still there?")
        await wait_until(pilot, lambda: isinstance(app.screen, SignInScreen))
        if method == "token":
            await pilot.press("enter")
            await wait_until(pilot, lambda: any("Signed in again" in n for n in _notices(app)))
        else:
            await pilot.press("down", "enter")  # API key (env var)
            field = await _wait_for_input(app, pilot)
            field.value = "secret"
            await pilot.press("enter")
            await wait_until(pilot, lambda: any("Signing in with" in n for n in _notices(app)))
            await wait_started(app, pilot)
            await wait_until(pilot, lambda: app.agent_running and app.session is not None)
        assert message_texts(app).count("still there?") == 1
        await send(app, pilot, "still there?")
        await wait_until(pilot, lambda: "signed in: still there?" in message_texts(app))
        await wait_idle(app, pilot)
        assert "The agent asks you to sign in again" in _notices(app)
        assert "The agent failed the prompt" not in _notices(app)


async def test_an_env_var_method_asks_for_the_value_masked(auth_app: Run) -> None:
    async with auth_app() as (app, pilot):
        await pilot.press("down", "enter")  # API key (env var)
        field = await _wait_for_input(app, pilot)
        assert field.password
        await pilot.press("enter")  # empty: the dialog says what is needed and stays
        await pilot.pause()
        assert isinstance(app.screen, SignInScreen)
        await pilot.press(*"secret", "enter")
        await wait_started(app, pilot)
        assert app.session is not None, _notices(app)
        await send(app, pilot, "hi")
        await wait_idle(app, pilot)
        assert "signed in: hi" in message_texts(app)
        assert not any("secret" in text for text in [*message_texts(app), *_notices(app)])


async def _wait_for_input(app: AcpApp, pilot: Pilot[int]) -> Input:
    await wait_until(pilot, lambda: app.screen.query(Input))
    await pilot.pause()
    return app.screen.query_one(Input)


def test_the_remembered_method_comes_first() -> None:
    choices = [AuthChoice("token", "Token"), AuthChoice("api-key", "API key", "env_var")]
    assert [c.id for c in SignInScreen(choices, "api-key").choices] == ["api-key", "token"]
    assert [c.id for c in SignInScreen(choices, "gone").choices] == ["token", "api-key"]


async def test_escape_in_the_sign_in_dialog_gives_the_clear_error(auth_app: Run) -> None:
    async with auth_app() as (app, pilot):
        prompt = app.chat.query_one(PromptInput)
        prompt.insert("my unsent draft")
        await pilot.press("escape")
        await wait_started(app, pilot)
        assert app.screen is app.chat
        assert app.session is None
        assert not app.agent_running
        failure = next(t for t in _notices(app) if "could not start" in t)
        assert "requires sign-in" in failure and "--auth METHOD" in failure
        assert prompt.text == "my unsent draft"


# -- sessions and export ----------------------------------------------------------------------


def remembering_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The demo agent keeping its sessions under `tmp_path` (so it lists them), and records
    of the test's own."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return [*DEMO_AGENT, "--speed", "0", "--data-dir", str(tmp_path / "demo")]


async def session_picker(app: AcpApp, pilot: Pilot[int]) -> SessionsScreen:
    """Ctrl+O, once its list is up."""
    await pilot.press("ctrl+o")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
    await pilot.pause()
    assert isinstance(app.screen, SessionsScreen)
    return app.screen


async def old_times(app: AcpApp, pilot: Pilot[int], *prompts: str) -> str:
    """A session titled "Old times", with `prompts` sent in it: its id."""
    for prompt in ("title Old times", *prompts):
        await send(app, pilot, prompt)
        await wait_idle(app, pilot)
    assert app.session is not None
    return app.session.id


async def test_a_session_that_cannot_be_resumed_gives_a_new_one_that_says_why(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`acp-tui --resume ID` of a session neither acp-tui nor the agent knows: the agent runs
    on, in a new session whose first line says what failed; the next prompt goes to it."""
    argv = remembering_demo(tmp_path, monkeypatch)
    async with run(record=True, argv=argv, resume="nope") as (app, pilot):
        assert app.session is not None and app.agent_running
        [first] = app.session.state.timeline
        assert isinstance(first, Notice) and first.severity == "error"
        assert first.title == "Could not open the session nope"
        assert "Unknown session: nope" in first.detail and "Ctrl+O" in first.detail
        assert app.chat.query_one(SessionHeader).status == "idle"
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        assert "hello" in message_texts(app)


async def test_a_fork_the_agent_refuses_at_start_gives_a_new_session_that_says_why(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`acp-tui --resume ID --fork` of a recorded session the agent no longer knows: a new
    session says the fork failed, and the recorded session is left as it was."""
    async with run(record=True) as (app, pilot):  # the demo agent forgets it when it exits
        old_id = await old_times(app, pilot, "remember the tortoise")
        await app.action_quit()

    async with run(record=True, resume=old_id, fork=True) as (app, pilot):
        assert app.session is not None and app.session.id != old_id
        notice = app.session.state.timeline[0]
        assert isinstance(notice, Notice) and notice.severity == "error"
        assert notice.title == f"Could not fork the session {old_id}"
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        assert app.shared.store is not None
        [old] = [r for r in app.shared.store.conversations() if r.session_id == old_id]
        assert old.title == "Old times"


async def test_the_session_picker_opens_an_earlier_session(run: Run) -> None:
    async with run(record=True) as (app, pilot):
        old_id = await old_times(app, pilot, "remember the tortoise")
        await app.action_quit()

    async with run(record=True) as (app, pilot):
        assert "remember the tortoise" not in message_texts(app)
        picker = await session_picker(app, pilot)
        titles = [entry.label for entry in picker.entries]
        assert "Old times" in titles
        await pilot.pause()
        index = titles.index("Old times")
        picker.query_one(OptionList).highlighted = index
        await pilot.press("enter")
        await wait_until(pilot, lambda: "remember the tortoise" in message_texts(app))
        assert app.screen is app.chat
        assert app.chat.query(UserMessage)
        assert app.session is not None and app.session.state.title == "Old times"
        assert old_id in (app.session.id, picker.entries[index].session_id)


async def test_the_session_picker_deletes_a_session_on_a_second_delete(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the agent's list (`session/delete`) and from acp-tui's records; the session shown
    is not deleted; a first Delete only asks."""
    argv = remembering_demo(tmp_path, monkeypatch)
    async with run(record=True, argv=argv) as (app, pilot):
        old_id = await old_times(app, pilot)
        await app.action_quit()

    async with run(record=True, argv=argv) as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        picker = await session_picker(app, pilot)
        options = picker.query_one(OptionList)
        status = picker.query_one(".sessions--status", Static)
        ids = [entry.session_id for entry in picker.entries]
        assert picker.entries[ids.index(old_id)].source == "agent, local"
        options.highlighted = ids.index(app.session.id)  # type: ignore[union-attr]
        await pilot.press("delete")
        assert "open another one first" in str(status.render())
        options.highlighted = ids.index(old_id)
        await pilot.press("delete")
        assert "Press del again" in str(status.render())
        assert options.option_count == len(ids)
        await pilot.press("delete")
        await wait_until(pilot, lambda: options.option_count == len(ids) - 1)
        assert "Deleted “Old times”" in str(status.render())
        await pilot.press("escape")
        client = core(app).client
        assert client is not None
        assert old_id not in [info.session_id for info in await client.list_sessions()]
        assert app.shared.store is not None
        assert old_id not in [record.session_id for record in app.shared.store.conversations()]


async def test_a_fork_goes_on_from_here_and_leaves_the_session_as_it_was(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+P, "Fork the session": the history stays on screen under a new session, a notice
    says so, and the next prompt goes to the fork; Ctrl+O lists both, and opening the first
    shows it as it was."""
    argv = remembering_demo(tmp_path, monkeypatch)
    async with run(record=True, argv=argv) as (app, pilot):
        await old_times(app, pilot, "remember the tortoise")
        source = app.session
        assert source is not None
        await choose_command(app, pilot, "Fork the session")
        await wait_until(pilot, lambda: app.session is not source)
        await wait_until(pilot, lambda: "A fork of the session above" in _notices(app))
        assert "remember the tortoise" in message_texts(app)
        assert app.session is not None and app.session.state.title == "Old times (fork)"
        await send(app, pilot, "only in the fork")
        await wait_idle(app, pilot)
        picker = await session_picker(app, pilot)
        ids = [entry.session_id for entry in picker.entries]
        assert {source.id, app.session.id} <= set(ids)
        picker.query_one(OptionList).highlighted = ids.index(source.id)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.session is not None and app.session.id == source.id)
        await wait_until(pilot, lambda: "remember the tortoise" in message_texts(app))
        assert "only in the fork" not in message_texts(app)


async def test_f_in_the_session_picker_forks_an_earlier_session_without_opening_it(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = remembering_demo(tmp_path, monkeypatch)
    async with run(record=True, argv=argv) as (app, pilot):
        old_id = await old_times(app, pilot, "remember the tortoise")
        await app.action_quit()

    async with run(record=True, argv=argv) as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        shown, client = app.session, core(app).client
        assert client is not None
        opened: list[str] = []
        open_session = client.open_session

        async def spy(session_id: str, **kwargs: Any) -> Any:
            opened.append(session_id)
            return await open_session(session_id, **kwargs)

        monkeypatch.setattr(client, "open_session", spy)
        picker = await session_picker(app, pilot)
        assert "f fork" in str(picker.query_one(Vertical).border_subtitle)
        ids = [entry.session_id for entry in picker.entries]
        picker.query_one(OptionList).highlighted = ids.index(old_id)
        await pilot.press("f")
        await wait_until(pilot, lambda: app.session is not shown)
        session = app.session
        assert session is not None and session.id not in (old_id, shown.id)  # type: ignore[union-attr]
        assert session.state.title == "Old times (fork)"
        assert "remember the tortoise" in message_texts(app)
        assert "hello" not in message_texts(app)
        assert opened == []  # forked as it was, never loaded or resumed
        # F on the session shown (●): a fork of what is on screen, titled once.
        fork = session
        picker = await session_picker(app, pilot)
        ids = [entry.session_id for entry in picker.entries]
        picker.query_one(OptionList).highlighted = ids.index(fork.id)
        await pilot.press("f")
        await wait_until(pilot, lambda: app.session is not fork)
        assert app.session is not None and app.session.state.title == "Old times (fork)"
        assert "remember the tortoise" in message_texts(app) and opened == []


async def test_a_fork_the_agent_refuses_leaves_the_session_shown(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        source, client = app.session, core(app).client
        assert source is not None and client is not None

        async def refuse(*_args: Any) -> Any:
            raise RpcError(-32603, "no forks today")

        monkeypatch.setattr(client, "fork_session", refuse)
        app.action_fork()
        await wait_until(
            pilot, lambda: "no forks today" in [str(n.message) for n in app._notifications]
        )
        assert app.session is source and source.id in client.sessions
        await send(app, pilot, "still here")
        await wait_idle(app, pilot)
        assert "still here" in message_texts(app)


async def test_a_session_another_conversation_shows_is_not_deleted_under_it(run: Run) -> None:
    deleted: list[str] = []

    async def delete(entry: SessionEntry) -> None:
        deleted.append(entry.session_id)

    entries = [SessionEntry("s-other", "Open in tab 2", None, "/w", in_agent=True)]
    async with run() as (app, pilot):
        picker = SessionsScreen(
            entries, delete=delete, agent_deletes=True, open_elsewhere=frozenset({"s-other"})
        )
        app.push_screen(picker)
        await pilot.pause()
        await pilot.press("delete", "delete")
        status = str(picker.query_one(".sessions--status", Static).render())
        assert "Another conversation shows this session" in status and deleted == []


async def test_export_writes_markdown_in_the_workspace(run: Run, tmp_path: Path) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "title Export me")
        await wait_idle(app, pilot)
        await send(app, pilot, "hello there")
        await wait_idle(app, pilot)
        app.action_export()
        await pilot.pause()
        exported = list((tmp_path / "workspace").glob("export-me-*.md"))
        assert len(exported) == 1
        text = exported[0].read_text()
        assert text.startswith("# Export me") and "hello there" in text
        assert f"Exported to {exported[0]}" in _notices(app)


# -- hostile agents: the TUI half of the faults suite -----------------------------------------

FAULTS = ["stdout-noise", "protocol-junk", "crashes-mid-turn", "deaf-to-cancel"]


@pytest.mark.parametrize("name", FAULTS)
async def test_a_hostile_agent_leaves_the_app_running_and_the_draft_kept(
    run: Run, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_screen, "CANCEL_GRACE", 0.3)
    async with run(argv=AGENTS[name].argv()) as (app, pilot):
        assert app.session is not None, _notices(app)
        await send(app, pilot, "hello")
        prompt = app.chat.query_one(PromptInput)
        prompt.insert("my unsent draft")
        inspector = app.chat.query_one(Inspector)
        if name == "deaf-to-cancel":
            await wait_until(pilot, lambda: "Thinking very hard" in "".join(message_texts(app)))
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.agent_unresponsive)
            assert any("ignored the cancel" in t for t in _notices(app))
            assert any("Ctrl+R stops and restarts it" in t for t in _notices(app))
            assert app.check_action("restart_agent", ()) is True
            assert not app.session.busy
        else:
            await wait_until(pilot, lambda: not app.session.busy and not app.chat.sending)  # type: ignore[union-attr]
        await pilot.pause()
        if name == "crashes-mid-turn":
            await wait_until(pilot, lambda: not app.agent_running)
            assert "The agent stopped" in _notices(app)
            assert app.check_action("restart_agent", ()) is True
        elif name in ("stdout-noise", "protocol-junk"):
            assert inspector._counts["problem"] > 0
            assert app.agent_running
        if name == "stdout-noise":
            assert "Hello, world" in message_texts(app)
        assert app.is_running
        assert prompt.text == "my unsent draft"


async def test_sign_out_from_the_palette(auth_app: Run, tmp_path: Path) -> None:
    async with auth_app() as (app, pilot):
        await pilot.press("enter")  # sign in with the token
        await wait_started(app, pilot)
        (command,) = [c for c in app_commands(app) if c.title == "Sign out"]
        command.callback()
        await wait_until(pilot, lambda: "Signed out of auth-agent 1.0." in _notices(app))
    assert (tmp_path / "calls.log").read_text().splitlines()[-1] == "logout null"


async def test_no_sign_out_for_an_agent_without_logout(run: Run) -> None:
    async with run() as (app, _pilot):
        assert "Sign out" not in [c.title for c in app_commands(app)]
