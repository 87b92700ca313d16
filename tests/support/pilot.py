"""Driving the real app on the demo agent from a script: tests, screenshots, benchmarks.

`demo_app` builds an `AcpApp` on the built-in demo agent with no delays, no saved sessions and
history, permission rules and workspace all in places the caller chooses; the helpers wait for
what a person would wait for (the session to open, the turn to end, the dialog to appear).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from textual.pilot import Pilot

from acp_tui.config import DEMO_COMMAND as DEMO_AGENT
from acp_tui.config import Config, Startup, demo_agent
from acp_tui.conversation.conversation import Conversation
from acp_tui.session.options import ClientOptions
from acp_tui.ui.app import AcpApp
from acp_tui.ui.conversation import ConversationView
from acp_tui.ui.widgets.markdown_view import MarkdownView
from acp_tui.ui.widgets.permission_panel import PermissionPanel

DEMO_FILES = {
    "README.md": "# Demo workspace\n\nA small project for the acp-tui demo agent.\n",
    "app.py": 'def greet(name):\n    print("Hello " + name)\n\n\ngreet("world")\n',
    "pyproject.toml": '[project]\nname = "demo"\nversion = "0.1.0"\n',
}


def demo_workspace(path: Path) -> Path:
    """A small workspace for the demo agent to read, edit and run commands in."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in DEMO_FILES.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


def demo_app(
    workspace: Path,
    state: Path,
    *,
    speed: float = 0,
    protocol_version: int = 1,
    permission: str = "ask",
    argv: list[str] | None = None,
    record: bool = False,
    resume: str | None = None,
    fork: bool = False,
) -> AcpApp:
    """The app on the demo agent in `workspace`; history and rules kept under `state`. With
    `record`, conversations are recorded (in the data directory) as `acp-tui` does; with
    `resume`, the session with that id is reopened (`acp-tui --resume`; recorded or not, as
    `record` says), or forked with `fork` (`--resume ID --fork`)."""
    command = argv or [*DEMO_AGENT, "--speed", str(speed), "--no-persist"]
    options = ClientOptions(cwd=workspace, protocol_version=protocol_version)
    startup = None
    if record or resume is not None:
        agent = demo_agent()
        agent.command = command
        startup = Startup(
            Config(state / "config.toml"),
            agent,
            permission,  # type: ignore[arg-type]
            resume=resume,
            fork=fork,
            record=record,
        )
    return AcpApp(
        command,
        options,
        permission=permission,
        history_dir=state / "history",
        config_dir=state / "config",
        startup=startup,
    )


async def wait_started(app: AcpApp, pilot: Pilot[int], timeout: float = 15) -> None:
    await asyncio.wait_for(app.started.wait(), timeout)
    await pilot.pause()


async def wait_until(pilot: Pilot[int], condition: object, timeout: float = 15) -> None:
    """Pause until `condition()` is true; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not get there in time")
        await pilot.pause(0.02)


async def wait_idle(app: AcpApp, pilot: Pilot[int], timeout: float = 15) -> None:
    """Until no turn runs, nothing is queued, and every streamed text is on screen."""

    def idle() -> bool:
        chat = app.chat
        if app.session is None or app.session.busy or chat.queue or chat.sending:
            return False
        return all(view.settled for view in chat.query(MarkdownView))

    await wait_until(pilot, idle, timeout)
    await pilot.pause()


async def wait_permission(app: AcpApp, pilot: Pilot[int], timeout: float = 15) -> None:
    """Until a permission request is shown and takes answers: it has the keys, and its key
    guard is over."""

    def answerable() -> bool:
        panel = app.chat.query_one_optional(PermissionPanel)  # mounted when first asked
        if panel is None or not panel.is_mounted:
            return False
        return bool(panel.queue) and panel.has_focus and not panel.guard.armed

    await wait_until(pilot, answerable, timeout)
    await pilot.pause()


async def wait_question(app: AcpApp, pilot: Pilot[int], timeout: float = 15) -> None:
    """Until the agent's question (an elicitation) is on screen and its first field has the
    keys (the panel's key guard is over)."""
    from acp_tui.ui.widgets.elicitation_panel import ElicitationPanel

    def asked() -> bool:
        # Past its key guard: a field inside the panel has the keys, not the panel itself.
        panel = app.chat.query_one_optional(ElicitationPanel)  # mounted when first asked
        focused = app.focused
        if panel is None or focused is None:
            return False
        return panel.current is not None and panel in focused.ancestors

    await wait_until(pilot, asked, timeout)


async def send(app: AcpApp, pilot: Pilot[int], text: str) -> None:
    """Type `text` into the prompt and press Enter."""
    from acp_tui.ui.widgets.prompt_input import PromptInput

    prompt = app.chat.query_one(PromptInput)
    prompt.focus()
    prompt.set_text(text)
    await pilot.press("enter")


async def new_conversation(app: AcpApp, pilot: Pilot[int], typed: str = "") -> None:
    """Ctrl+N, type `typed` into the agent picker's filter, Enter: the highlighted agent (the
    current one when nothing is typed) starts in a new conversation. Until its session is
    open (or it failed to start)."""
    from acp_tui.ui.screens.agent_picker import AgentPickerScreen

    opened = len(app.conversations)
    await pilot.press("ctrl+n")
    await wait_until(pilot, lambda: isinstance(app.screen, AgentPickerScreen))
    if typed:
        await pilot.press(*typed)
    await pilot.press("enter")
    await wait_until(pilot, lambda: len(app.conversations) > opened)
    await wait_started(app, pilot)


async def choose_command(app: AcpApp, pilot: Pilot[int], title: str) -> None:
    """Ctrl+P, type `title`, Enter once the palette offers it first (it searches as it is
    typed into, in a worker)."""
    from textual.command import CommandList

    def offered() -> bool:
        found = app.screen.query(CommandList)
        first = found.first().highlighted_option if found else None
        return first is not None and title in str(first.prompt)

    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*title)
    await wait_until(pilot, offered)
    await pilot.press("enter")


def core(shown: AcpApp | ConversationView) -> Conversation:
    """The `Conversation` behind the app's shown conversation, or behind `shown` (once its agent
    started): what a test reaches past the screen for (its client, its policy)."""
    view = shown.conversation if isinstance(shown, AcpApp) else shown
    assert view.conversation is not None, "the conversation's agent has not started"
    return view.conversation
