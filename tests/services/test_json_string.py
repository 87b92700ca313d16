"""`JsonString`: a write's content decoded a piece at a time gives back exactly the text,
wherever the pieces are cut (escapes, surrogate pairs and UTF-8 never split)."""

from __future__ import annotations

import json

import msgspec
import pytest

from acp_tui.services import json_string
from acp_tui.services.json_string import JsonString

TEXTS = [
    "plain ascii " * 50,
    'quotes " and \\ backslashes \\\\ and \n newlines \t tabs ' * 20,
    "é ü 中文 😀 " * 40,  # several bytes a character
    "\U0001f600" * 100,  # as ensure_ascii sends it: surrogate pairs, 12 bytes each
    "\\" * 300,  # escapes only: nowhere to cut
    "",
]


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("piece", [1, 7, 13, 64])
def test_the_pieces_are_the_text(
    monkeypatch: pytest.MonkeyPatch, text: str, piece: int, ensure_ascii: bool
) -> None:
    monkeypatch.setattr(json_string, "PIECE", piece)
    raw = json.dumps({"content": text}, ensure_ascii=ensure_ascii).encode()
    content = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])["content"]
    string = JsonString(content)
    pieces = list(string.pieces())
    assert "".join(pieces) == text == string.whole()
    if b"\\" not in raw and piece < len(text):  # a place to cut: cut
        assert len(pieces) > 1


def test_an_invalid_escape_is_a_decode_error() -> None:
    with pytest.raises(msgspec.DecodeError):
        list(JsonString(msgspec.Raw(b'"bad \\q escape"')).pieces())
