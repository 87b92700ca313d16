"""The streaming Markdown view: split into finished blocks, render only the tail, lose nothing."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from acp_tui.demo.texts import MARKDOWN_SHOWCASE
from acp_tui.protocol.content import ContentBlock
from acp_tui.ui.render.lexers import lexer_for_path, lexer_named
from acp_tui.ui.render.markdown import (
    TranscriptMarkdown,
    block_starts,
    finished_blocks,
    split_blocks,
)
from acp_tui.ui.render.markdown_cuts import block_cuts
from acp_tui.ui.render.strip_cache import StripCache
from acp_tui.ui.widgets.markdown_view import MarkdownView


@pytest.mark.parametrize(
    ("source", "blocks", "tail"),
    [
        ("", [], ""),
        ("one paragraph", [], "one paragraph"),
        ("# Title\n\nbody", ["# Title\n\n"], "body"),
        ("a\n\nb\n\nc", ["a\n\n", "b\n\n"], "c"),
        ("```py\ncode\n\nmore", [], "```py\ncode\n\nmore"),  # an open fence is one block
        ("p\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", ["p\n\n"], "| a | b |\n|---|---|\n| 1 | 2 |\n"),
    ],
)
def test_finished_blocks_splits_before_the_live_block(
    source: str, blocks: list[str], tail: str
) -> None:
    assert finished_blocks(source) == (blocks, tail)


def test_any_chunking_finishes_the_same_blocks() -> None:
    """However the text is cut, the pieces joined are the text, and every finished block is
    one the whole text has too."""
    text = MARKDOWN_SHOWCASE * 3
    whole = set(_blocks(text))
    for seed in range(5):
        rng = random.Random(seed)
        tail, finished = "", []
        position = 0
        while position < len(text):
            step = rng.randint(1, 80)
            done, tail = finished_blocks(tail + text[position : position + step])
            finished.extend(done)
            position += step
        assert "".join(finished) + tail == text
        assert set(finished) <= whole | {tail}


def _blocks(text: str) -> list[str]:
    starts = block_starts(text)
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=False)]


TRICKY_BLOCKS = [
    "```py\ncode\n\nnot a paragraph\n\n```\n",
    "~~~~\n```\n\nstill code\n~~~~\n",
    "``` not ` a fence\n\nparagraph\n",
    "<!-- a comment\n\nstill the comment\n\n-->\n",
    "<script>\nlet a = 1;\n\nnot markdown\n</script>\n",
    "<div>\nends at a blank line\n\n",
    "<!DOCTYPE html>\n",
    "- one\n\n- two, a loose list\n\n  more of two\n",
    "1. first\n\n2. second\n\n10) another list\n",
    "- item\n\n  ```\n  fenced in the item\n\n  still fenced\n  ```\n",
    "    indented code\n\n    more of it\n",
    "> quote\n>\n> more quote\n",
    "> quote\n\n> another quote\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "Title\n=====\n",
    "---\n",
    "* * *\n",
    "plain paragraph\nwith a second line\n",
    "[ref]: https://example.com\n",
    "\n\n\n",
]


def test_block_cuts_fall_between_the_blocks_the_whole_text_has() -> None:
    """Each part cut at `block_cuts` parses alone to the very tokens the whole text has there
    (tricky blocks in random order: fences and HTML with blank lines, loose lists, indented
    code, quotes); a text of plain blocks is cut between every two of them, or after `start` and
    `step` apart."""
    rng = random.Random(7)
    for _ in range(200):
        text = "\n".join(rng.choice(TRICKY_BLOCKS) for _ in range(rng.randint(1, 12)))
        cuts = block_cuts(text)
        edges = [0, *cuts, len(text)]
        parts = [text[a:b] for a, b in pairwise(edges)]
        assert [t for part in parts for t in _tokens(part)] == _tokens(text), text
    plain = "# Title\n\npara one\n\npara two\nline\n\n```\ncode\n```\n\nlast"
    assert block_cuts(plain) == block_starts(plain)[1:]
    starts = block_starts(plain)
    assert block_cuts(plain, start=plain.index("para two")) == starts[3:]
    assert block_cuts(plain, step=starts[2]) == [starts[1], starts[3]]


def _tokens(text: str) -> list[tuple[str, str, str, str]]:
    return [
        (token.type, token.tag, token.content, token.info)
        for block in split_blocks(text)
        for token in block.parsed.tokens
    ]


def test_a_block_split_from_the_rest_is_parsed_as_if_parsed_whole() -> None:
    """The splitter parses only down to blocks; a block's inline content (emphasis, code, links,
    a link to a reference defined in another block of the same parse) is parsed when it is
    rendered, to the very tokens a whole parse gives, however often it is asked."""
    text = "[ref]: https://example.com\n\nSee **bold**, `code`, _it_ and [the site][ref].\n\n"
    text += MARKDOWN_SHOWCASE
    blocks = split_blocks(text)
    assert not any(token.children for block in blocks for token in block.parsed.tokens)
    completed = [token for block in blocks for token in block.parsed.complete()]
    assert [token for block in blocks for token in block.parsed.complete()] == completed
    whole = TranscriptMarkdown(text, "monokai", None).parsed
    assert completed == whole
    assert "https://example.com" in str(
        TranscriptMarkdown("", "monokai", None, blocks[0].parsed).parsed
    )


def test_lexers_are_found_without_plugins() -> None:
    assert lexer_named("python") is not None
    assert lexer_named("pyt") is None  # a fence still streaming its language name
    assert lexer_for_path("src/app.py") is not None
    assert lexer_for_path("notes.unknownext") is None


def test_strip_cache_keeps_a_budget_of_lines() -> None:
    class Piece:
        def __init__(self, n: int) -> None:
            self.lines: list[object] | None = [object()] * n

    cache = StripCache(budget=10)
    pieces = [Piece(4) for _ in range(4)]
    for piece in pieces:
        cache.touch(piece)  # type: ignore[arg-type]
    assert cache.size <= 10
    assert pieces[0].lines is None and pieces[-1].lines is not None


class _ViewApp(App[None]):
    CSS = "VerticalScroll { scrollbar-gutter: stable; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield MarkdownView(id="streamed")
            yield MarkdownView(MARKDOWN_SHOWCASE, id="whole")


def _text_lines(view: MarkdownView) -> list[str]:
    return [view.render_line(y).text.rstrip() for y in range(view._line_count())]


async def test_streamed_text_renders_like_the_whole_text() -> None:
    app = _ViewApp()
    async with app.run_test(size=(100, 40)) as pilot:
        streamed = app.query_one("#streamed", MarkdownView)
        whole = app.query_one("#whole", MarkdownView)
        rng = random.Random(7)
        position = 0
        while position < len(MARKDOWN_SHOWCASE):
            step = rng.randint(1, 12)
            streamed.append(MARKDOWN_SHOWCASE[position : position + step])
            position += step
            if rng.random() < 0.1:
                await pilot.pause()
        while not streamed.settled:
            await pilot.pause(0.02)
        await pilot.pause()
        assert streamed.source == MARKDOWN_SHOWCASE
        assert _text_lines(streamed) == _text_lines(whole)
        assert any("Markdown, streamed" in line for line in _text_lines(streamed))


async def test_only_the_tail_is_rendered_again() -> None:
    app = _ViewApp()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one("#streamed", MarkdownView)
        view.append("# One\n\nfirst paragraph\n\n")
        view.flush()
        await pilot.pause()
        pieces_before = list(view._pieces)
        view.append("second paragraph, still growing")
        view.flush()
        await pilot.pause()
        # The finished pieces are the same objects: not re-rendered, not re-created.
        assert view._pieces[: len(pieces_before)] == pieces_before
        assert view._tail == "second paragraph, still growing"


async def test_a_tail_slow_to_render_is_rendered_less_often_and_shows_in_the_end() -> None:
    """A tail that took long to render (a huge paragraph) is rendered again only after
    `TAIL_PACE` times as long: meanwhile its text is taken in and waits, and it shows once
    its turn comes."""
    app = _ViewApp()
    async with app.run_test(size=(100, 40)):
        view = app.query_one("#streamed", MarkdownView)
        view.append("a paragraph")
        view.flush()
        assert view.shown and "a paragraph" in _text_lines(view)[0]
        view._tail_cost = 3600.0  # as if it had taken an hour
        view.append(" that grows")
        view.flush()
        assert view._tail == "a paragraph that grows" and not view.shown
        assert "grows" not in _text_lines(view)[0]
        assert view._timer is not None  # a frame comes for it without more text
        view._tail_cost = 0.0
        view.flush()
        assert view.shown and "a paragraph that grows" in _text_lines(view)[0]


async def test_chips_sit_between_markdown_pieces() -> None:
    app = _ViewApp()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one("#streamed", MarkdownView)
        view.append("Here is the picture:")
        view.add_chip(
            ContentBlock(type="image", mime_type="image/png", data="aGVsbG8=", uri="cat.png")
        )
        view.append("\n\nand some text after it.")
        view.flush()
        await pilot.pause()
        lines = _text_lines(view)
        assert any("image" in line and "cat.png" in line and "image/png" in line for line in lines)
        assert lines.index(next(x for x in lines if "picture" in x)) < lines.index(
            next(x for x in lines if "cat.png" in x)
        )
        assert "after it" in lines[-1]


async def test_a_newline_in_a_paragraph_is_a_line_break() -> None:
    """As in chat apps: an agent's `Step 1\\nStep 2` is two lines, streamed or whole, in a
    paragraph or a list item (Rich draws markdown-it's soft break as a space)."""
    text = "Step 1: read\nStep 2: edit\n\n- an item\n  its second line\n\nlast"

    class Views(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield MarkdownView(id="streamed")
                yield MarkdownView(text, id="whole")

    app = Views()
    async with app.run_test(size=(100, 40)) as pilot:
        streamed = app.query_one("#streamed", MarkdownView)
        whole = app.query_one("#whole", MarkdownView)
        for start in range(0, len(text), 5):
            streamed.append(text[start : start + 5])
            await pilot.pause()
        while not (streamed.settled and whole.settled and whole._line_count()):
            await pilot.pause(0.02)
        for view in (streamed, whole):
            lines = [line.strip() for line in _text_lines(view) if line.strip()]
            assert lines == ["Step 1: read", "Step 2: edit", "• an item", "its second line", "last"]
