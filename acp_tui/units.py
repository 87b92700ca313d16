"""Sizes in words for people: one way everywhere (images, downloads), 1024-based."""

from __future__ import annotations


def human_size(size: int) -> str:
    """`512 B`, `12.0 KB`, `3.4 MB`."""
    value = float(size)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
