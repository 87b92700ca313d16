"""The groundwork for reading the config file: a problem found at a line, the checks every
table's values go through, and where in the text a key is."""

from __future__ import annotations

import re
from typing import Any, get_args

from acp_tui.config.model import Config, ConfigProblem
from acp_tui.services.permissions import Mode
from acp_tui.text import parse_size


class Invalid(Exception):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


class TableReader:
    """Checks a parsed document, finding the lines of what it complains about."""

    def __init__(self, config: Config, text: str) -> None:
        self.config = config
        self.locate = Locator(text)

    def problem(self, message: str, line: int | None) -> None:
        self.config.problems.append(ConfigProblem(self.config.path, line, message))

    def mode(self, value: Any, table: tuple[str, ...], key: str) -> Mode | None:
        if value is None or value in get_args(Mode):
            return value
        raise Invalid(f"`{key}` must be ask, allow or reject", self.locate.line(table, key))

    def size(self, value: Any, key: str) -> int:
        size = parse_size(value)
        if size is None:
            line = self.locate.line((), key)
            raise Invalid(f'`{key}` must be a number of bytes or a size like "500 MB"', line)
        return size

    def strings(self, value: Any, table: tuple[str, ...], key: str) -> list[str]:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        raise Invalid(f"`{key}` must be a list of strings", self.locate.line(table, key))

    def string_table(self, value: Any, table: tuple[str, ...], key: str) -> dict[str, str]:
        if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            return dict(value)
        line = self.locate.line(table, key)
        raise Invalid(f'`{key}` must be a table of strings, e.g. {{ NAME = "value" }}', line)


class Locator:
    """Finds the line (1-based) of a table or a key in the TOML text, for messages."""

    _HEADER = re.compile(r"^\s*\[\[?\s*(.+?)\s*\]\]?\s*(#.*)?$")

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.headers: list[tuple[int, tuple[str, ...]]] = []
        for number, line in enumerate(self.lines, 1):
            match = self._HEADER.match(line)
            if match is not None:
                self.headers.append((number, _split_key(match.group(1))))

    def line(self, table: tuple[str, ...], key: str | None = None, index: int = 0) -> int | None:
        """The line of `key` in `table` (the `index`-th one, for an array of tables), else
        of the table's header; a table written inline is found by its key in its parent."""
        starts = [n for n, path in self.headers if path == table]
        if len(starts) > index or not table:
            start = starts[index] if table else 0
            if key is None:
                return start
            end = next((n for n, _ in self.headers if n > start), len(self.lines) + 1)
            name = re.escape(key)
            pattern = re.compile(rf"^\s*(?:{name}|\"{name}\"|'{name}')\s*[=.]")
            for number in range(start + 1, end):
                if pattern.match(self.lines[number - 1]):
                    return number
            return start or None
        if len(table) > 1:
            return self.line(table[:-1], table[-1])
        return None


def _split_key(text: str) -> tuple[str, ...]:
    """`agents."my agent".env` -> ("agents", "my agent", "env")."""
    parts = re.findall(r"\"((?:[^\"\\]|\\.)*)\"|'([^']*)'|([^.\s]+)", text)
    return tuple(next(p for p in part if p) if any(part) else "" for part in parts)
