"""Regenerate `screenshots/*.svg` from the real app on the built-in demo agent.

    python scripts/screenshots.py            # every scene
    python scripts/screenshots.py plan tour  # some of them

Each scene starts a fresh app and demo agent (no delays) in a scratch workspace, drives it the
way a person would, and saves what the screen shows. The SVGs keep their spaces for viewers
that collapse them (rsvg), so `rsvg-convert` renders them faithfully to PNG.
"""

from __future__ import annotations

import os

# Before Textual is imported: a spinner frozen mid-turn makes screenshots repeatable.
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

import asyncio
import contextlib
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from unittest.mock import patch

# The tests' driver of the real app (tests/support/pilot.py) drives it here too.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.pilot import Pilot

from acp_tui.config import DEMO_COMMAND as DEMO_AGENT
from acp_tui.demo.store import SessionRecord, SessionStore
from acp_tui.demo.wire import text_block
from acp_tui.ui.app import AcpApp
from acp_tui.ui.widgets.permission_panel import PermissionPanel
from acp_tui.ui.widgets.prompt_input import PromptInput
from acp_tui.ui.widgets.queued_prompts import QueuedPrompts
from acp_tui.ui.widgets.transcript import Transcript
from tests.agents.hostile import AGENTS as AGENTS_FOR_TESTS
from tests.remote.connect_support import remote_app
from tests.remote.serve_support import Served
from tests.support.checkpoints import staging_held
from tests.support.pilot import (
    demo_app,
    demo_workspace,
    new_conversation,
    send,
    wait_idle,
    wait_permission,
    wait_question,
    wait_started,
    wait_until,
)

OUT = Path(__file__).resolve().parent.parent / "screenshots"
SIZE = (120, 36)
SIZES = {"image": (120, 44)}
"""Scenes that need more rows than the others."""
Scene = Callable[[AcpApp, Pilot[int]], Awaitable[None]]


async def _top(app: AcpApp, pilot: Pilot[int]) -> None:
    transcript = app.chat.query_one(Transcript)
    transcript.scroll_home(animate=False, immediate=True)
    await pilot.pause()


async def welcome(app: AcpApp, pilot: Pilot[int]) -> None:
    await pilot.pause(0.2)


async def markdown(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "markdown")
    await wait_idle(app, pilot)
    await _top(app, pilot)


async def markdown_end(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "markdown")
    await wait_idle(app, pilot)


async def think(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "think")
    await wait_idle(app, pilot)
    await _top(app, pilot)


async def plan(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "plan")
    await wait_idle(app, pilot)
    await _top(app, pilot)


async def tools(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "tools")
    await wait_idle(app, pilot)


async def diff(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "/edit app.py")
    await wait_permission(app, pilot)


async def diff_done(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "/edit app.py")
    await wait_permission(app, pilot)
    await pilot.press("a")
    await wait_idle(app, pilot)


async def permission(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "permission")
    await wait_permission(app, pilot)


async def terminal(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "/run printf 'line %s\\n' 1 2 3 && echo done")
    await wait_permission(app, pilot)
    await pilot.press("a")
    await wait_idle(app, pilot)


async def reject_reason(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "/edit app.py")
    await wait_permission(app, pilot)
    await pilot.press("r")
    await pilot.pause(0.2)
    await pilot.press(*"keep the old signature, callers rely on it")
    await pilot.pause(0.2)


async def elicitation(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "ask")
    await wait_question(app, pilot)
    await pilot.press(*"My App")
    await pilot.press("ctrl+s")  # the name breaks its pattern: the form says why
    await pilot.pause(0.2)


async def elicitation_url(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "signin")
    await wait_question(app, pilot)


async def agent_terminal(app: AcpApp, pilot: Pilot[int]) -> None:
    """`bash`: the agent runs a command itself and streams it in tool call `_meta`, caught
    while it runs (the output comes every 0.2 s)."""

    def streaming() -> bool:
        session = app.session
        return session is not None and any(
            b"step 3 of 5" in terminal.output for terminal in session.state.terminals.values()
        )

    await send(app, pilot, "bash")
    await wait_until(pilot, streaming)
    await pilot.pause()


async def cancelled(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "slow 30")
    await wait_until(pilot, lambda: app.session is not None and app.session.busy)
    await pilot.pause(0.3)
    app.chat.query_one("#prompt").insert("my draft survives the cancel")  # type: ignore[attr-defined]
    await pilot.press("ctrl+c")
    await wait_idle(app, pilot)


async def queued(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "slow 30")
    await wait_until(pilot, lambda: app.session is not None and app.session.busy)
    await send(app, pilot, "markdown")
    await send(app, pilot, "plan")
    await pilot.pause(0.3)


async def held(app: AcpApp, pilot: Pilot[int]) -> None:
    """A prompt waiting for its checkpoint (the first of a big workspace copies every file):
    the checkpoint is held until the screen is taken."""
    await send(app, pilot, "hello")
    await wait_idle(app, pilot)
    holding = contextlib.ExitStack()
    holding.enter_context(staging_held())
    await send(app, pilot, "Move the parser into a module of its own")
    queue = app.chat.query_one(QueuedPrompts)
    await wait_until(pilot, lambda: queue.option_count == 1)
    await pilot.pause(0.1)
    asyncio.get_running_loop().call_soon(holding.close)  # after the screen is taken (no await)


async def settings(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "hello")
    await wait_idle(app, pilot)
    await pilot.press("f2")
    await pilot.pause(0.2)


async def commands(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "help")
    await wait_idle(app, pilot)
    await pilot.press("/", "e")
    await pilot.pause(0.2)


async def inspector(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "plan")
    await wait_idle(app, pilot)
    await pilot.press("f12")
    await pilot.pause(0.2)


async def keys(app: AcpApp, pilot: Pilot[int]) -> None:
    await pilot.press("f1")
    await pilot.pause(0.2)


async def tour(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "tour")
    panel = app.chat.query_one(PermissionPanel)
    while True:  # allow each request once it takes answers (its key guard over), until the end
        await wait_until(
            pilot,
            lambda: (panel.queue and not panel.guard.armed) or not app.session.busy,  # type: ignore[union-attr]
            timeout=30,
        )
        if not panel.queue:
            break
        await pilot.press("a")
    await wait_idle(app, pilot, timeout=30)


async def conversations(app: AcpApp, pilot: Pilot[int]) -> None:
    await send(app, pilot, "/title Refactor the parser")
    await wait_idle(app, pilot)
    await new_conversation(app, pilot)
    await send(app, pilot, "/edit app.py")  # waits for you, in the background soon
    await wait_permission(app, pilot)
    await new_conversation(app, pilot)
    await send(app, pilot, "plan")
    await wait_idle(app, pilot)


async def inbox(app: AcpApp, pilot: Pilot[int]) -> None:
    """Four conversations: one done while another was shown, one asking for permission, one
    asking a question; the fourth shown."""
    for title in ("Refactor the parser", "Fix the tests", "Release notes"):
        await send(app, pilot, f"/title {title}")
        await wait_idle(app, pilot)
        await new_conversation(app, pilot)
    await send(app, pilot, "/title Docs")
    await wait_idle(app, pilot)
    await send(app, pilot, "plan")
    await wait_idle(app, pilot)
    # Sent from the fourth, to the others: each has news, or asks, while the user looks away.
    for view, prompt in zip(app.conversations, ("hello", "/edit app.py", "ask"), strict=False):
        assert view.chat is not None
        view.chat.query_one(PromptInput).post_message(PromptInput.Submitted(prompt))
    needs = ["done", "permission", "question", None]
    await wait_until(pilot, lambda: [view.need for view in app.conversations] == needs)
    await pilot.pause(0.2)


EARLIER_SESSIONS = [
    ("Refactor the parser", "2026-11-24T16:05:00Z"),
    ("Why does the build fail on CI?", "2026-11-23T10:42:00Z"),
    ("Add a --json flag to the export command", "2026-11-20T09:13:00Z"),
]


def _earlier_sessions(scratch: Path, workspace: Path) -> list[str]:
    """The demo agent with a few sessions of this workspace on file (it lists them)."""
    store = SessionStore(scratch / "demo-sessions")
    for number, (title, updated_at) in enumerate(EARLIER_SESSIONS):
        prompt = {"type": "user", "messageId": f"u{number}", "content": [text_block(title)]}
        record = SessionRecord(f"sess_{number}", str(workspace), [], title, updated_at)
        record.history = [prompt]  # the demo lists sessions that have one
        store.save(record)
    return [*DEMO_AGENT, "--speed", "0", "--data-dir", str(scratch / "demo-sessions")]


async def sessions(app: AcpApp, pilot: Pilot[int]) -> None:
    """Ctrl+O, and a first Delete on one of the sessions: it asks before deleting."""
    from textual.widgets import OptionList

    from acp_tui.ui.screens import SessionsScreen

    await send(app, pilot, "/title Mentions with spaces")
    await wait_idle(app, pilot)
    await pilot.press("ctrl+o")
    await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
    await pilot.pause()
    app.screen.query_one(OptionList).highlighted = 2
    await pilot.press("delete")
    await pilot.pause(0.2)


async def fork(app: AcpApp, pilot: Pilot[int]) -> None:
    """A turn, then "Fork the session" (Ctrl+P): the history stays, a notice says what the
    fork is, and the next prompt goes to the fork."""
    await send(app, pilot, "/title Release notes")
    await wait_idle(app, pilot)
    await send(app, pilot, "plan")
    await wait_idle(app, pilot)
    source = app.session
    app.action_fork()
    await wait_until(pilot, lambda: app.session is not source)
    await send(app, pilot, "hello")
    await wait_idle(app, pilot)
    await pilot.pause(0.2)


async def picker(app: AcpApp, pilot: Pilot[int]) -> None:
    """Ctrl+N on the registry snapshot acp-tui ships (never the network), a configured agent."""
    from acp_tui.ui.screens.agent_picker import AgentPickerScreen

    scratch = app.options.cwd.parent
    config = scratch / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        '[agents.reviewer]\ncommand = ["python3", "-m", "acp_tui.demo"]\n'
        'description = "the demo agent, configured as a code reviewer"\n'
    )
    private = {
        "ACP_TUI_REGISTRY_URL": "http://127.0.0.1:9/registry.json",  # closed: the snapshot
        "XDG_CACHE_HOME": str(scratch / "cache"),
        "XDG_CONFIG_HOME": str(scratch / "config"),
    }
    with patch.dict(os.environ, private):
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.screen, AgentPickerScreen))
        await wait_until(pilot, lambda: app.screen.registry)  # type: ignore[attr-defined]
    await pilot.pause(0.2)


CHANGING_COMMAND = (
    '/run sed -i \'s/print("Hello " + name)/print(f"Hello, {name}!")/\' app.py'
    " && printf '# Changelog\\n\\n- greet() says hello with a comma\\n' > CHANGELOG.md"
    " && rm pyproject.toml"
)


async def _changing_turns(app: AcpApp, pilot: Pilot[int]) -> None:
    """Two turns that change files: an edit through acp-tui, then a command that edits,
    creates and deletes files on its own."""
    await send(app, pilot, "/edit app.py")
    await wait_permission(app, pilot)
    await pilot.press("a")
    await wait_idle(app, pilot)
    await send(app, pilot, CHANGING_COMMAND)
    await wait_permission(app, pilot)
    await pilot.press("a")
    await wait_idle(app, pilot)


async def changes_line(app: AcpApp, pilot: Pilot[int]) -> None:
    await _changing_turns(app, pilot)


async def _changes_view(app: AcpApp, pilot: Pilot[int]) -> None:
    from acp_tui.ui.screens.changes import ChangesScreen
    from acp_tui.ui.widgets.diff_view import DiffView

    await _changing_turns(app, pilot)
    await pilot.press("f3")
    await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
    await wait_until(pilot, lambda: bool(app.screen.query(DiffView)))
    await pilot.pause(0.2)


async def changes(app: AcpApp, pilot: Pilot[int]) -> None:
    await _changes_view(app, pilot)
    await pilot.press("down")  # app.py: a line the command rewrote
    await pilot.pause(0.3)


async def rewind(app: AcpApp, pilot: Pilot[int]) -> None:
    from acp_tui.ui.screens.rewind import RewindScreen

    await _changes_view(app, pilot)
    # The user edits the new changelog after the turn: the rewind asks about it.
    (app.options.cwd / "CHANGELOG.md").write_text("# Changelog\n\n- my own note\n")
    await pilot.press("R")
    await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
    await pilot.pause(0.2)


async def rewind_continue(app: AcpApp, pilot: Pilot[int]) -> None:
    """`c` with a file changed after the turn: keep it, or rewind it too, before going on."""
    await rewind(app, pilot)
    await pilot.press("c")
    await pilot.pause(0.2)


GREET = '''"""Greetings for the command line."""

import sys


def greet(name):
    print("Hello " + name)


def farewell(name):
    print("Goodbye " + name)


def shout(name):
    print(("Hello " + name).upper())


def main(argv):
    if len(argv) < 2:
        print("usage: greet NAME")
        return 2
    greet(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''
REVIEWED_COMMAND = (
    '/run sed -i -e \'s/print("Hello " + name)/print(f"Hello, {name}!")/\''
    ' -e \'s/print(("Hello " + name).upper())/print(f"HELLO, {name.upper()}!")/\''
    " -e 's/sys.exit(main(sys.argv))/raise SystemExit(main(sys.argv))/' greet.py"
    " && printf '\\nRun `python greet.py NAME`.\\n' >> README.md"
)


def _greet(scratch: Path, workspace: Path) -> list[str]:
    (workspace / "greet.py").write_text(GREET)
    return [*DEMO_AGENT, "--speed", "0", "--no-persist"]


async def review(app: AcpApp, pilot: Pilot[int]) -> None:
    """A turn's hunks reviewed: the first accepted, the second rejected, the third next."""
    from acp_tui.ui.screens.changes import ChangesScreen

    await send(app, pilot, REVIEWED_COMMAND)
    await wait_permission(app, pilot)
    await pilot.press("a")
    await wait_idle(app, pilot)
    await pilot.press("f3")
    await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
    screen = app.screen
    assert isinstance(screen, ChangesScreen)
    await wait_until(pilot, lambda: screen.file is not None)
    while screen.file is not None and screen.file.path != "greet.py":
        await pilot.press("down")
    await wait_until(pilot, lambda: len(screen.hunks) == 3)
    await pilot.press("a", "x")
    await pilot.pause(0.3)


async def review_send(app: AcpApp, pilot: Pilot[int]) -> None:
    """`s`: the rejected hunks, and why, before they are reverted and the agent told."""
    from acp_tui.ui.screens.review import ReviewScreen

    await review(app, pilot)
    await pilot.press("x")
    await pilot.press("s")
    await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen))
    await pilot.press(*"keep sys.exit: the tests patch it")
    await pilot.pause(0.2)


async def image(app: AcpApp, pilot: Pilot[int]) -> None:
    """A pasted image path becomes a chip, the demo agent says what the image is and sends its
    own picture; a mentioned image shows its chip before it is sent. SVG cannot hold Kitty or
    Sixel pixels: the pictures are drawn with coloured half blocks (ACP_TUI_IMAGES=halfcell),
    which any true-colour terminal shows as well."""
    from textual import events

    from acp_tui.demo.picture import demo_png
    from acp_tui.ui.widgets.attachment_bar import AttachmentBar
    from acp_tui.ui.widgets.image_view import ImageView
    from acp_tui.ui.widgets.message import UserMessage
    from acp_tui.ui.widgets.prompt_input import PromptInput

    os.environ["ACP_TUI_IMAGES"] = "halfcell"
    try:
        workspace = app.chat.workspace
        (workspace / "sunset.png").write_bytes(demo_png(320, 200))
        (workspace / "logo.png").write_bytes(demo_png(64, 64))
        prompt = app.chat.query_one(PromptInput)
        bar = app.chat.query_one(AttachmentBar)
        prompt.post_message(events.Paste(str(workspace / "sunset.png")))
        await wait_until(pilot, lambda: len(bar.attachments) == 1)
        await send(app, pilot, "What is in this picture?")
        await wait_idle(app, pilot)
        views = list(app.chat.query(ImageView))
        await wait_until(pilot, lambda: all(view.drawn for view in views))
        prompt.set_text("and @logo.png?")  # a mention shows its chip as a pasted path does
        await wait_until(pilot, lambda: len(bar.mentioned) == 1)
        await pilot.pause(0.2)
        transcript = app.chat.query_one(Transcript)
        transcript.scroll_to_widget(app.chat.query_one(UserMessage), animate=False, top=True)
        await pilot.pause(0.2)
    finally:
        del os.environ["ACP_TUI_IMAGES"]


async def mentions(app: AcpApp, pilot: Pilot[int]) -> None:
    """`@app.py` goes with the prompt (its text embedded); a file outside the workspace is
    not sent, and the transcript says so."""
    workspace = app.chat.workspace
    (workspace.parent / "notes.txt").write_text("kept outside the workspace\n")
    await send(app, pilot, "compare @app.py with @../notes.txt")
    await wait_idle(app, pilot)
    await _top(app, pilot)


def _never_asks(scratch: Path, workspace: Path) -> list[str]:
    (workspace / "notes.md").write_text("# Notes\n\n- buy milk\n- call Ada\n")
    return AGENTS_FOR_TESTS["never-asks"].argv()


async def guard(app: AcpApp, pilot: Pilot[int]) -> None:
    """An agent that writes without asking: acp-tui asks instead, with the diff."""
    await send(app, pilot, r"write notes.md # Notes\n\n- buy oat milk\n- call Ada\n")
    await wait_permission(app, pilot)


async def reconnected(app: AcpApp, pilot: Pilot[int]) -> None:
    """A remote agent whose server died mid-turn and came back: said, and the session goes on."""
    server = _REMOTE[0]
    home = Path(tempfile.gettempdir()) / "acp-tui-demo"
    await send(app, pilot, "/slow 30")
    await wait_until(pilot, lambda: "⏳ 2/30" in _shown_text(app))
    server.process.kill()
    server.process.wait()
    await wait_until(pilot, lambda: "Reconnecting: " in _shown_text(app))
    _REMOTE[0] = _serve_remote(home, server.port)
    await wait_until(pilot, lambda: "Reconnected to" in _shown_text(app), timeout=60)
    await wait_idle(app, pilot)


def _shown_text(app: AcpApp) -> str:
    session = app.session
    if session is None:
        return ""
    return " ".join(
        getattr(item, "text", "") or getattr(item, "title", "") for item in session.state.timeline
    )


def _serve_remote(home: Path, port: int = 0) -> Served:
    """`acp-tui serve` fronting the demo agent (its sessions kept, so a new server reopens
    them)."""
    demo = [*DEMO_AGENT, "--speed", "0"]
    return Served(home, "--listen", f"127.0.0.1:{port}", agent=demo).start()


_REMOTE: list[Served] = []
"""The server of the scene on a remote agent under way (its scene kills and replaces it)."""


SCENES: dict[str, Scene] = {
    "welcome": welcome,
    "markdown": markdown,
    "markdown-end": markdown_end,
    "thought": think,
    "plan": plan,
    "tools": tools,
    "diff": diff,
    "diff-done": diff_done,
    "permission": permission,
    "terminal": terminal,
    "agent-terminal": agent_terminal,
    "reject-reason": reject_reason,
    "guard": guard,
    "elicitation": elicitation,
    "elicitation-url": elicitation_url,
    "cancelled": cancelled,
    "queued": queued,
    "held": held,
    "settings": settings,
    "commands": commands,
    "inspector": inspector,
    "keys": keys,
    "tour": tour,
    "conversations": conversations,
    "inbox": inbox,
    "picker": picker,
    "image": image,
    "mentions": mentions,
    "changes-line": changes_line,
    "changes": changes,
    "rewind": rewind,
    "rewind-continue": rewind_continue,
    "review": review,
    "review-send": review_send,
    "sessions": sessions,
    "fork": fork,
    "reconnected": reconnected,
}
REMOTE = {"reconnected"}
"""Scenes on the demo agent behind `acp-tui serve`, reached with --connect over WebSocket."""
AGENTS: dict[str, Callable[[Path, Path], list[str]]] = {
    "sessions": _earlier_sessions,
    "guard": _never_asks,
    "review": _greet,
    "review-send": _greet,
}
"""Scenes on a demo agent set up beforehand: its command line."""


async def shoot(name: str, scene: Scene, scratch: Path) -> Path:
    workspace = demo_workspace(scratch / "workspace")
    agent = AGENTS[name](scratch, workspace) if name in AGENTS else None
    app = demo_app(workspace, scratch / "state", argv=agent)
    if name in REMOTE:
        _REMOTE[:] = [_serve_remote(scratch)]
        url = _REMOTE[0].url.replace("http://", "ws://")
        app = remote_app(workspace, scratch / "state", url)
    try:
        svg = await _run(name, scene, app)
    finally:
        for server in _REMOTE:
            server.stop()
        _REMOTE.clear()
    # rsvg (and some other viewers) collapse leading spaces in <text> unless told not to.
    svg = svg.replace("<svg ", '<svg xml:space="preserve" ', 1)
    path = OUT / f"{name}.svg"
    path.write_text(svg, encoding="utf-8")
    return path


async def _run(name: str, scene: Scene, app: AcpApp) -> str:
    async with app.run_test(size=SIZES.get(name, SIZE)) as pilot:
        await wait_started(app, pilot)
        for prompt in app.query(PromptInput):  # a cursor shown, not caught mid-blink
            prompt.cursor_blink = False
        await scene(app, pilot)
        return app.export_screenshot(title=f"acp-tui · {name}")


async def main(names: list[str]) -> None:
    OUT.mkdir(exist_ok=True)
    # The same path every time: the header shows it.
    scratch = Path(tempfile.gettempdir()) / "acp-tui-demo"
    for name in names or list(SCENES):
        shutil.rmtree(scratch, ignore_errors=True)
        path = await shoot(name, SCENES[name], scratch)
        print(path.relative_to(OUT.parent))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
