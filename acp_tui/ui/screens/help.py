"""F1: every key, grouped by where it works."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

NARROW = 110
"""Terminal columns below which the keys are one column."""
KEYS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "Prompt",
        [
            ("enter", "send (queued while busy)"),
            ("shift+enter  ctrl+j", "new line"),
            ("↑ ↓ at the edges", "earlier prompts, this workspace"),
            ("/", "the agent's commands"),
            ("@", "mention a file (or an image)"),
            ("alt+v", "paste the clipboard's image"),
            ("backspace", "empty prompt: drop last image"),
            ("tab", "queue: enter edits, del removes"),
        ],
    ),
    (
        "Turn",
        [
            ("ctrl+c  esc", "cancel the turn, keep the draft"),
            ("ctrl+c  esc", "a held prompt: withdraw it"),
            ("ctrl+c again", "after a cancel: drop the queue"),
            ("ctrl+c", "on an empty prompt: quit"),
            ("ctrl+q", "quit"),
        ],
    ),
    (
        "Permission",
        [
            ("a  A", "allow once / always"),
            ("r  R", "reject once / always"),
            ("1 … 9", "the option of that number"),
            ("w  W", "rule: always allow / reject"),
            ("← → enter", "pick an option"),
        ],
    ),
    (
        "Changes view (f3)",
        [
            ("← →  ↑ ↓", "another turn / file"),
            ("n p", "next / previous hunk"),
            ("a x  A X", "accept / reject: hunk, file"),
            ("s", "send: revert, tell the agent"),
            ("e", "edit the file there ($EDITOR)"),
            ("h u R", "undo a hunk / file / turn"),
            ("U", "undo the last undo"),
        ],
    ),
    (
        "Conversations",
        [
            ("ctrl+n", "new conversation: pick its agent"),
            ("alt+←  alt+→", "previous / next conversation"),
            ("ctrl+pgup ctrl+pgdn", "the same"),
            ("ctrl+g", "the next that needs you"),
            ("alt+1 … alt+9", "conversation 1 … 9 (not in tmux)"),
            ("ctrl+w", "close it (with two or more)"),
        ],
    ),
    (
        "Transcript",
        [
            ("pgup pgdn", "scroll (up stops following)"),
            ("ctrl+end  end", "follow the stream again"),
            ("alt+↑  ctrl+↑", "browse blocks, then ↑ ↓ j k"),
            ("enter  space", "expand or fold the block"),
            ("c  y", "copy the block (OSC 52)"),
            ("ctrl+f", "search the whole session"),
        ],
    ),
    (
        "Panels",
        [
            ("f2", "mode, model, other settings"),
            ("f3", "what each turn changed; undo it"),
            ("shift+tab", "next mode"),
            ("f12", "protocol inspector"),
            ("ctrl+o", "sessions (f fork, del delete)"),
            ("ctrl+r", "restart a dead or stuck agent"),
            ("ctrl+p", "command palette"),
            ("f1", "this help"),
        ],
    ),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1,q", "dismiss", "Close")]

    DEFAULT_CSS = """
    HelpScreen > VerticalScroll {
        width: 118;
        max-width: 96%;
        height: auto;
        max-height: 94%;
        padding: 1 2;
        border: round $accent;
        border-title-color: $text-accent;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
        background: $surface;
    }
    HelpScreen Horizontal { height: auto; }
    HelpScreen Vertical { width: 1fr; height: auto; }
    HelpScreen Vertical.-left { margin: 0 4 0 0; }
    HelpScreen.-narrow #help-columns { layout: vertical; }
    HelpScreen.-narrow Vertical.-left { margin: 0 0 1 0; }
    HelpScreen .help--title { text-style: bold; color: $text-primary; margin: 1 0 0 0; }
    HelpScreen .help--title.-first { margin: 0; }
    HelpScreen .help--key { width: 21; text-style: bold; color: $text-accent; }
    HelpScreen .help--what { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.border_title = "Keys"
        scroll.border_subtitle = "esc to close · ctrl+p lists every action"
        with scroll, Horizontal(id="help-columns"):
            for groups, side in ((KEYS[:4], "-left"), (KEYS[4:], "")):
                with Vertical(classes=side):
                    yield from _groups(groups)

    def on_resize(self, event: events.Resize) -> None:
        # Two columns side by side leave a description too little room below this width.
        self.set_class(event.size.width < NARROW, "-narrow")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)


def _groups(groups: list[tuple[str, list[tuple[str, str]]]]) -> ComposeResult:
    """Each group's title, then a row a key: a description too long for its column wraps
    under itself, not under the keys."""
    for number, (title, keys) in enumerate(groups):
        yield Static(title, classes="help--title" + (" -first" if number == 0 else ""))
        for key, what in keys:
            with Horizontal():
                yield Static(key, classes="help--key", markup=False)
                yield Static(what, classes="help--what", markup=False)
