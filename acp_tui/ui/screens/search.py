"""Ctrl+F: search the whole session (released blocks too: the state has them all)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from acp_tui.session.session import Session
from acp_tui.session.state import Message, Notice, PlanState, TimelineItem, ToolCallState
from acp_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from acp_tui.ui.chat_screen import ChatScreen

RESULTS = 100


def item_text(item: TimelineItem) -> str:
    if isinstance(item, Message):
        return item.text
    if isinstance(item, ToolCallState):
        return " ".join([item.title, *(location.path for location in item.locations)])
    if isinstance(item, PlanState):
        return " ".join(entry.content for entry in item.entries) or (item.text or "")
    if isinstance(item, Notice):
        return f"{item.title} {item.detail or ''}"
    return ""


def item_label(item: TimelineItem) -> str:
    if isinstance(item, Message):
        return {"user": "you", "agent": "agent", "thought": "thought"}[item.role]
    if isinstance(item, ToolCallState):
        return "tool"
    if isinstance(item, PlanState):
        return "plan"
    return "notice"


def snippet(text: str, start: int, length: int, width: int = 60) -> Content:
    left = max(0, start - width // 3)
    before = text[left:start].replace("\n", " ")
    match = text[start : start + length]
    after = text[start + length : start + length + width].replace("\n", " ")
    return Content.assemble(
        ("…" if left else "", "$foreground-muted"), before, (match, "bold reverse"), after
    )


class SearchScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("down", "results", show=False),
    ]

    DEFAULT_CSS = """
    SearchScreen { align: center top; }
    SearchScreen > Vertical {
        width: 90%;
        height: auto;
        max-height: 80%;
        margin: 2 0 0 0;
        border: round $accent;
        border-title-color: $text-accent;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
    }
    SearchScreen Input { border: none; background: $surface; padding: 0 1; }
    SearchScreen OptionList, SearchScreen OptionList:focus {
        height: auto; max-height: 24; border: none; background: $surface;
    }
    SearchScreen OptionList > .option-list--option-highlighted { background: $accent 25%; }
    SearchScreen Input:focus { border: none; }
    """

    def __init__(self, session: Session, chat: ChatScreen) -> None:
        super().__init__()
        self.session = session
        self.chat = chat
        self.matches: list[TimelineItem] = []

    def compose(self) -> ComposeResult:
        dialog = Vertical()
        dialog.border_title = "Search the session"
        dialog.border_subtitle = "enter jump · ↓ results · esc close"
        with dialog:
            yield Input(placeholder="text to find…")
            yield OptionList()

    def on_input_changed(self, event: Input.Changed) -> None:
        query = event.value.strip().lower()
        results = self.query_one(OptionList)
        results.clear_options()
        self.matches = []
        if not query:
            return
        options = []
        for item in self.session.state.timeline:
            text = item_text(item)
            index = text.lower().find(query)
            if index < 0:
                continue
            self.matches.append(item)
            label = Content.assemble(
                (f"{item_label(item):<8}", "$text-accent"), snippet(text, index, len(query))
            )
            options.append(Option(label))
            if len(self.matches) >= RESULTS:
                break
        results.add_options(options)
        if options:
            results.highlighted = len(options) - 1

    def on_input_submitted(self) -> None:
        results = self.query_one(OptionList)
        if results.highlighted is not None:
            self._jump(results.highlighted)

    def action_results(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._jump(event.option_index)

    def _jump(self, index: int) -> None:
        if 0 <= index < len(self.matches):
            item = self.matches[index]
            self.dismiss(None)
            self.chat.query_one(Transcript).reveal(item)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)
