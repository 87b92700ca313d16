"""The guard: a file write or a command the agent did not ask permission for.

An agent that asks (`session/request_permission`) before it edits or runs something gets only
what the user, a saved rule or the `--permission` mode allowed. An agent that never asks would
get everything: `fs/write_text_file` and `terminal/create` carry no tool call, so the services
alone cannot tell an allowed write from an unasked one. The guard stands in front of those two
methods (reads stay free) and lets through what a granted permission covers:

- a tool call the user (or a rule, or the mode) allowed, while it is still open: its kind says
  what it covers (`edit`, `delete`, `move`: writes; `execute`: commands; a kind the agent did
  not name: both). Gemini CLI asks about its edit, then writes through `fs/write_text_file`;
- an "allow always" answer: the agent will not ask again for that kind in this session (Gemini's
  "Allow for this session"), so neither does the guard;
- a mode whose name says the agent acts without asking (accept edits, auto, yolo, bypass, full
  access): the user chose it for this session.

Anything else is asked as if the agent had asked, through the same policy, rules and dialog,
with a request acp-tui makes up that says plainly the agent did not ask; it is answered like any
other (`reject` refuses it, `allow` lets it through). A refusal is a JSON-RPC error the agent
reads. The request's tool call (`acp-tui:` ids) is the card the user sees for the write or the
command; a command run outside any tool call gets such a card whether or not it was asked about,
so nothing runs unseen.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from acp_tui.protocol import methods as m
from acp_tui.protocol.content import ToolCallContent, ToolCallLocation
from acp_tui.protocol.jsonrpc import INVALID_REQUEST, RpcError
from acp_tui.protocol.updates import ToolCallUpdate
from acp_tui.services.terminals import command_line, shell_argv
from acp_tui.session import reducer

if TYPE_CHECKING:
    from acp_tui.session import state as s
    from acp_tui.session.session import Session

Action = Literal["write", "command"]
Route = Callable[[msgspec.Raw], Awaitable[Any]]

GUARDED = {"fs/write_text_file": "write", "terminal/create": "command"}
"""The methods the guard stands in front of, and what each does."""

_COVERS: dict[str, frozenset[Action]] = {
    "edit": frozenset({"write"}),
    "delete": frozenset({"write"}),
    "move": frozenset({"write"}),
    "execute": frozenset({"command"}),
    "other": frozenset({"write", "command"}),
}
"""What an allowed tool call of each kind covers while it is open; the reading kinds (read,
search, fetch, think, switch_mode) cover nothing."""

_UNASKING_MODE = re.compile(r"accept|auto|yolo|bypass|full|dont.?ask|never.?ask", re.IGNORECASE)
"""Mode ids and names that say the agent acts without asking: Claude's `acceptEdits` and
`bypassPermissions`, Codex's `auto` and `full-access`, Gemini's `autoEdit` and `yolo`."""

ALLOW_ONCE, ALLOW_SESSION, REJECT = "allow", "allow-session", "reject"

OWN_CALLS = "acp-tui:"
"""The prefix of the ids of the tool calls the guard makes up (cards of its own)."""


def unasked(call_id: str | None) -> bool:
    """Whether a tool call is one the guard made up for a write or a command the agent did not
    ask permission for, or a command it ran outside any tool call."""
    return call_id is not None and call_id.startswith(OWN_CALLS)


class _WritePath(msgspec.Struct):
    path: str = ""


class _Write(_WritePath):
    content: str = ""


_SHOWN_WRITE = 1 << 20
"""A write asked about shows as a diff up to this size (old and new); a larger one by its
path alone."""


def _diff(params: msgspec.Raw) -> list[ToolCallContent]:
    """What the unasked write would change, to show in the question: a diff against the file
    there (a regular file only: never open a FIFO or a device to show it)."""
    write = msgspec.json.decode(params, type=_Write)
    old: str | None = None
    try:
        info = os.stat(write.path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _SHOWN_WRITE:
            return []
        with open(write.path, encoding="utf-8", errors="replace") as file:
            old = file.read()
    except FileNotFoundError:
        old = None
    except (OSError, ValueError):
        return []
    return [ToolCallContent("diff", path=write.path, old_text=old, new_text=write.content)]


class _CommandSubject(msgspec.Struct):
    command: str = ""
    args: list[str] = msgspec.field(default_factory=list)


class Grants:
    """What the user allowed in one session, as far as the guard is concerned."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        """Tool calls allowed by an answer to their permission request, and the turn of it."""
        self.always: set[Action] = set()
        """Actions allowed for the rest of the session."""

    def allowed(
        self, call_id: str | None, kind: str | None, *, always: bool, turn: int = 0
    ) -> None:
        if call_id is not None:
            self.calls[call_id] = turn
        if always:
            self.always |= _COVERS.get(kind or "other", frozenset())

    def covers(self, state: s.SessionState, action: Action) -> bool:
        if action in self.always or _unasking_mode(state):
            return True
        for call_id, turn in list(self.calls.items()):
            call = state.tool_calls.get(call_id)
            if call is None:
                # Allowed before it was announced: it may still come, in the turn it was
                # asked in; never announced, it covers nothing after.
                if turn == state.turn:
                    return True
            elif not call.open:
                del self.calls[call_id]  # over: it covers nothing more
            elif action in _COVERS.get(call.kind, frozenset()):
                return True
        return False


def _unasking_mode(state: s.SessionState) -> bool:
    """Whether the session's mode (a mode, or a config option of the mode category, as v1
    agents offer them) is one whose name says the agent acts without asking."""
    names = [f"{x.id} {x.name}" for x in state.modes if x.id == state.current_mode]
    for option in state.config_options:
        if option.category == "mode" and isinstance(option.current_value, str):
            names.append(option.current_value)
            names += [x.name for x in option.options or () if x.value == option.current_value]
    return any(_UNASKING_MODE.search(name) for name in names)


def _relative(path: str, cwd: Path) -> str:
    """`path` as the user would name it: from the workspace, when it is in there."""
    return os.path.relpath(path, cwd) if Path(path).is_relative_to(cwd) else path


def _inside_a_tool_call(state: s.SessionState) -> bool:
    return any(call.open and call.turn == state.turn for call in state.tool_calls.values())


class Guard:
    """Stands in front of one session's guarded methods (`GUARDED`)."""

    def __init__(self, session: Session, *, asks: bool = True) -> None:
        self.session = session
        self.asks = asks
        """Off (`--guard off`): nothing is asked; a command outside a tool call still gets its
        card."""
        self._ids = itertools.count(1)
        self._cards: dict[str, str] = {}
        """The card of each terminal started outside a tool call, by terminal id."""

    async def run(self, method: str, params: msgspec.Raw, route: Route) -> Any:
        action: Action = "write" if GUARDED[method] == "write" else "command"
        session = self.session
        covered = not self.asks or session.grants.covers(session.state, action)
        if action == "write":
            if covered:
                return await route(params)
            path = msgspec.json.decode(params, type=_WritePath).path
            shown = _relative(path, session.client.options.cwd)
            diff = await asyncio.to_thread(_diff, params) if len(params) <= _SHOWN_WRITE else []
            return await self._asked(action, params, route, f"Write {shown}", diff, path)
        if covered and _inside_a_tool_call(session.state):
            return await route(params)
        subject = msgspec.json.decode(params, type=_CommandSubject)
        shell = shell_argv(subject.command, subject.args)
        shown = subject.command if shell else command_line([subject.command, *subject.args])
        if covered:
            card = self._card(shown, "execute", "in_progress")
            return await self._run_in(card, params, route)
        return await self._asked(action, params, route, shown, [], None)

    async def _asked(
        self,
        action: Action,
        params: msgspec.Raw,
        route: Route,
        title: str,
        content: list[ToolCallContent],
        path: str | None,
    ) -> Any:
        """Ask about an unasked `action` as a permission request; run it if allowed."""
        session = self.session
        call_id = f"{OWN_CALLS}{action}-{next(self._ids)}"
        kind = "edit" if action == "write" else "execute"
        locations = [ToolCallLocation(path)] if path else []
        what = "write this file" if action == "write" else "run this command"
        request = m.PermissionRequest(
            session.id,
            [
                m.PermissionOption(ALLOW_ONCE, "Allow", "allow_once"),
                m.PermissionOption(ALLOW_SESSION, "Allow for this session", "allow_always"),
                m.PermissionOption(REJECT, "Reject", "reject_once"),
            ],
            tool_call=ToolCallUpdate(
                call_id,
                title=title,
                kind=kind,
                status="pending",
                content=content,
                locations=locations,
            ),
            description=f"The agent did not ask for permission to {what}; acp-tui asks you.",
        )
        response = await session.request_permission(request)
        outcome = response.outcome
        if not isinstance(outcome, m.SelectedOutcome) or outcome.option_id == REJECT:
            self._patch(call_id, status="failed")
            raise RpcError(
                INVALID_REQUEST,
                f"the agent did not ask for permission to {what}, and it was not given",
                {"reason": "permission_not_granted", "title": title},
            )
        if action == "write":
            try:
                result = await route(params)
            except BaseException:
                self._patch(call_id, status="failed")
                raise
            self._patch(call_id, status="completed")
            return result
        return await self._run_in(call_id, params, route)

    async def _run_in(self, call_id: str, params: msgspec.Raw, route: Route) -> Any:
        """Start a command shown in the card `call_id`; the card follows its terminal."""
        try:
            result = await route(params)
        except BaseException:
            self._patch(call_id, status="failed")
            raise
        terminal_id = result.terminal_id
        self._cards[terminal_id] = call_id
        self._patch(
            call_id,
            status="in_progress",
            content=[ToolCallContent("terminal", terminal_id=terminal_id)],
        )
        return result

    def terminal_exited(self, terminal_id: str, code: int | None) -> None:
        call_id = self._cards.pop(terminal_id, None)
        if call_id is not None:
            self._patch(call_id, status="completed" if code == 0 else "failed")

    def _card(self, title: str, kind: str, status: str) -> str:
        call_id = f"{OWN_CALLS}command-{next(self._ids)}"
        self._patch(call_id, title=title, kind=kind, status=status)
        return call_id

    def _patch(self, call_id: str, **fields: Any) -> None:
        update = ToolCallUpdate(call_id, **fields)
        self.session.emit(reducer.patch_tool_call(self.session.state, update))
