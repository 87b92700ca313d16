"""Pygments lexers for code: a fence's language, a file's name; built ahead in a thread.

Pygments (and Rich's Syntax, which imports it) are slow to import: not before the first frame
(bench/README.md, "Figures behind the code's choices"). They are imported on first use, or by
`warm_up` in a thread after the first frame.
"""

from __future__ import annotations

from fnmatch import fnmatch
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pygments.lexer import Lexer


@lru_cache(maxsize=1)
def _lexer_names() -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Pygments' own lexers: alias -> name, and (file pattern, name)."""
    from pygments.lexers._mapping import LEXERS

    aliases = {alias: name for _m, name, names, _f, _t in LEXERS.values() for alias in names}
    patterns = [(pattern, name) for _m, name, _a, files, _t in LEXERS.values() for pattern in files]
    return aliases, patterns


@lru_cache(maxsize=256)
def lexer_named(alias: str) -> Lexer | None:
    """The Pygments lexer for a fence's language, or None. Only Pygments' own lexers: asking
    Pygments for an unknown name scans every installed plugin (slow, and it imports IPython
    when that is installed), and a streaming fence shows many partial names (`py`, `pyt`...)
    (bench/README.md, "Figures behind the code's choices")."""
    from pygments.lexers import find_lexer_class_by_name

    name = _lexer_names()[0].get(alias.lower())
    return find_lexer_class_by_name(alias.lower())() if name else None


COMMON_LANGUAGES = (
    "python",
    "json",
    "bash",
    "console",
    "javascript",
    "typescript",
    "tsx",
    "rust",
    "go",
    "toml",
    "yaml",
    "diff",
    "html",
    "css",
    "sql",
    "java",
    "c",
    "cpp",
    "markdown",
    "text",
)


def warm_up() -> None:
    """Build the lexers agents use most. Pygments compiles a lexer's rules on first use, long
    enough to be seen: done once at startup, off the UI thread, the first code block of a
    stream does not stall it (bench/README.md, "Figures behind the code's choices")."""
    for language in COMMON_LANGUAGES:
        lexer = lexer_named(language)
        if lexer is not None:
            list(lexer.get_tokens("x = 1\n"))


@lru_cache(maxsize=256)
def lexer_for_path(path: str) -> Lexer | None:
    """The Pygments lexer for a file name (diffs and file contents), or None."""
    base = path.rsplit("/", 1)[-1]
    aliases, patterns = _lexer_names()
    for pattern, name in patterns:
        if fnmatch(base, pattern):
            for alias, lexer in aliases.items():
                if lexer == name:
                    return lexer_named(alias)
    return None
