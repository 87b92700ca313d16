"""The header line: which agent, which session, where, which protocol, and what it is doing."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
STATUS_TEXT = {
    "starting": "starting…",
    "idle": "ready",
    "running": "working",
    "requires_action": "waiting for you",
    "cancelling": "cancelling…",
    "exited": "agent exited",
    "reconnecting": "reconnecting…",
}
BUSY = ("running", "cancelling", "starting", "reconnecting")
"""Statuses shown with a spinner: something is under way."""


class SessionHeader(Horizontal):
    """One line at the top of the screen."""

    class Changed(Message):
        """The status, title or agent changed: the session bar shows them too."""

    DEFAULT_CSS = """
    SessionHeader {
        height: 1;
        width: 1fr;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    SessionHeader > Static { width: auto; height: 1; text-wrap: nowrap; }
    SessionHeader > .header--agent { text-style: bold; color: $text-accent; padding: 0 1 0 0; }
    SessionHeader > .header--title { width: 1fr; text-overflow: ellipsis; color: $foreground; }
    SessionHeader > .header--workspace { color: $text-muted; padding: 0 0 0 2; }
    SessionHeader > .header--protocol { color: $text-muted; padding: 0 0 0 2; }
    SessionHeader > .header--status { padding: 0 1; margin: 0 0 0 2; color: $text-muted; }
    SessionHeader > .header--status.-running { color: $text-warning; }
    SessionHeader > .header--status.-cancelling { color: $text-warning; }
    SessionHeader > .header--status.-reconnecting { color: $text-warning; }
    SessionHeader > .header--status.-requires_action {
        color: $background; background: $warning; text-style: bold;
    }
    SessionHeader > .header--status.-exited { color: $text-error; }
    SessionHeader > .header--status.-idle { color: $text-success; }
    """

    agent: reactive[str] = reactive("acp-tui")
    """The agent's name and version, as its `initialize` answer gave them."""
    title: reactive[str] = reactive("")
    """The session title (`session_info_update`)."""
    workspace: reactive[str] = reactive("")
    """The workspace path, shortened with `~`."""
    protocol: reactive[int | None] = reactive(None)
    """The ACP version spoken."""
    status: reactive[str] = reactive("starting")
    """`starting`, `idle`, `running`, `requires_action`, `cancelling` or `exited`."""
    _frame: reactive[int] = reactive(0)
    """The spinner's frame while the agent works."""

    def compose(self) -> ComposeResult:
        yield Static(classes="header--agent")
        yield Static(classes="header--title")
        yield Static(classes="header--workspace")
        yield Static(classes="header--protocol")
        yield Static(classes="header--status")

    _ready = False

    def on_mount(self) -> None:
        self._ready = True
        self._spin = self.set_interval(0.1, self._tick, pause=True)
        self.watch_agent(self.agent)
        self.watch_title(self.title)
        self.watch_workspace(self.workspace)
        self.watch_protocol(self.protocol)
        self.watch_status("", self.status)

    def _tick(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER)

    def watch_agent(self, agent: str) -> None:
        self.post_message(self.Changed())
        if self._ready:
            self.query_one(".header--agent", Static).update(Content(f"◆ {agent}"))

    def watch_title(self, title: str) -> None:
        self.post_message(self.Changed())
        if self._ready:
            self.query_one(".header--title", Static).update(Content(title))

    def watch_workspace(self, workspace: str) -> None:
        if self._ready:
            self.query_one(".header--workspace", Static).update(Content(workspace))

    def watch_protocol(self, protocol: int | None) -> None:
        if self._ready:
            text = f"ACP v{protocol}" if protocol is not None else ""
            self.query_one(".header--protocol", Static).update(Content(text))

    def watch_status(self, old: str, new: str) -> None:
        self.post_message(self.Changed())
        if not self._ready:
            return
        widget = self.query_one(".header--status", Static)
        widget.remove_class(f"-{old}")
        widget.add_class(f"-{new}")
        animate = new in BUSY and self.app.animation_level != "none"
        if animate:
            self._spin.resume()
        else:
            self._spin.pause()
        self._render_status()

    def watch__frame(self) -> None:
        self._render_status()

    def _render_status(self) -> None:
        if not self._ready:
            return
        busy = self.status in BUSY
        mark = SPINNER[self._frame] if busy and self.app.animation_level != "none" else "●"
        text = STATUS_TEXT.get(self.status, self.status)
        self.query_one(".header--status", Static).update(Content(f"{mark} {text}"))


def short_path(path: Path) -> str:
    """`path` from the home directory (`~/...`), as people write it."""
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home)) if path != home else "~"
    except ValueError:
        return str(path)
