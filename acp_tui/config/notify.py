"""The `[notify]` table: whether and how acp-tui tells a user who is not looking that a
conversation needs them (what needs them: `acp_tui.conversation.attention`)::

    [notify]
    enabled = true
    events = ["done", "permission", "question", "failed", "budget"]
    long_turn = 30        # seconds; 0: never
    desktop = false       # also notify-send
    terminal = "auto"     # auto | osc777 | osc9 | osc99 | bell
"""

from __future__ import annotations

from typing import Any, get_args

from acp_tui.config.model import NEEDS, Notify, Sequence
from acp_tui.config.tables import Invalid, TableReader

_KEYS = {"enabled", "events", "long_turn", "desktop", "terminal"}


class NotifyTable(TableReader):
    """Reads `[notify]`."""

    def notify(self, table: Any) -> Notify:
        notify = Notify()
        where = ("notify",)
        if table is None:
            return notify
        if not isinstance(table, dict):
            raise Invalid("`notify` must be a table: [notify]", self.locate.line((), "notify"))
        for key in table.keys() - _KEYS:
            self.problem(f"notify: unknown setting `{key}`", self.locate.line(where, key))
        for key in ("enabled", "desktop"):
            value = table.get(key, getattr(notify, key))
            if not isinstance(value, bool):
                raise Invalid(f"`{key}` must be true or false", self.locate.line(where, key))
            setattr(notify, key, value)
        events = self.strings(table.get("events", list(NEEDS)), where, "events")
        unknown = [event for event in events if event not in NEEDS]
        if unknown:
            line = self.locate.line(where, "events")
            raise Invalid(f"`events`: {unknown[0]!r} is not one of {', '.join(NEEDS)}", line)
        notify.events = frozenset(events)  # type: ignore[arg-type]
        long_turn = table.get("long_turn", notify.long_turn)
        if isinstance(long_turn, bool) or not isinstance(long_turn, int | float) or long_turn < 0:
            line = self.locate.line(where, "long_turn")
            raise Invalid("`long_turn` must be a number of seconds (0: never)", line)
        notify.long_turn = float(long_turn)
        terminal = table.get("terminal", notify.terminal)
        if terminal not in get_args(Sequence):
            line = self.locate.line(where, "terminal")
            raise Invalid(f"`terminal` must be one of {', '.join(get_args(Sequence))}", line)
        notify.terminal = terminal
        return notify
