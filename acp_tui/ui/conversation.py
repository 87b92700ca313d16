"""One conversation of the app: its chat screen, its agent process and its session.

The app holds a list of them; each runs its own agent, so a turn in one never waits for
another, and a permission request waits in its own conversation's dialog.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_tui.check.live import LiveCheck
    from acp_tui.config import AgentConfig
    from acp_tui.conversation.opening import Opened
    from acp_tui.services.permissions import PermissionPolicy
    from acp_tui.session.client import AgentClient
    from acp_tui.session.options import ClientOptions
    from acp_tui.session.session import Session
    from acp_tui.ui.chat_screen import ChatScreen

MARKS = {
    "working": "●",
    "waiting": "◆",
    "idle": "○",
    "stopped": "✗",
}
STATES = {
    "starting": "working",
    "running": "working",
    "cancelling": "working",
    "requires_action": "waiting",
    "idle": "idle",
    "exited": "stopped",
}


class Conversation:
    """A chat screen (the base of its own screen stack, `mode`) and the agent behind it."""

    def __init__(self, mode: str, number: int, agent: AgentConfig, options: ClientOptions) -> None:
        self.mode = mode
        """The app's screen mode that shows this conversation (its dialogs stack there)."""
        self.number = number
        """1 for the first conversation opened, then 2, 3…: its name in the session bar."""
        self.agent = agent
        """The agent it runs (its command, its env, its name in the records); a restart
        starts this one again."""
        self.options = options
        """What its agent is started with: the app's for the first conversation, a copy for
        each later one (an `env_var` sign-in changes only that conversation's env)."""
        self.policy: PermissionPolicy | None = None
        """Its permission rules: the saved ones and its own agent's from the config (loaded
        as the agent starts; another conversation's agent never answers by them)."""
        self.chat: ChatScreen | None = None
        self.client: AgentClient | None = None
        self.session: Session | None = None
        self.opened: Opened | None = None
        self.live_check: LiveCheck | None = None
        """Checks what the agent sends against the schema (kept across restarts)."""
        self.agent_running = True
        """False once the agent exited or could not start: then it can be restarted."""
        self.agent_unresponsive = False
        """The agent ignored a cancel: it can be stopped (and restarted)."""
        self.closing = False
        """Ctrl+W closes it: its agent's exit is expected, not reported."""
        self.forking = False
        """A fork (`session/fork`) is on its way, to be shown in place of its session."""
        self.started = asyncio.Event()
        """Set once the session is open (or the agent failed to start)."""

    @property
    def state(self) -> str:
        """`working`, `waiting` (for you), `idle` or `stopped`, as its header shows it."""
        from acp_tui.ui.widgets.session_header import SessionHeader

        if self.chat is None or not self.chat.is_mounted:
            return "working"
        status = self.chat.query_one(SessionHeader).status
        if self.session is not None and self.session.pending_permissions:
            status = "requires_action" if status != "exited" else status
        return STATES.get(status, "working")

    @property
    def label(self) -> str:
        """What the session bar calls it: the session title, else the agent's name."""
        from acp_tui.ui.widgets.session_header import SessionHeader

        name = ""
        if self.chat is not None and self.chat.is_mounted:
            header = self.chat.query_one(SessionHeader)
            name = header.title or header.agent
        return f"{self.number} {name}".strip()
