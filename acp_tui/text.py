"""Words for people: sizes (one way everywhere, 1024-based), money, text cut to fit a column,
code fenced in Markdown, and diffs as git writes them."""

from __future__ import annotations

import re


def human_size(size: int) -> str:
    """`512 B`, `12.0 KB`, `3.4 MB`."""
    value = float(size)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:([KMGT])i?)?B", re.IGNORECASE)


def parse_size(value: object) -> int | None:
    """A positive number of bytes, or a size as people write it ("500 MB", "1.5 GiB"; 1 KB =
    1024 B, as `human_size` shows them); None for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value > 0 else None
    match = _SIZE.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None or not float(match[1]) > 0:
        return None
    return int(float(match[1]) * 1024 ** "BKMGT".index((match[2] or "B").upper()))


def money(amount: float, currency: str = "USD") -> str:
    """`$1.25`, `$0.50`, `$0.0012`, `3.10 EUR`: cents, or four places where cents would round
    an agent's per-turn cost (often a fraction of a cent) away to nothing."""
    cents = round(amount, 2)
    number = f"{amount:.2f}" if abs(amount - cents) < 5e-7 or abs(amount) >= 1 else f"{amount:.4f}"
    return f"${number}" if currency in ("USD", "") else f"{number} {currency}"


def shorten(text: str, width: int) -> str:
    """`text` if it fits in `width` characters, else its start and an ellipsis, `width` in
    all."""
    return text if len(text) <= width else text[: max(width - 1, 0)].rstrip() + "…"


def fence(text: str, language: str = "") -> str:
    """`text` in a fenced code block whose fence no backtick run inside can close."""
    text = text.rstrip("\n")
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def git_style_diff(old_text: str, new_text: str, old_name: str, new_name: str) -> str:
    """The unified diff of two texts as `git diff` writes it ("" if they are the same): lines
    end at `\\n` only, and a last line without one is followed by `\\ No newline at end of
    file`."""
    import difflib  # here: a diff is for a file written, not for every start-up

    lines = difflib.unified_diff(
        _lines(old_text), _lines(new_text), fromfile=old_name, tofile=new_name
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def _lines(text: str) -> list[str]:
    """Lines split at `\\n` only (like git, unlike `str.splitlines`), each keeping its `\\n`."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
