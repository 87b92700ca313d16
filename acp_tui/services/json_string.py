"""A JSON string, as sent, decoded a piece at a time: a file write's content of hundreds of
megabytes is never held as one Python string (decoding it whole costs about three times its
size at the peak, for the decoder's scratch space and the string)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import msgspec

PIECE = 1 << 20
"""About how many bytes of the JSON string each piece decodes."""

_ESCAPE_REACH = 12
"""The longest escape, a surrogate pair (`\\ud83d\\ude00`): a piece never ends closer than this
to a backslash, so no escape is cut in two."""

_SEARCH = 4096
"""How far from where a piece would end a place to cut it is looked for."""

_BACKSLASH = 0x5C


class JsonString:
    """The raw JSON of one string (quotes included, as `msgspec.Raw` holds it)."""

    def __init__(self, raw: msgspec.Raw) -> None:
        self._body = memoryview(raw)[1:-1]

    def __len__(self) -> int:
        """Bytes of JSON (escapes included): about the size of the text."""
        return len(self._body)

    def whole(self) -> str:
        return _decode(self._body)

    def pieces(self) -> Iterator[str]:
        """The text, in order, a piece of about `PIECE` bytes of JSON at a time. Raises
        `msgspec.DecodeError` for a string that is not valid JSON."""
        body, start = self._body, 0
        while start < len(body):
            end = _cut(body, start, start + PIECE)
            yield _decode(body[start:end])
            start = end


def _cut(body: memoryview, start: int, end: int) -> int:
    """Where a piece from `start` ending near `end` may end: not inside an escape, nor inside
    a character's UTF-8; the end of the string when no such place is near (escapes only)."""
    if end >= len(body):
        return len(body)
    before = range(end, max(end - _SEARCH, start), -1)
    after = range(end + 1, min(end + _SEARCH, len(body)))
    for at in itertools.chain(before, after):
        near = body[max(at - _ESCAPE_REACH, 0) : at]
        if _BACKSLASH not in near and not 0x80 <= body[at] < 0xC0:
            return at
    return len(body)


def _decode(body: memoryview) -> str:
    return msgspec.json.decode(b'"' + bytes(body) + b'"', type=str)
