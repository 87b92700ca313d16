"""Where a Markdown text can be cut without parsing it: in a flood, the text that scrolls past
unseen is cut into pieces here, and each is parsed only when it is rendered (`MarkdownView`)."""

from __future__ import annotations

import re

_OPENINGS = re.compile(r"\n {0,3}(?:(`{3,}|~{3,})(.*)|<)")
"""A line that may open a block blank lines do not end (a fence, an HTML block), with the
newline before it: starting with a newline lets the regex engine skip from one to the next."""
_CUT = re.compile(r"\n[ \t]*\n(?=[^ \t\n])(?![-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))", re.M)
"""A blank line, and after it a line at the left margin that is not a list item (which
would carry on a loose list)."""
_RAW_HTML = re.compile(
    r" {0,3}<(?:(script|pre|style|textarea)(?:[\s>]|$)|(!--)|(\?)|(!\[CDATA\[)|(![A-Za-z]))", re.I
)
"""The HTML blocks that blank lines do not end (CommonMark's kinds 1 to 5): one group each."""
_RAW_HTML_ENDS = ("", "-->", "\\?>", "]]>", ">")


def block_cuts(source: str, start: int = 0, step: int = 1) -> list[int]:
    """Offsets after `start`, at least `step` apart, where `source` can be cut into parts
    that, each parsed alone, give the top-level blocks the whole does: a line at the left
    margin after a blank line, not a list item, outside fenced code and the HTML blocks that
    blank lines do not end. The next cut is looked for from `step` after the last.

    A regex scan far cheaper than parsing: a flood's text that scrolls past unseen is cut here
    and parsed only when it is rendered. Where in doubt it does not cut (a fence the parser
    does not open, inside an HTML block, only delays the next cut)."""
    cuts: list[int] = []
    # Offsets in `lines` are the source's plus one: a line of the source starts where the
    # newline before it is in `lines`.
    lines = "\n" + source
    position, earliest = 0, start
    while True:
        opening = _OPENINGS.search(lines, position)
        end = len(lines) if opening is None else opening.end()
        while (cut := _CUT.search(lines, max(position, earliest), end)) is not None:
            cuts.append(cut.end() - 1)
            earliest = cut.end() - 1 + max(step, 1)
        if opening is None:
            return cuts
        after = _block_end(lines, opening)
        if after is None:
            return cuts  # an open fence or HTML block runs to the end
        position = after


def _block_end(lines: str, opening: re.Match[str]) -> int | None:
    """Where in `lines` the block `opening` may open ends (the newline after its last line), or
    None if it runs to the end."""
    if (marker := opening.group(1)) is not None:
        if marker[0] == "`" and "`" in opening.group(2):
            return opening.end()  # not a fence: a backtick fence's info has no backtick
        closing = re.compile(rf"\n {{0,3}}{marker[0]}{{{len(marker)},}}[ \t]*$", re.M)
        found = closing.search(lines, opening.end())
        return None if found is None else found.end()
    raw = _RAW_HTML.match(lines, opening.start() + 1)
    if raw is None:
        return opening.end()
    kind = raw.lastindex or 1
    end = rf"</{raw.group(1)}>" if kind == 1 else _RAW_HTML_ENDS[kind - 1]
    found = re.compile(end, re.I).search(lines, raw.end())
    if found is None:
        return None
    newline = lines.find("\n", found.end())
    return len(lines) if newline < 0 else newline
