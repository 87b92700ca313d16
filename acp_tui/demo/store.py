"""Sessions the demo agent has served, kept as one small JSON file each.

A session's history is stored in a protocol-neutral form (see `Turn`), so a session started
over v1 can be replayed over v2 and the other way round. Files live under
`$XDG_DATA_HOME/acp-tui/demo-sessions/` (or the platform's usual data directory), so
`session/list`, `session/load` and `session/resume` work across runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from acp_tui.paths import data_dir

SESSION_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")
"""What a session id may look like. Ids come from the client and name files, so anything
else (a `/`, a `..`) is refused rather than trusted."""


def now_iso() -> str:
    """The current time as ISO 8601 / RFC 3339, in UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def default_data_dir() -> Path:
    """Where the demo keeps its sessions when not told otherwise."""
    return data_dir() / "demo-sessions"


@dataclasses.dataclass
class SessionRecord:
    """Everything about a session that outlives the process."""

    session_id: str
    cwd: str
    additional_directories: list[str] = dataclasses.field(default_factory=list)
    title: str | None = None
    updated_at: str = dataclasses.field(default_factory=now_iso)
    mode: str = "ask"
    model: str = "demo-fast"
    show_thoughts: bool = True
    tokens_used: int = 0
    cost: float = 0.0
    history: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @classmethod
    def new(cls, cwd: str, additional_directories: list[str]) -> SessionRecord:
        return cls(f"sess_{uuid.uuid4().hex[:16]}", cwd, list(additional_directories))

    def to_json(self) -> bytes:
        return msgspec.json.encode(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, data: bytes) -> SessionRecord:
        # Not an object (`[1]`): a DecodeError, so the file is skipped like any broken one.
        raw = msgspec.json.decode(data, type=dict[str, Any])
        names = {field.name for field in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in raw.items() if key in names})


class SessionStore:
    """One JSON file per session in `directory`; `directory=None` keeps nothing on disk."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def _path(self, session_id: str) -> Path | None:
        if self.directory is None or not SESSION_ID.match(session_id):
            return None
        return self.directory / f"{session_id}.json"

    def save(self, record: SessionRecord) -> None:
        path = self._path(record.session_id)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".tmp")
            temporary.write_bytes(record.to_json())
            temporary.replace(path)
        except OSError as exc:  # a full disk must not break the session
            print(f"acp-tui demo: cannot save session {record.session_id}: {exc}", file=sys.stderr)

    def load(self, session_id: str) -> SessionRecord | None:
        path = self._path(session_id)
        if path is None:
            return None
        try:
            return SessionRecord.from_json(path.read_bytes())
        except (OSError, msgspec.DecodeError, TypeError):
            return None

    def all(self) -> list[SessionRecord]:
        if self.directory is None or not self.directory.is_dir():
            return []
        records = []
        for path in self.directory.glob("*.json"):
            with contextlib.suppress(OSError, msgspec.DecodeError, TypeError):
                records.append(SessionRecord.from_json(path.read_bytes()))
        return records

    def delete(self, session_id: str) -> None:
        path = self._path(session_id)
        if path is not None:
            path.unlink(missing_ok=True)
