"""The demo agent's own picture: a small PNG drawn with the standard library (zlib, struct).

A rainbow that fades to night, with a ring in the middle: colourful enough to see at a glance
that an image arrived and is drawn the right way up.
"""

from __future__ import annotations

import colorsys
import struct
import zlib

from acp_tui.protocol.images import PNG_SIGNATURE

WIDTH = 96
HEIGHT = 64


def demo_png(width: int = WIDTH, height: int = HEIGHT) -> bytes:
    """An RGB PNG of `width` by `height` pixels."""
    rows = bytearray()
    centre_x, centre_y = width / 2, height / 2
    radius = min(width, height) * 0.3
    ring = max(0.8, radius * 0.2)
    for y in range(height):
        rows.append(0)  # filter: none
        light = 0.85 - 0.55 * y / max(1, height - 1)
        for x in range(width):
            distance = ((x + 0.5 - centre_x) ** 2 + (y + 0.5 - centre_y) ** 2) ** 0.5
            if abs(distance - radius) < ring:
                rgb = (1.0, 1.0, 1.0)
            else:
                rgb = colorsys.hls_to_rgb(x / width, light * 0.6, 0.9)
            rows.extend(round(channel * 255) for channel in rgb)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        PNG_SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
