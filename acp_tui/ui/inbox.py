"""One inbox for every conversation: who needs the user, at a glance and a key away.

Each conversation's session bar marks what it needs (`acp_tui.conversation.attention`: a
permission, a question, a budget reached, a failure, a turn done unseen); Ctrl+G shows the
next one that needs the user; the command palette lists them; the terminal's title says how
many wait. It also says to each conversation whether the user looks at it (shown, in a
terminal that has focus: what sees its news), and tells the terminal when one that nobody
looks at needs the user (`acp_tui.ui.notify`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from acp_tui.config import Need, Notify
from acp_tui.conversation.attention import Call, worth_telling
from acp_tui.ui.notify import desktop_notification, notification, tmux_pane_shown
from acp_tui.ui.widgets.session_bar import SessionBar

if TYPE_CHECKING:
    from acp_tui.ui.app import AcpApp
    from acp_tui.ui.conversation import ConversationView

TITLE = "acp-tui"
NEED_SAID: dict[Need, str] = {
    "permission": "asks for permission",
    "question": "asks you a question",
    "budget": "reached its budget",
    "failed": "failed",
    "done": "is done",
}


class Inbox:
    """What the app shows and says of the conversations that need the user."""

    def __init__(self, app: AcpApp, environ: Mapping[str, str] = os.environ) -> None:
        self.app = app
        self.environ = environ
        """Where the terminal is read from, to pick its notification."""
        self._title = TITLE
        """The terminal's title as acp-tui last set it (it is not read back)."""
        self._hidden = False
        """tmux shows another window, though the terminal has focus (see `_unless_hidden`),
        until a key or a click."""
        self._suspended = False
        """The app has handed the terminal over (a sign-in command, the user's editor)."""

    def start(self) -> None:
        """Follow the app's suspensions: nothing is written to the terminal meanwhile (Textual's
        writer is stopped then, and the thirtieth write waiting for it would block)."""
        app = self.app
        app.app_suspend_signal.subscribe(app, self._suspend, immediate=True)
        app.app_resume_signal.subscribe(app, self._resume, immediate=True)

    def _suspend(self, app: AcpApp) -> None:
        self._suspended = True

    def _resume(self, app: AcpApp) -> None:
        self._suspended = False
        self.refresh()  # the title, as it is now

    @property
    def notify(self) -> Notify:
        startup = self.app.startup
        return startup.notify if startup is not None else Notify()

    def waiting(self) -> list[ConversationView]:
        """The conversations that need the user, in the session bar's order."""
        return [view for view in self.app.conversations if view.need is not None]

    def refresh(self) -> None:
        """Each conversation told whether the user looks at it; the session bars and the
        terminal's title, as they all stand."""
        app = self.app
        for view in app.conversations:
            conversation = view.conversation
            if conversation is not None:
                looking = view is app.conversation and app.app_focus and not self._hidden
                conversation.attention.look(looking)
        items = [(c.label, c.need or c.state, c is app.conversation) for c in app.conversations]
        for view in app.conversations:
            chat = view.chat
            if chat is not None and chat.is_mounted:
                for bar in chat.query(SessionBar):  # none while a closing app takes it down
                    bar.show(items)
        count = len(self.waiting())
        self.set_title(f"{TITLE} · {count} waiting" if count else TITLE)

    def focus_changed(self) -> None:
        """The terminal has focus again, or lost it."""
        self._hidden = False
        self.refresh()

    def touched(self) -> None:
        """A key, a click: the user is back, though tmux did not say (without `focus-events`
        it tells nobody of a window switch)."""
        if self._hidden:
            self.focus_changed()

    def heard(self, view: ConversationView, call: Call) -> None:
        """`view`'s conversation newly needs the user: marked, and told if worth it."""
        self.refresh()
        if call.looking and "TMUX" in self.environ:
            group = "notify"
            self.app.run_worker(self._unless_hidden(view, call), group=group, exit_on_error=False)
        else:
            self._tell(view, call)

    async def _unless_hidden(self, view: ConversationView, call: Call) -> None:
        """Tell `call` as `heard` does, unless tmux shows another window than acp-tui's: then as
        to a user who is not looking."""
        conversation = view.conversation
        if conversation is not None and not await tmux_pane_shown(self.environ):
            self._hidden = True
            call = conversation.attention.missed(call)
            self.refresh()
        self._tell(view, call)

    def _tell(self, view: ConversationView, call: Call) -> None:
        notify = self.notify
        if not worth_telling(call, notify):
            return
        title = f"{TITLE} · {view.label}"
        self.write(notification(title, call.body, self.environ, notify.terminal))
        if notify.desktop:
            self.app.run_worker(
                desktop_notification(title, call.body), group="notify", exit_on_error=False
            )

    def jump(self) -> None:
        """Show the next conversation after the one shown that needs the user."""
        app = self.app
        views = app.conversations
        start = views.index(app.conversation)
        for view in views[start + 1 :] + views[:start]:
            if view.need is not None:
                app.action_show_conversation(views.index(view) + 1)
                return
        app.notify("No other conversation waits for you.", timeout=3)

    def commands(self) -> Iterator[SystemCommand]:
        """A palette command for each conversation that needs the user, but the one shown."""
        app = self.app
        for view in self.waiting():
            if view is app.conversation or view.need is None:
                continue
            number = app.conversations.index(view) + 1
            yield SystemCommand(
                f"Waiting: {view.label}",
                f"It {NEED_SAID[view.need]}: show it (Ctrl+G: the next that waits)",
                partial(app.action_show_conversation, number),
            )

    def set_title(self, title: str) -> None:
        """Set the terminal window's title (OSC 2), unless it says that already."""
        if title != self._title and not self._suspended:
            self._title = title
            safe = title.replace("\x07", "").replace("\x1b", "")
            self.write(f"\x1b]2;{safe}\x07")

    def write(self, text: str) -> None:
        """Write to the terminal through Textual's driver, between its frames."""
        driver = self.app._driver
        if driver is not None and not self._suspended:
            driver.write(text)
