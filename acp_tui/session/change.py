"""What a state change was: the one value the reducer returns and listeners receive."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

ChangeKind = Literal[
    "message",
    "tool_call",
    "tool_call_closed",
    "plan",
    "plan_removed",
    "terminal",
    "notice",
    "permission",
    "commands",
    "modes",
    "config",
    "info",
    "usage",
    "status",
]
"""What a change is about: a timeline item or terminal (`item` is it), a permission request
answered (`delta` is the `PermissionAnswer`; `item` the notice saying so, if any), or a
session-wide field (`item` is None; for the turn's `status` at its end, the notice saying why
it stopped, if it was not `end_turn`)."""


class Change(msgspec.Struct, gc=False):
    """What an update changed. `item` is the changed object (a `Message`, `ToolCallState`,
    `PlanState`, `TerminalState`, `Notice`, or None for session-wide fields); `delta` is what
    was appended, when the change was an append (a renderer then draws only that)."""

    kind: ChangeKind
    item: Any = None
    delta: Any = None
