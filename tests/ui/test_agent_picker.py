"""The agent picker (Ctrl+N) against a registry served on 127.0.0.1: the rows and their order,
filtering, one picker at a time, a registry binary installed with its progress and really
started in the new conversation (and restarted there), a failed or cancelled install said
plainly, an npx agent given time to fetch its package, and an agent that requires sign-in
signing in, in a terminal, with its own command and env."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import shutil
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import OptionList, ProgressBar, Static

from acp_tui.config import AgentConfig, Config, demo_agent
from acp_tui.records import RecordStore
from acp_tui.registry.choices import local_choices, registry_choices
from acp_tui.registry.index import decode_index
from acp_tui.registry.source import LoadedRegistry
from acp_tui.ui.app import AcpApp
from acp_tui.ui.command_palette import app_commands
from acp_tui.ui.conversation import ConversationView
from acp_tui.ui.screens import SignInScreen
from acp_tui.ui.screens import agent_picker as picker_module
from acp_tui.ui.screens.agent_picker import AgentPickerScreen
from acp_tui.ui.widgets.session_header import SessionHeader
from tests.support.pilot import (
    core,
    demo_app,
    demo_workspace,
    send,
    wait_idle,
    wait_started,
    wait_until,
)
from tests.support.registry import (
    Served,
    auth_agent_archive,
    binary,
    demo_agent_archive,
    entry,
    index,
    serve,
)
from tests.support.ui import message_texts

NOISE = 200_000
"""Bytes of noise in the tiny agent's archive: paced, its download takes a moment to watch."""
NPX = {"npx": {"package": "@acme/agent@1.2.3"}}


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    """The registry on 127.0.0.1, a config with one agent, and a PATH without npx."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("ACP_TUI_DEMO_SPEED", "0")
    tools = tmp_path / "tools"  # git (for checkpoints) but no npx
    tools.mkdir()
    git = shutil.which("git")
    if git:
        (tools / "git").symlink_to(git)
    monkeypatch.setenv("PATH", str(tools))
    (tmp_path / "config" / "acp-tui").mkdir(parents=True)
    (tmp_path / "config" / "acp-tui" / "config.toml").write_text(
        f'[agents.echo]\ncommand = ["{sys.executable}", "-m", "acp_tui.demo"]\n'
        'description = "the demo, configured"\n'
    )
    with serve() as served:
        tiny = demo_agent_archive(padding=NOISE)
        served.files["/tiny.tar.gz"] = tiny
        served.files["/broken.tar.gz"] = tiny
        served.files["/authy.tar.gz"] = auth_agent_archive()
        served.files["/registry.json"] = index(
            entry("tiny", binary(served, "/tiny.tar.gz", "./bin/tiny-agent")),
            entry("broken", binary(served, "/broken.tar.gz", "bin/tiny-agent", sha256="0" * 64)),
            entry("gone", binary(served, "/gone.tar.gz", "bin/tiny-agent")),
            entry("acme", NPX),
            entry("echo", NPX),  # the configured echo wins
            entry(
                "authy",
                binary(
                    served,
                    "/authy.tar.gz",
                    "bin/auth-agent",
                    env={"AUTH_AGENT_HOME": str(tmp_path / "auth-home")},
                ),
            ),
            {"id": "malformed"},
        )
        monkeypatch.setenv("ACP_TUI_REGISTRY_URL", served.url("/registry.json"))
        yield served


@contextlib.asynccontextmanager
async def running(tmp_path: Path, record: bool = False) -> AsyncIterator[tuple[AcpApp, Pilot]]:
    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state", record=record)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        yield app, pilot


async def open_picker(app: AcpApp, pilot: Pilot) -> AgentPickerScreen:
    """Ctrl+N, until the registry's rows are in."""
    picker = await open_picker_only(app, pilot)
    await wait_until(pilot, lambda: picker.registry)
    return picker


async def open_picker_only(app: AcpApp, pilot: Pilot) -> AgentPickerScreen:
    """Ctrl+N, until the picker is up (its registry rows may be still loading)."""
    await pilot.press("ctrl+n")
    await wait_until(pilot, lambda: isinstance(app.screen, AgentPickerScreen))
    picker = app.screen
    assert isinstance(picker, AgentPickerScreen)
    return picker


def rows(picker: AgentPickerScreen) -> list[str]:
    """What the list shows, one string per line (headings too)."""
    options = picker.query_one(OptionList).options
    return [" ".join(str(option.prompt).split()) for option in options]


def said(picker: AgentPickerScreen, selector: str) -> str:
    return str(picker.query_one(selector, Static).content)


async def test_ctrl_n_lists_this_agent_configured_demo_then_the_registry(
    tmp_path: Path, registry: Served
) -> None:
    async with running(tmp_path) as (app, pilot):
        picker = await open_picker(app, pilot)
        assert [(c.group, c.id) for c in picker.shown] == [
            ("current", app.conversation.agent.name),
            ("configured", "echo"),
            ("demo", "demo"),
            ("registry", "acme"),
            ("registry", "authy"),
            ("registry", "broken"),
            ("registry", "gone"),
            ("registry", "tiny"),
        ]
        lines = rows(picker)
        assert lines[0] == (
            "● acp-tui demo agent 0.1.0 same agent the agent of this conversation, in a new process"
        )
        assert lines[1] == "Configured"
        assert lines[2] == "echo configured the demo, configured"
        assert lines[3] == "Demo agent built in the built-in demo agent"
        assert lines[4] == "ACP Registry"
        assert lines[5] == "Acme 1.0.0 needs npx the acme agent"
        assert lines[-1] == "Tiny 1.0.0 installs on Enter the tiny agent"
        source = said(picker, "#picker-source")
        assert source == f"Registry: {registry.url('/registry.json')}, fetched just now"
        assert "1 entry of the index could not be read" in said(picker, "#picker-problems")

        await pilot.press("down", "down", "down", "enter")  # Acme: npx is missing
        error = said(picker, "#picker-error")
        assert "npx is not on PATH: install Node.js (https://nodejs.org/)" in error
        assert app.screen is picker

        await pilot.press(*"TIN")  # any case; name, id or description
        assert [c.id for c in picker.shown] == ["tiny"]
        assert rows(picker) == ["ACP Registry", "Tiny 1.0.0 installs on Enter the tiny agent"]
        await pilot.press(*"zzz")
        assert rows(picker) == ["No agent matches 'tinzzz'."]
        await pilot.press("enter")  # nothing to start

        # One picker at a time, by Ctrl+N or by the palette (which bypasses check_action).
        await pilot.press("ctrl+n")
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        assert "New conversation" not in [c.title for c in app_commands(app)]
        app.action_new_conversation()  # as the palette's command would
        await pilot.press("escape")
        await pilot.pause()
        assert [s for s in app.screen_stack if isinstance(s, AgentPickerScreen)] == [picker]
        assert app.screen is picker

        await pilot.press("escape")
        assert not app.picker_open
        assert "New conversation" in [c.title for c in app_commands(app)]
        assert len(app.conversations) == 1


async def test_a_registry_binary_installs_with_progress_and_runs_in_the_new_conversation(
    tmp_path: Path, registry: Served
) -> None:
    registry.pace = 0.02
    archive = len(registry.files["/tiny.tar.gz"])
    async with running(tmp_path) as (app, pilot):
        first = app.conversation
        picker = await open_picker(app, pilot)
        await pilot.press(*"tiny", "enter")
        bar = picker.query_one(ProgressBar)
        await wait_until(pilot, lambda: bar.total == archive and (bar.progress or 0) > 0)
        assert picker.has_class("-installing") and bar.display
        assert said(picker, "#picker-source").startswith("Downloading Tiny 1.0.0 into ")
        await wait_until(pilot, lambda: len(app.conversations) == 2)
        await wait_started(app, pilot)

        tiny = app.conversation
        folder = tmp_path / "cache" / "acp-tui" / "agents" / "tiny" / "1.0.0"
        assert tiny.agent.name == "tiny"
        assert tiny.agent.command == [str(folder / "bin" / "tiny-agent")]
        assert len(list(folder.parent.glob(".approved-*"))) == 1  # installed, so approved
        assert core(tiny).client is not None and core(tiny).client.argv == tiny.agent.command
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        assert any("acp-tui demo agent" in text for text in message_texts(app))

        # Ctrl+R restarts this conversation's own agent, not the first one's.
        assert core(tiny).client.process is not None
        core(tiny).client.process.process.kill()
        await wait_until(pilot, lambda: not tiny.agent_running)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: tiny.agent_running and tiny.session is not None)
        assert core(tiny).client.process.argv[0] == str(folder / "bin" / "tiny-agent")
        assert core(first).client is not None and core(first).client.argv[0] == sys.executable

        # Installed now: listed so (from the first conversation: in this one, the same agent).
        await pilot.press("alt+1")
        picker = await open_picker(app, pilot)
        assert any(line.startswith("Tiny 1.0.0 installed") for line in rows(picker))
    assert [path for path, _ in registry.requests].count("/tiny.tar.gz") == 1


async def test_a_failed_install_is_said_plainly_and_the_picker_stays(
    tmp_path: Path, registry: Served
) -> None:
    async with running(tmp_path) as (app, pilot):
        picker = await open_picker(app, pilot)
        await pilot.press(*"broken", "enter")
        await wait_until(pilot, lambda: said(picker, "#picker-error"))
        error = said(picker, "#picker-error")
        digest = hashlib.sha256(registry.files["/broken.tar.gz"]).hexdigest()
        assert error.startswith("Broken was not installed: the download's checksum is wrong")
        assert digest in error and "nothing was installed" in error
        assert not picker.has_class("-installing")
        assert said(picker, "#picker-source").startswith("Registry: ")

        await pilot.press(*["backspace"] * 6, *"gone", "enter")
        await wait_until(pilot, lambda: "Gone was not installed" in said(picker, "#picker-error"))
        assert "could not download" in said(picker, "#picker-error")
        assert "HTTP Error 404" in said(picker, "#picker-error")
        assert app.screen is picker and len(app.conversations) == 1
        agents = tmp_path / "cache" / "acp-tui" / "agents"
        assert not (agents / "broken" / "1.0.0").exists()
        assert not list(agents.glob("*/.approved*"))  # chosen, but never installed

        await pilot.press(*["backspace"] * 4, "enter")  # the same agent still starts
        await wait_until(pilot, lambda: len(app.conversations) == 2)
        await wait_started(app, pilot)
        assert app.session is not None


def leftovers(tmp_path: Path) -> list[str]:
    """Install directories under way in the cache (a download still running)."""
    return [p.name for p in (tmp_path / "cache").rglob(".install-*")]


async def test_esc_cancels_a_download_and_so_does_quitting(
    tmp_path: Path, registry: Served
) -> None:
    registry.pace = 0.2  # 13 chunks of 16 kB: ~3 s if nothing stopped it
    async with running(tmp_path) as (app, pilot):
        picker = await open_picker(app, pilot)
        await pilot.press(*"tiny", "enter")
        bar = picker.query_one(ProgressBar)
        await wait_until(pilot, lambda: (bar.progress or 0) > 0)
        await pilot.press("escape")
        await wait_until(pilot, lambda: said(picker, "#picker-error"), timeout=1)
        assert said(picker, "#picker-error") == "Tiny was not installed: cancelled"
        assert app.screen is picker and not picker.has_class("-installing")
        assert said(picker, "#picker-source").startswith("Registry: ")
        await wait_until(pilot, lambda: not leftovers(tmp_path), timeout=1)

        await pilot.press("enter")  # again, then quit during it
        await wait_until(pilot, lambda: picker.has_class("-installing") and leftovers(tmp_path))
        await pilot.press("ctrl+q")
    quit_at = time.monotonic()
    while leftovers(tmp_path) and time.monotonic() - quit_at < 1:
        time.sleep(0.05)
    assert not leftovers(tmp_path)  # the download thread stopped, its directory gone


async def test_any_failure_of_an_install_or_the_registry_is_said(
    tmp_path: Path, registry: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    index_read = asyncio.Event()
    download = threading.Event()
    real_load = picker_module.load_registry_async

    async def slow_load() -> LoadedRegistry:
        await index_read.wait()
        return await real_load()

    def failing_install(*args: object, **kwargs: object) -> None:
        download.wait(5)
        raise RuntimeError("the disk caught fire")

    monkeypatch.setattr(picker_module, "load_registry_async", slow_load)
    monkeypatch.setattr(picker_module, "install_binary", failing_install)
    tiny = next(c for c in registry_choices(decode_index(registry.files["/registry.json"]), set())
                if c.id == "tiny")  # fmt: skip
    async with running(tmp_path) as (app, pilot):
        # An install started while the registry still loads, which then ends first.
        picker = AgentPickerScreen([tiny], set())
        app.push_screen(picker)
        await wait_until(pilot, lambda: app.screen is picker and picker.query("#picker-source"))
        assert said(picker, "#picker-source") == "Loading the ACP Registry…"
        await pilot.press("enter")
        await wait_until(pilot, lambda: picker.has_class("-installing"))
        index_read.set()
        await wait_until(pilot, lambda: picker.registry)
        download.set()
        await wait_until(pilot, lambda: said(picker, "#picker-error"))
        error = said(picker, "#picker-error")
        assert error == "Tiny was not installed: RuntimeError('the disk caught fire')"
        assert not picker.has_class("-installing") and picker.installing is None
        assert said(picker, "#picker-source").startswith("Registry: ")  # not "Loading…"
        picker.dismiss(None)

        async def broken_load() -> LoadedRegistry:
            raise KeyError("etag")

        monkeypatch.setattr(picker_module, "load_registry_async", broken_load)
        picker = await open_picker_only(app, pilot)
        await wait_until(pilot, lambda: "could not be read" in said(picker, "#picker-source"))
        assert said(picker, "#picker-source") == "The ACP Registry could not be read: 'etag'"
        assert [c.group for c in picker.shown] == ["current", "configured", "demo"]


async def test_an_npx_agent_says_it_is_fetching_and_has_time_to(
    tmp_path: Path, registry: Served
) -> None:
    """A first `npx -y` downloads the package before the agent answers: longer than acp-tui's
    start-up timeout (here made 0.2 s, as 30 s is to a large package)."""
    npx = tmp_path / "tools" / "npx"  # sleeps as it fetches, then runs the demo
    python = sys.executable  # PATH has no `sleep`: the fake is Python itself
    npx.write_text(
        f"#!{python}\nimport os, time\ntime.sleep(0.5)\n"
        f"os.execv({python!r}, [{python!r}, '-m', 'acp_tui.demo'])\n"
    )
    npx.chmod(0o755)
    async with running(tmp_path) as (app, pilot):
        app.options.startup_timeout = 0.2
        await open_picker(app, pilot)
        await pilot.press(*"acme", "enter")
        await wait_until(pilot, lambda: len(app.conversations) == 2)
        acme = app.conversation
        assert acme.agent.command == ["npx", "-y", "--", "@acme/agent@1.2.3"]
        header = app.chat.query_one(SessionHeader)
        await wait_until(pilot, lambda: "fetching" in header.agent, timeout=3)
        assert header.agent == "npx is fetching @acme/agent@1.2.3… (first run only)"
        await wait_started(app, pilot)
        assert acme.agent_running and acme.session is not None, header.agent
        assert header.agent.startswith("acp-tui demo agent")
        assert acme.options.startup_timeout == 300


async def test_a_picked_agent_signs_in_in_a_terminal_with_its_command_and_env(
    tmp_path: Path, registry: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "auth-home"  # only the registry entry's env names it
    home.mkdir()
    monkeypatch.delenv("AUTH_AGENT_HOME", raising=False)
    monkeypatch.delenv("AUTH_AGENT_KEY", raising=False)
    ran: list[list[str]] = []
    async with running(tmp_path, record=True) as (app, pilot):
        app.options.terminal_auth = True  # as `acp-tui` runs the TUI
        # The test's terminal cannot be handed over: the login runs with its output captured.
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
        runner = ConversationView.run_terminal

        async def run_terminal(view: ConversationView, argv: list[str], env: dict[str, str]) -> int:
            ran.append(argv)
            return await runner(view, argv, env)

        monkeypatch.setattr(ConversationView, "run_terminal", run_terminal)
        await open_picker(app, pilot)
        await pilot.press(*"authy", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SignInScreen))
        dialog = app.screen
        assert isinstance(dialog, SignInScreen)
        assert [(c.id, c.type) for c in dialog.choices] == [
            ("token", "agent"),
            ("login", "terminal"),
            ("api-key", "env_var"),
        ]
        await pilot.press("down", "enter")  # Log in (terminal)
        await wait_started(app, pilot)
        assert app.session is not None
        await send(app, pilot, "hi")
        await wait_idle(app, pilot)
        assert "signed in: hi" in message_texts(app)
        command = str(tmp_path / "cache" / "acp-tui" / "agents" / "authy" / "1.0.0" / "bin")
        assert ran == [[f"{command}/auth-agent", "--login"]]
        assert (home / "logged-in").exists()
        assert app.agent_name == "authy"
        assert app.conversations[0].session is not None  # the demo's, untouched
    store = RecordStore.open()
    assert store is not None and store.remembered_auth("authy") == "login"
    store.close()


async def test_a_malformed_index_is_said_and_the_snapshot_listed(
    tmp_path: Path, registry: Served
) -> None:
    registry.files["/registry.json"] = b"<html>not json</html>"
    async with running(tmp_path) as (app, pilot):
        picker = await open_picker(app, pilot)
        source = said(picker, "#picker-source")
        assert source.startswith("Registry: the snapshot shipped with acp-tui, taken 2026-02-07")
        assert "the registry could not be reached: not a registry index" in source
        assert "codex-acp" in [c.id for c in picker.shown]
        await pilot.press("enter")  # the picker still works: the same agent again
        await wait_until(pilot, lambda: len(app.conversations) == 2)
        await wait_started(app, pilot)
        assert app.session is not None


def test_each_row_says_what_starting_it_takes(tmp_path: Path) -> None:
    served = Served(base="http://127.0.0.1:9")
    data = index(
        entry("newer", binary(served, "/n.tar.gz", "bin/n"), version="2.0.0"),
        entry("elsewhere", {"binary": {"plan9-mips": {"archive": "http://x/a", "cmd": "a"}}}),
        entry("pyagent", {"uvx": {"package": "py-agent"}}),
    )
    (tmp_path / "agents" / "newer" / "1.0.0").mkdir(parents=True)
    found = {"uvx": "/opt/bin/uvx"}
    rows = registry_choices(decode_index(data), set(), tmp_path, found.get)
    assert [(c.id, c.status, c.readiness) for c in rows] == [
        ("elsewhere", "no build here", "missing"),
        ("newer", "updates on Enter (has 1.0.0)", "install"),
        ("pyagent", "runs with uvx", "ready"),
    ]
    assert rows[0].problem is not None and "has no build for" in rows[0].problem
    assert rows[2].agent is not None and rows[2].agent.command == ["uvx", "--", "py-agent"]

    config = Config(tmp_path / "config.toml")
    config.agents = {"demo": demo_agent(), "ghost": AgentConfig("ghost", ["no-such-program"])}
    current = AgentConfig("x", ["x"], adhoc=True)
    local = local_choices(current, config, "X agent", "3.1")
    assert [(c.group, c.name, c.version, c.status, c.readiness) for c in local] == [
        ("current", "X agent", "3.1", "same agent", "ready"),
        ("configured", "ghost", "", "not on PATH", "missing"),
        ("demo", "Demo agent", "", "built in", "ready"),
    ]
    assert local[1].problem == f"no-such-program is not on PATH (see the config: {config.path})"
