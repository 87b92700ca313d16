"""Images as bytes: their type from the first bytes, their size in pixels from the header.

PNG, JPEG, GIF and WebP are what agents take; each is recognised by its magic number, never by
a file name, and its width and height are read from its header without decoding a pixel. No
I/O and no imaging library: the demo agent and the headless mode use this as well as the UI.
Bytes that are cut short or made up give None or an `ImageError` with a reason, never a crash.
"""

from __future__ import annotations

import base64
import binascii
import struct

import msgspec

from acp_tui.text import human_size

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
KNOWN_TYPES = "PNG, JPEG, GIF or WebP"
SHOW_BYTES_LIMIT = 20 * 1024 * 1024
"""An image from the agent bigger than this (decoded) is a chip, not a picture."""
SHOW_PIXELS_LIMIT = 40_000_000
"""Nor one of more pixels than this (8000 by 5000): decoding it would take seconds and gigabytes."""
HEADER_PREFIXES = (64 * 1024, 1024 * 1024)
"""Base64 characters decoded to find an image's type and size: the header is near the start,
though a JPEG's frame header may follow a large EXIF thumbnail or colour profile."""
BASE64_WHITESPACE = " \t\n\r\f\v"
"""Skipped in base64 data: MIME and PEM wrap it over lines."""
_DROP_WHITESPACE = str.maketrans("", "", BASE64_WHITESPACE)

# JPEG markers that carry the frame's size (SOF0-15, less DHT, JPG and DAC which share the range).
_JPEG_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Markers that stand alone, without a length: TEM, RST0-7, SOI, EOI.
_JPEG_BARE_MARKERS = frozenset({0x01, *range(0xD0, 0xDA)})


class ImageError(ValueError):
    """Why bytes are not an image we can send or show; the message is for the user."""


class ImageInfo(msgspec.Struct, frozen=True):
    """What an image is: its MIME type, its size in pixels and in bytes."""

    mime_type: str
    width: int
    height: int
    size: int

    @property
    def pixels(self) -> str:
        """`640×480`: width by height, for labels."""  # noqa: RUF002
        return f"{self.width}×{self.height}"  # noqa: RUF001


def sniff_mime(data: bytes) -> str | None:
    """The MIME type the bytes begin like (PNG, JPEG, GIF or WebP), else None."""
    if data.startswith(PNG_SIGNATURE):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(data: bytes) -> tuple[int, int] | None:
    """(width, height) in pixels from the header, or None when it is cut short or bogus."""
    reader = _READERS.get(sniff_mime(data) or "")
    if reader is None:
        return None
    try:
        size = reader(data)
    except (struct.error, IndexError):
        return None
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return size


def inspect(data: bytes, size: int | None = None) -> ImageInfo:
    """What `data` is, or an `ImageError` saying why it is not an image we know. `data` may be
    only the image's first bytes when its whole `size` is given."""
    mime = sniff_mime(data)
    if mime is None:
        raise ImageError(f"not a {KNOWN_TYPES} image")
    pixels = dimensions(data)
    if pixels is None:
        raise ImageError(f"its {mime.removeprefix('image/').upper()} header is damaged")
    return ImageInfo(mime, pixels[0], pixels[1], len(data) if size is None else size)


def decode_data(data: str) -> bytes:
    """The bytes of an `image` block's base64 `data` (wrapped over lines or not), or an
    `ImageError`."""
    try:
        return base64.b64decode(_without_whitespace(data), validate=True)
    except (binascii.Error, ValueError) as error:
        raise ImageError("its data is not valid base64") from error


def decoded_size(data: str) -> int:
    """The bytes base64 `data` stands for, from its length alone, or an `ImageError` when that
    length cannot be base64's."""
    spaces = sum(map(data.count, BASE64_WHITESPACE))
    length = len(data) - spaces
    tail = _without_whitespace(data[-16:])
    padding = len(tail) - len(tail.rstrip("="))
    if length % 4 or padding > 2:
        raise ImageError("its data is not valid base64")
    return length // 4 * 3 - padding


def inspect_data(data: str) -> ImageInfo:
    """`inspect` for base64 `data`, from its length and its first characters only: chips are
    drawn on the event loop, again on every resize, and decoding megabytes there would stall
    it (a whole decode also validates the rest: that happens in a thread, when the picture is
    drawn). Nothing is cached, so no image outlives its block: this costs microseconds, and
    a millisecond or so for each megabyte, to count any whitespace."""
    size = decoded_size(data)
    head = b""
    for chars in HEADER_PREFIXES:
        head = _decode_prefix(data, chars)
        if chars >= len(data) or dimensions(head) is not None:
            break
    return inspect(head, size)


def _decode_prefix(data: str, chars: int) -> bytes:
    """The bytes of the first `chars` characters of base64 `data` (whole groups of four)."""
    if chars >= len(data):
        return decode_data(data)
    head = _without_whitespace(data[:chars])
    return decode_data(head[: len(head) - len(head) % 4])


def _without_whitespace(data: str) -> str:
    if any(char in data for char in BASE64_WHITESPACE):
        return data.translate(_DROP_WHITESPACE)
    return data


def too_large_to_show(info: ImageInfo) -> str | None:
    """Why an image is too big to draw (bytes or pixels), else None."""
    if info.size > SHOW_BYTES_LIMIT:
        return f"{human_size(info.size)} (the limit is {human_size(SHOW_BYTES_LIMIT)})"
    if info.width * info.height > SHOW_PIXELS_LIMIT:
        return f"{info.pixels} pixels (the limit is {SHOW_PIXELS_LIMIT // 1_000_000} megapixels)"
    return None


# -- headers ----------------------------------------------------------------------------------


def _png(data: bytes) -> tuple[int, int] | None:
    if data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _gif(data: bytes) -> tuple[int, int]:
    width, height = struct.unpack("<HH", data[6:10])
    return width, height


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":  # lossy: a key frame's start code, then 14-bit sizes
        if data[23:26] != b"\x9d\x01\x2a":
            return None
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":  # lossless: a signature byte, then width-1 and height-1 in 14 bits each
        if data[20] != 0x2F:
            return None
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":  # extended: the canvas, width-1 and height-1 in 24 bits each
        head = data[24:30]
        if len(head) < 6:
            return None
        return int.from_bytes(head[:3], "little") + 1, int.from_bytes(head[3:], "little") + 1
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """Walk the segments to the first frame header (it follows any EXIF or colour profile)."""
    position = 2
    end = len(data)
    while position < end:
        if data[position] != 0xFF:
            return None
        while position < end and data[position] == 0xFF:  # fill bytes
            position += 1
        marker = data[position]
        position += 1
        if marker in _JPEG_BARE_MARKERS:
            continue
        (length,) = struct.unpack(">H", data[position : position + 2])
        if marker in _JPEG_FRAME_MARKERS:
            height, width = struct.unpack(">HH", data[position + 3 : position + 7])
            return width, height
        if length < 2:
            return None
        position += length
    return None


_READERS = {"image/png": _png, "image/gif": _gif, "image/webp": _webp, "image/jpeg": _jpeg}
