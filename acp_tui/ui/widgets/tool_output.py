"""A program's output inside a tool call, as the program wrote it: its lines and colours kept,
nothing read as Markdown, and how it ended when only the raw output says.

Agents that run commands themselves report the output as a plain `text` content item
(OpenCode, Qwen Code, fast-agent, Mistral Vibe), not a terminal: as Markdown, `# title` became
a heading, `__init__.py` lost its underscores and the lines ran together.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.strip import Strip

from acp_tui.protocol.content import ContentBlock, ToolCallContent, block_text, text_block
from acp_tui.session.state import ToolCallState
from acp_tui.session.terminals import raw_output_text
from acp_tui.ui.widgets.strips_view import StripsView, render_strips
from acp_tui.ui.widgets.terminal_view import EXPANDED_BYTES, FOLDED_LINES, exit_text

OUTPUT_KINDS = frozenset({"execute", "read", "search"})
"""Kinds whose text is a program's output: a command's, a file's lines, a search's matches."""
FENCES = ("```", "~~~")
EXIT_KEYS = ("exitCode", "exit_code", "exit")
"""Where agents put a command's exit status in `rawOutput` (or its `metadata`): Qwen Code's
`exitCode`, OpenCode's `metadata.exit`."""


def item_text(item: ToolCallContent) -> str | None:
    """The text of a `content` item that is text, else None."""
    block = item.content
    if item.type == "content" and isinstance(block, ContentBlock) and block.type == "text":
        return block_text(block)
    return None


def is_output(call: ToolCallState, item: ToolCallContent) -> bool:
    """Whether `item` is text a program wrote, to be shown as written.

    Text that opens with a fence is Markdown the agent wrote around the output (Claude Code's
    reads and errors), and a call with a terminal has its output there (Claude Code's Bash
    sends the command's description as text beside it)."""
    text = item_text(item)
    if text is None:
        return False
    if text.lstrip().startswith(FENCES):
        return False
    if "\x1b[" in text:
        return True  # colours only a program writes
    if any(other.type == "terminal" for other in call.content):
        return False
    return call.kind in OUTPUT_KINDS or runs_command(call)


def runs_command(call: ToolCallState) -> bool:
    """Whether the call runs a command: kind `execute`, or a `command` in its raw input
    (agents that name no kind, or another, for their shell tools)."""
    raw = call.raw_input
    command = raw.get("command") if isinstance(raw, dict) else None
    return call.kind == "execute" or isinstance(command, str | list)


def raw_output_item(call: ToolCallState) -> ToolCallContent | None:
    """A command's output that only its raw output carries, as a content item to show: Codex
    reports a command that ends at once in `rawOutput` alone (no terminal, no content)."""
    text = raw_output_text(call.raw_output)
    if text is None or not runs_command(call):
        return None
    if any(item.type == "terminal" for item in call.content):
        return None
    whole = text.strip()
    if any((item_text(item) or "").strip() == whole for item in call.content):
        return None  # in the content too (OpenCode sends it both ways)
    return ToolCallContent("content", content=text_block(text))


def raw_exit_code(raw_output: Any) -> int | None:
    """The exit status in a call's raw output, where some agents report it and nowhere
    else."""
    if not isinstance(raw_output, dict):
        return None
    for source in (raw_output, raw_output.get("metadata")):
        if not isinstance(source, dict):
            continue
        for key in EXIT_KEYS:
            code = source.get(key)
            if isinstance(code, int) and not isinstance(code, bool):
                return code
    return None


def folded(lines: list[Text], expanded: bool, tail: bool) -> list[Text]:
    """The lines shown: all of them expanded, else the last (a command's) or the first
    `FOLDED_LINES` (a file's or a search's), with a line saying what is left out."""
    hidden = len(lines) - FOLDED_LINES
    if expanded or hidden <= 0:
        return lines
    if tail:
        more = Text(f"… {hidden} earlier lines  (enter to expand)", "acp.muted")
        return [more, *lines[-FOLDED_LINES:]]
    more = Text(f"… {hidden} more lines  (enter to expand)", "acp.muted")
    return [*lines[:FOLDED_LINES], more]


class ToolOutput(StripsView):
    """One text item of a tool call that a program wrote."""

    DEFAULT_CSS = """
    ToolOutput {
        width: 1fr;
        height: auto;
        margin: 1 0 0 0;
        background: $background-darken-1 60%;
        padding: 0 1;
    }
    ToolOutput.-continued {
        margin: 0;
    }
    """

    def __init__(self, item: ToolCallContent) -> None:
        super().__init__()
        self._item = item
        self.tail = False
        """Folded to its last lines (a command's output ends with what matters), else its
        first."""
        self.expanded = False
        self.exit_code: int | None = None
        """How the command ended, said below the output (None: nothing to say)."""
        self._output: list[Text] | None = None

    def sync(self, item: ToolCallContent) -> None:
        if item is not self._item and item_text(item) != item_text(self._item):
            self._output = None
            self.invalidate()
        self._item = item

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self.invalidate()

    def show_command(self, *, tail: bool, exit_code: int | None) -> None:
        """Whether a command wrote it (`tail`), and how that command ended."""
        if (tail, exit_code) != (self.tail, self.exit_code):
            if tail != self.tail:
                self._output = None
            self.tail, self.exit_code = tail, exit_code
            self.invalidate()

    @property
    def lines(self) -> list[Text]:
        """The output's lines, its colours read from its escape sequences."""
        if self._output is None:
            text = item_text(self._item) or ""
            # A command's end is what matters; a file's or a search's beginning.
            text = text[-EXPANDED_BYTES:] if self.tail else text[:EXPANDED_BYTES]
            output = Text.from_ansi(text.rstrip("\n"))
            self._output = output.split("\n", allow_blank=True) if output.plain else []
        return self._output

    def _renderable(self) -> RenderableType:
        parts: list[RenderableType] = list(folded(self.lines, self.expanded, self.tail))
        if self.exit_code is not None:
            parts.append(exit_text(self.exit_code, None))
        return Group(*parts)

    def build_lines(self, width: int) -> list[Strip]:
        return render_strips(self.palette, self._renderable(), width)

    def text(self) -> str:
        return "\n".join(line.plain for line in self.lines)


class RawOutput(ToolOutput):
    """A command's output that only the call's raw output carries (`raw_output_item`): a block
    of its own, never continuing the text before it."""
