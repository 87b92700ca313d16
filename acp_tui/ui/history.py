"""Prompt history, one file per workspace, newest last.

Kept in `$XDG_STATE_HOME/acp-tui/history/` (default `~/.local/state/acp-tui/history/`), one
JSON string per line, at most `LIMIT` entries. Walking it keeps the draft the user was writing,
so Down past the newest entry brings the draft back.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

LIMIT = 1000


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "acp-tui"


def history_path(workspace: Path, directory: Path | None = None) -> Path:
    digest = hashlib.sha256(str(workspace).encode()).hexdigest()[:16]
    return (directory or state_dir() / "history") / f"{workspace.name or 'root'}-{digest}.jsonl"


class PromptHistory:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: list[str] = self._load()
        self._index: int | None = None
        """Position while walking (None: not walking, at the draft)."""
        self._draft = ""

    def _load(self) -> list[str]:
        if self.path is None:
            return []
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return []
        entries = []
        for line in lines[-LIMIT:]:
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, str):
                entries.append(value)
        return entries

    def add(self, prompt: str) -> None:
        self._index = None
        if not prompt.strip() or (self.entries and self.entries[-1] == prompt):
            return
        self.entries.append(prompt)
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if len(self.entries) > LIMIT * 2:
                self.entries = self.entries[-LIMIT:]
                text = "".join(json.dumps(e) + "\n" for e in self.entries)
                self.path.write_text(text, encoding="utf-8")
            else:
                with self.path.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(prompt) + "\n")
        except OSError:
            pass  # history is a convenience: never fail a prompt over it

    def move(self, step: int, current: str) -> str | None:
        """The entry `step` away from where the walk is (-1: older), or None at either end."""
        if not self.entries:
            return None
        if self._index is None:
            if step > 0:
                return None
            self._draft = current
            self._index = len(self.entries)
        index = self._index + step
        if index < 0:
            return None
        if index >= len(self.entries):
            self._index = None
            return self._draft
        self._index = index
        return self.entries[index]

    def reset(self) -> None:
        self._index = None
