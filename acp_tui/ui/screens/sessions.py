"""The session picker (Ctrl+O): the agent's sessions and acp-tui's records in this workspace,
the most recent first; Enter opens one, F goes on in a fork of one (when the agent forks),
Delete (pressed twice) deletes one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from acp_tui.conversation.opening import SessionEntry
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.text import shorten
from acp_tui.ui.screens.dialog import Dialog

Deleter = Callable[[SessionEntry], Awaitable[None]]
"""Deletes a session wherever it can be deleted (`acp_tui.records.delete_session`)."""
TITLE_WIDTH = 48


@dataclass(frozen=True, slots=True)
class Picked:
    """The session picked: to open, or (`fork`) to go on in a fork of."""

    entry: SessionEntry
    fork: bool = False


class SessionsScreen(Dialog[Picked | None]):
    """Pick a session: title, when, and where it comes from (agent, local record)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Close"),
        Binding("delete,d", "delete", "Delete"),
        Binding("f", "fork", "Fork"),
    ]

    DEFAULT_CSS = """
    SessionsScreen > Vertical { width: 90; }
    SessionsScreen OptionList, SessionsScreen OptionList:focus {
        height: auto; max-height: 24; border: none; background: $surface; padding: 0;
        margin: 1 0 0 0;
    }
    SessionsScreen .sessions--empty { color: $text-muted; padding: 1 0; }
    SessionsScreen .sessions--status {
        display: none; color: $text-warning; padding: 0 1; margin: 1 0 0 0;
    }
    """

    def __init__(
        self,
        entries: list[SessionEntry],
        current: str | None = None,
        *,
        delete: Deleter | None = None,
        agent_deletes: bool = False,
        open_elsewhere: frozenset[str] = frozenset(),
        forks: bool = False,
    ) -> None:
        super().__init__()
        self.entries = entries
        self.current = current
        self._forks = forks
        """Whether the agent forks sessions (`session/fork`): then F picks one to fork."""
        self._delete = delete
        self._agent_deletes = agent_deletes
        self._open_elsewhere = open_elsewhere
        """Sessions other conversations show (and record): not deleted under them."""
        self._armed: SessionEntry | None = None
        """The entry a first Delete picked: a second one deletes it."""
        self._deleting_now = False

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Sessions in this workspace"
            hints = ["↑↓ choose", "enter open", "f fork", "del delete", "esc close"]
            if not self._forks:
                hints.remove("f fork")
            if not self._delete:
                hints.remove("del delete")
            box.border_subtitle = " · ".join(hints)
            if not self.entries:
                yield Static("No earlier sessions here.", classes="sessions--empty")
            yield OptionList(*(self._option(index, e) for index, e in enumerate(self.entries)))
            yield Static(classes="sessions--status")

    def _option(self, index: int, entry: SessionEntry) -> Option:
        when = entry.updated_at.astimezone().strftime("%Y-%m-%d %H:%M") if entry.updated_at else ""
        mark = "● " if entry.session_id == self.current else "  "
        label = Content.assemble(
            (mark, "$text-accent"),
            (f"{shorten(entry.label, TITLE_WIDTH):<{TITLE_WIDTH}}", "bold"),
            (f"  {when:<16}", "$text-muted"),
            (f"  {entry.source}", "$text-muted"),
        )
        return Option(label, id=str(index))

    def on_mount(self) -> None:
        self.query_one(OptionList).display = bool(self.entries)
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(Picked(self.entries[int(event.option.id or 0)]))

    def action_fork(self) -> None:
        highlighted = self._highlighted()
        if self._forks and highlighted is not None:
            self.dismiss(Picked(highlighted[1], fork=True))

    @on(OptionList.OptionHighlighted)
    def _moved(self) -> None:
        if self._armed is not None:
            self._armed = None
            self._say("")

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    # -- deleting ------------------------------------------------------------------------------

    def _highlighted(self) -> tuple[int, SessionEntry] | None:
        options = self.query_one(OptionList)
        if options.highlighted is None or not options.option_count:
            return None
        index = int(options.get_option_at_index(options.highlighted).id or 0)
        return index, self.entries[index]

    def action_delete(self) -> None:
        highlighted = self._highlighted()
        if self._delete is None or highlighted is None:
            return
        index, entry = highlighted
        if self._deleting_now:
            return
        if entry.session_id == self.current:
            self._say("This is the session shown: open another one first.")
        elif entry.session_id in self._open_elsewhere:
            self._say("Another conversation shows this session: close it there first.")
        elif entry.record is None and not self._agent_deletes:
            self._say("The agent cannot delete its sessions (and acp-tui has no record of it).")
        elif self._armed is not entry:
            self._armed = entry
            self._say(f"Delete “{shorten(entry.label, 40)}”? Press del again to delete it.")
        else:
            self._armed = None
            self._deleting(index, entry)

    @work(group="delete-session", exit_on_error=False)
    async def _deleting(self, index: int, entry: SessionEntry) -> None:
        assert self._delete is not None
        self._deleting_now = True  # one at a time: a second Delete waits for this one
        try:
            await self._delete(entry)
        except RpcError as error:
            self._say(f"The agent did not delete it: {error.message}")
            return
        finally:
            self._deleting_now = False
        options = self.query_one(OptionList)
        if entry.in_agent and not self._agent_deletes:
            entry.record = None
            options.replace_option_prompt(str(index), self._option(index, entry).prompt)
            self._say("acp-tui's record deleted; the agent keeps its own (it cannot delete).")
            return
        options.remove_option(str(index))
        self._say(f"Deleted “{shorten(entry.label, 40)}”.")

    def _say(self, text: str) -> None:
        status = self.query_one(".sessions--status", Static)
        status.update(text)
        status.display = bool(text)
