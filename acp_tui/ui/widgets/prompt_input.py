"""The prompt: multi-line, Enter sends, Shift+Enter or Ctrl+J for a newline, Up/Down at the
edges walk the history, `/command` or `@path` at the cursor open a completion menu, a pasted
path to an image file is offered as an attachment instead of text, and the images it mentions
are said as they come and go."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from acp_tui.conversation.attachments import pasted_image_path
from acp_tui.conversation.mentions import mention, mentioned_images
from acp_tui.ui.paint import paint_now
from acp_tui.ui.widgets.completion_menu import CompletionMenu

_TOKEN = re.compile(r'(?:^|\s)(@"[^"\n]*|@[^\s"]*)$')
"""A mention being written, up to the cursor: `@src/ap`, or a quoted one `@"my no`."""


@dataclass(frozen=True, slots=True)
class CompletionQuery:
    """What the text at the cursor asks to complete: a `command` name or a `path`."""

    kind: str
    query: str
    start: int
    """Column where the token being completed starts (its `/` or `@`)."""


class PromptInput(TextArea):
    """Where the user writes to the agent."""

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 12;
        border: round $foreground 20%;
        padding: 0 1;
        background: $background;
    }
    PromptInput:focus {
        border: round $accent 80%;
        background: $background;
    }
    PromptInput.-busy:focus {
        border: round $warning 60%;
    }
    PromptInput .text-area--placeholder {
        color: $text-muted 60%;
    }
    """

    class Submitted(Message):
        """The user pressed Enter on a prompt."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class HistoryMove(Message):
        """Up on the first line (-1) or Down on the last (+1): show another past prompt."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    class CompletionWanted(Message):
        """The token at the cursor can be completed (or, with None, no longer can)."""

        def __init__(self, query: CompletionQuery | None) -> None:
            super().__init__()
            self.query = query

    class ImagePasted(Message):
        """The paste was one path to an image file: attach it (or, if it cannot be, insert
        `text` after all)."""

        def __init__(self, path: Path, text: str) -> None:
            super().__init__()
            self.path = path
            self.text = text

    class BackspaceOnEmpty(Message):
        """Backspace with nothing typed: the last attachment may go."""

    class ImagesMentioned(Message):
        """The images the prompt mentions (`@shot.png`, in the workspace) changed: `images`,
        each as written and where it is."""

        def __init__(self, images: list[tuple[str, Path]]) -> None:
            super().__init__()
            self.images = images

    def __init__(self, *, id: str | None = None, placeholder: str = "") -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            placeholder=placeholder,
            compact=False,
        )
        self.menu: CompletionMenu | None = None
        self.workspace = Path.cwd()
        """Where a pasted relative path is looked for."""
        self._query: CompletionQuery | None = None
        self._images: list[tuple[str, Path]] = []

    # -- keys ---------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        menu = self.menu
        if menu is not None and menu.display and menu.option_count:
            handled = True
            if key == "up":
                menu.action_cursor_up()
            elif key == "down":
                menu.action_cursor_down()
            elif key == "tab" or (key == "enter" and not self._written_in_full()):
                self.accept_completion()
            elif key == "escape":
                self.close_completion()
            else:
                handled = False
            if handled:
                event.stop()
                event.prevent_default()
                return
        if key == "enter":
            self.close_completion()
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self.text))
            return
        if key in ("shift+enter", "ctrl+j", "alt+enter"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key == "backspace" and not self.text:
            self.post_message(self.BackspaceOnEmpty())
        if key == "up" and self.cursor_at_first_line:
            event.stop()
            event.prevent_default()
            self.post_message(self.HistoryMove(-1))
            return
        if key == "down" and self.cursor_at_last_line:
            event.stop()
            event.prevent_default()
            self.post_message(self.HistoryMove(1))
            return
        before = (self.selection, self.text)
        if await self._run_own_binding(key):
            event.stop()
            event.prevent_default()
        else:
            await super()._on_key(event)
        if (self.selection, self.text) != before:
            paint_now(self)  # the key changed the text or moved the cursor: show it now

    async def _run_own_binding(self, key: str) -> bool:
        """Run the prompt's own binding for `key` (the editor's: delete, move, undo...) here,
        as the app would once the key had bubbled up to it: each hop on the way waits behind
        whatever the loop runs meanwhile (a stream's frames)."""
        for binding in self._bindings.key_to_bindings.get(key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                return True
        return False

    async def _on_paste(self, event: events.Paste) -> None:
        # Runs before TextArea's own paste, which inserts the text unless this prevents it.
        path = pasted_image_path(event.text, self.workspace)
        if path is not None:
            event.prevent_default()
            event.stop()
            self.post_message(self.ImagePasted(path, event.text))

    def insert_pasted(self, text: str) -> None:
        """Insert `text` as a paste would have (it was not an image after all)."""
        result = self.replace(text, *self.selection)
        self.move_cursor(result.end_location)

    def set_text(self, text: str) -> None:
        """Replace the draft, cursor at the end."""
        self.load_text(text)
        last = self.document.line_count - 1
        self.move_cursor((last, len(self.document.get_line(last))))

    # -- completion ---------------------------------------------------------------------------

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._update_query()
        text = self.text
        images = mentioned_images(text, self.workspace) if "@" in text else []
        if images != self._images:
            self._images = images
            self.post_message(self.ImagesMentioned(images))

    def _on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        self._update_query()

    def _update_query(self) -> None:
        query = self.completion_query()
        if query != self._query:
            self._query = query
            self.post_message(self.CompletionWanted(query))

    def completion_query(self) -> CompletionQuery | None:
        row, column = self.cursor_location
        line = self.document.get_line(row)[:column]
        if row == 0 and line.startswith("/") and " " not in line:
            return CompletionQuery("command", line[1:], 0)
        match = _TOKEN.search(line)
        if match is not None:
            token = match.group(1)
            return CompletionQuery("path", token[1:].removeprefix('"'), column - len(token))
        return None

    def _completion(self) -> tuple[str, str] | None:
        """(what is written of the token at the cursor, what the highlighted completion
        would make of it)."""
        menu, query = self.menu, self._query
        value = menu.selected_value() if menu is not None else None
        if query is None or value is None:
            return None
        row, column = self.cursor_location
        typed = self.document.get_line(row)[query.start : column]
        return typed, f"/{value}" if query.kind == "command" else mention(value)

    def accept_completion(self) -> None:
        completion = self._completion()
        if completion is None or self._query is None:
            return
        row, column = self.cursor_location
        self.replace(f"{completion[1]} ", (row, self._query.start), (row, column))
        self.close_completion()

    def _written_in_full(self) -> bool:
        """Whether the token at the cursor already is the highlighted completion: Enter then
        sends the prompt (`/help` typed whole), rather than completing it to itself."""
        completion = self._completion()
        return completion is not None and completion[0] == completion[1]

    def close_completion(self) -> None:
        if self.menu is not None:
            self.menu.display = False
