"""Markdown for the transcript: Rich's renderer with a designed look, and the block splitter
that lets a streaming message re-render only its growing tail.

A Markdown document is a run of top-level blocks (paragraphs, lists, fences, tables...). While
an answer streams, only the last blocks can still change; everything before them is final and
is rendered once. `finished_prefix` finds where that final part ends, with the same parser Rich
uses, so a split never falls inside a block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from rich import box
from rich import markdown as rich_markdown
from rich.console import Console, ConsoleOptions, RenderResult
from rich.rule import Rule
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from acp_tui.ui.render.lexers import lexer_named


def _markdown_it() -> MarkdownIt:
    """Rich's parser, with one change: a newline in a paragraph is a line break, as in chat
    apps (agents write `step 1\nstep 2` meaning two lines)."""
    parser = MarkdownIt("commonmark").enable("strikethrough").enable("table")
    parser.core.ruler.push("hard_breaks", _hard_breaks)
    return parser


def _hard_breaks(state: StateCore) -> None:
    """Each soft break a hard one: markdown-it's `breaks` option only changes the HTML it
    writes, and Rich draws a soft break as a space."""
    for token in state.tokens:
        if token.type == "inline" and token.children:
            for child in token.children:
                if child.type == "softbreak":
                    child.type = "hardbreak"


_PARSER = _markdown_it()
_BLOCK_RULES = ("normalize", "block")
_BLOCKS_ONLY = _markdown_it().disable(
    [rule for rule in _PARSER.core.ruler.get_active_rules() if rule not in _BLOCK_RULES]
)
"""`_PARSER` up to its blocks: their inline content (emphasis, links, code spans) is parsed
only for a block that is rendered (`Parsed.complete`). Splitting a flood into blocks this way
is ~2.5x faster, and most of a flood's blocks are never rendered while it streams
(bench/README.md, "Long answers (issue 29)")."""
_AFTER_BLOCKS = [
    rule for rule in _PARSER.core.ruler.getRules("") if rule.__name__ not in _BLOCK_RULES
]
"""What `_PARSER` does after its blocks (inline parsing, then what builds on it), in order."""

LIVE_BLOCKS = 1
"""Top-level blocks kept live at the end of a streaming message. A block is final once another
starts after it, with one harmless exception: `1. a` + blank line + `2` first reads as a list
and a paragraph; when `. b` arrives the two are one loose list, shown as two lists (the second
numbered from 2), which looks the same."""


@dataclass(slots=True, eq=False)
class Parsed:
    """The block-level tokens of a top-level block (so rendering it does not parse it again),
    and the definitions of its parse (link references), for its inline content."""

    tokens: list[Token]
    env: dict[str, object]
    inline_parsed: bool = False

    def complete(self) -> list[Token]:
        """The tokens with their inline content parsed, as `_PARSER.parse` gives them."""
        if not self.inline_parsed:
            state = StateCore("", _PARSER, self.env, self.tokens)
            for rule in _AFTER_BLOCKS:
                rule(state)
            self.inline_parsed = True
        return self.tokens


@dataclass(slots=True)
class SourceBlock:
    """A top-level block: its text and its parse."""

    text: str
    parsed: Parsed


def split_blocks(source: str) -> list[SourceBlock]:
    """`source` cut into its top-level blocks (the first one starts at 0, so the texts joined
    are `source`)."""
    env: dict[str, object] = {}
    tokens = _BLOCKS_ONLY.parse(source, env)
    firsts = [
        index
        for index, token in enumerate(tokens)
        if token.level == 0 and token.nesting >= 0 and token.map is not None
    ]
    if not firsts:
        return [SourceBlock(source, Parsed(tokens, env))] if source else []
    offsets: list[int] = []
    offset = line = 0
    for index in firsts:
        target = tokens[index].map[0]  # type: ignore[index]
        while line < target:
            offset = source.index("\n", offset) + 1
            line += 1
        offsets.append(offset)
    offsets[0] = 0
    ends = [*offsets[1:], len(source)]
    token_ends = [*firsts[1:], len(tokens)]
    return [
        SourceBlock(source[start:stop], Parsed(tokens[first:last], env))
        for start, stop, first, last in zip(offsets, ends, firsts, token_ends, strict=True)
    ]


def block_starts(source: str) -> list[int]:
    """Where each top-level block of `source` starts (character offsets)."""
    starts, offset = [], 0
    for block in split_blocks(source):
        starts.append(offset)
        offset += len(block.text)
    return starts


def finished_blocks(source: str, live_blocks: int = LIVE_BLOCKS) -> tuple[list[str], str]:
    """Split `source` into the top-level blocks nothing appended later can change, and the
    live rest (which may be empty, or whitespace)."""
    blocks = split_blocks(source)
    if len(blocks) <= live_blocks:
        return [], source
    finished = blocks[: len(blocks) - live_blocks]
    return [b.text for b in finished], "".join(b.text for b in blocks[len(finished) :])


class _Heading(rich_markdown.Heading):
    """Headings on the left, as in an editor; the first level underlined by a rule."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text.copy()
        text.justify = "left"
        yield text
        if self.tag == "h1":
            yield Rule(style="markdown.h1.border", characters="─")


class _CodeBlock(rich_markdown.CodeBlock):
    """Fenced code: highlighted, on its own panel colour, with the language named."""

    @classmethod
    def create(cls, markdown: rich_markdown.Markdown, token: Token) -> _CodeBlock:
        lexer = (token.info or "").partition(" ")[0]
        background = getattr(markdown, "code_background", None)
        block = cls(lexer or "text", markdown.code_theme)
        block.background = background
        return block

    background: str | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.syntax import Syntax

        code = str(self.text).rstrip()
        syntax = Syntax(
            code,
            lexer_named(self.lexer_name) or "text",
            theme=self.theme,
            word_wrap=True,
            padding=(0, 1),
            background_color=self.background,
        )
        if self.lexer_name not in ("text", ""):
            label = Text(f" {self.lexer_name} ", style="acp.faint", justify="right")
            label.stylize(f"on {self.background}" if self.background else "")
            yield label
        yield syntax


class _BlockQuote(rich_markdown.BlockQuote):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        render_options = options.update(width=options.max_width - 2)
        lines = console.render_lines(self.elements, render_options, style=self.style)
        bar = Segment("▎ ", console.get_style("markdown.block_quote.bar"))
        new_line = Segment("\n")
        for line in lines:
            yield bar
            yield from line
            yield new_line


class _HorizontalRule(rich_markdown.HorizontalRule):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Rule(style="markdown.hr", characters="─")


class _Table(rich_markdown.TableElement):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(
            box=box.SIMPLE_HEAD,
            border_style="markdown.table.border",
            header_style="markdown.table.header",
            show_edge=False,
            pad_edge=False,
            expand=False,
        )
        if self.header is not None and self.header.row is not None:
            for column in self.header.row.cells:
                table.add_column(column.content.copy(), justify=column.justify)
        if self.body is not None:
            for row in self.body.rows:
                table.add_row(*[cell.content for cell in row.cells])
        yield table


class _ListItem(rich_markdown.ListItem):
    """Numbers with a dot (`1.`), and task items (`[ ]`, `[x]`) as checkboxes."""

    def _task_mark(self) -> str | None:
        items = list(self.elements)
        first = items[0] if items else None
        text = getattr(first, "text", None)
        if not isinstance(text, Text):
            return None
        for prefix, mark in (("[ ] ", "☐"), ("[x] ", "☑"), ("[X] ", "☑")):
            if text.plain.startswith(prefix):
                first.text = text[len(prefix) :]  # type: ignore[union-attr]
                return mark
        return None

    def render_bullet(self, console: Console, options: ConsoleOptions) -> RenderResult:
        mark = self._task_mark()
        render_options = options.update(width=options.max_width - 3)
        lines = console.render_lines(self.elements, render_options, style=self.style)
        style = console.get_style("markdown.item.bullet", default="none")
        bullet = Segment(f" {mark or '•'} ", style)
        padding = Segment("   ", style)
        new_line = Segment("\n")
        for index, line in enumerate(lines):
            yield bullet if index == 0 else padding
            yield from line
            yield new_line

    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        width = len(str(last_number)) + 3
        render_options = options.update(width=options.max_width - width)
        lines = console.render_lines(self.elements, render_options, style=self.style)
        style = console.get_style("markdown.item.number", default="none")
        numeral = Segment(f"{number}.".rjust(width - 1) + " ", style)
        padding = Segment(" " * width, style)
        new_line = Segment("\n")
        for index, line in enumerate(lines):
            yield numeral if index == 0 else padding
            yield from line
            yield new_line


class TranscriptMarkdown(rich_markdown.Markdown):
    """Rich's Markdown with the transcript's look (see the element classes above)."""

    elements: ClassVar[dict[str, type[rich_markdown.MarkdownElement]]] = {
        **rich_markdown.Markdown.elements,
        "heading_open": _Heading,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
        "blockquote_open": _BlockQuote,
        "hr": _HorizontalRule,
        "table_open": _Table,
        "list_item_open": _ListItem,
    }

    def __init__(
        self,
        markup: str,
        code_theme: str,
        code_background: str | None,
        parsed: Parsed | None = None,
    ) -> None:
        # Not super().__init__: it builds a new MarkdownIt parser each time, which costs more
        # than rendering a streaming tail does; and the splitter may have parsed it already.
        self.markup = markup
        self.parsed = parsed.complete() if parsed is not None else _PARSER.parse(markup)
        self.code_theme = code_theme
        self.justify = None
        self.style = "none"
        self.hyperlinks = True
        self.inline_code_lexer = None
        self.inline_code_theme = code_theme
        self.code_background = code_background
