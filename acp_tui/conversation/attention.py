"""What a conversation needs of the user: the one reading behind the TUI's inbox (the marks on
the conversations, the key to the next one that waits, the palette, the terminal title) and
its notifications.

Two kinds of need. Some hold while the conversation is stuck on the user, and are read from it
as it stands: a permission request or a question waiting for an answer, a budget reached.
Others are news, kept until the user has seen it: a turn that ended, or failed, or an agent
that stopped, while they were not looking. Whether they look is the front end's to say (the
TUI: the conversation is the one shown, and the terminal has focus); the moment they do, the
news is seen. A turn that starts again is no news either: the agent works.

Each need, as it arises, is also a `Call` to the front end (`FrontEnd.needs_you`), which may
tell the user (`worth_telling`); headless mode hears none.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import msgspec

from acp_tui.config import NEEDS, Need, Notify
from acp_tui.protocol.jsonrpc import ConnectionClosed
from acp_tui.session.summary import last_answer
from acp_tui.text import shorten

if TYPE_CHECKING:
    from acp_tui.conversation.conversation import Conversation, TurnEnd

BODY_WIDTH = 120
"""A notification says this much of what happened: one line."""
NEWS: tuple[Need, ...] = ("failed", "done")
"""The needs that are news: they last until seen."""
STOP_REASONS = {
    "max_tokens": "stopped: the answer reached its token limit",
    "max_turn_requests": "stopped: too many requests in one turn",
    "refusal": "the agent refused",
}


class Call(msgspec.Struct, frozen=True):
    """Something that newly needs the user: what a notification says of it."""

    need: Need
    body: str
    """What happened, in one line: the request, the question, the answer's first line."""
    looking: bool
    """The user was looking at the conversation when it happened."""
    seconds: float = 0.0
    """How long the turn ran, for a turn's end."""


def worth_telling(call: Call, notify: Notify) -> bool:
    """Whether `call` is told (a notification): the user asked for such ones and is not looking,
    or it ends a turn that ran longer than `notify.long_turn` (they may look, but not wait)."""
    if not notify.enabled or call.need not in notify.events:
        return False
    long = call.need == "done" and 0 < notify.long_turn <= call.seconds
    return not call.looking or long


class Attention:
    """What one conversation needs of the user now, and the news they have not seen (see the
    module docstring)."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.looking = False
        """The user looks at the conversation (the front end says, `look`)."""
        self.news: set[Need] = set()
        """`done`, `failed`: what happened while the user was not looking."""
        self._turn_started = 0.0

    @property
    def needs(self) -> list[Need]:
        """Everything the conversation needs of the user, most pressing first."""
        conversation = self.conversation
        session = conversation.session
        now: set[Need] = set(self.news)
        if session is not None and any(not p.done for p in session.pending_permissions):
            now.add("permission")
        if any(not q.done for q in conversation.waiting_questions):
            now.add("question")
        if conversation.budget_reached() is not None:
            now.add("budget")
        return [need for need in NEEDS if need in now]

    @property
    def need(self) -> Need | None:
        """The most pressing of `needs`, if any: what the conversation's mark shows."""
        return next(iter(self.needs), None)

    def look(self, looking: bool) -> None:
        """The user looks at the conversation, or stops: looking, the news is seen."""
        self.looking = looking
        if looking:
            self.news.clear()

    def missed(self, call: Call) -> Call:
        """The user was not looking at `call` after all (the front end learned it since: tmux
        showed another window): what it said is news. `call` as not looked at."""
        if call.need in NEWS:
            self.news.add(call.need)
        return msgspec.structs.replace(call, looking=False)

    # -- what happens (the conversation says) ------------------------------------------------

    def asked(self, need: Need, about: str) -> None:
        """The agent asks the user (`permission`, `question`) about `about`."""
        self._call(need, about)

    def turn_started(self) -> None:
        self._turn_started = time.monotonic()
        self.news.discard("done")

    def turn_ended(self, end: TurnEnd) -> None:
        """A turn ended: done, failed, or stopped by a budget. One the user cancelled, or that
        ended because the agent went away (its exit is told, `agent_down`), is no news."""
        seconds = time.monotonic() - self._turn_started
        if isinstance(end.error, ConnectionClosed):
            return
        if end.error is not None:
            self._call("failed", f"The agent failed the prompt: {end.error.message}", seconds)
            return
        reached = self.conversation.budget_reached()
        if reached is not None:
            self._call("budget", f"Budget reached: {reached.describe()}", seconds)
        elif end.stop_reason != "cancelled":
            self._call("done", self._ending(end.stop_reason), seconds)

    def agent_down(self, why: str) -> None:
        """The agent stopped by itself, or could not start."""
        self._call("failed", f"The agent stopped: {why}")

    def _ending(self, stop_reason: str | None) -> str:
        reason = STOP_REASONS.get(stop_reason or "end_turn")
        if reason is not None:
            return reason
        session = self.conversation.session
        answer = last_answer(session.state) if session is not None else None
        first = answer.text.strip().splitlines() if answer is not None else []
        return first[0] if first else "The turn ended"

    def _call(self, need: Need, body: str, seconds: float = 0.0) -> None:
        if need in NEWS and not self.looking:
            self.news.add(need)
        body = shorten(" ".join(body.split()), BODY_WIDTH)
        self.conversation.front_end.needs_you(Call(need, body, self.looking, seconds))
