"""A session's checkpoints: one before each turn, one after it.

The checkpoint before turn N is what a rewind of turn N goes back to; the one after it says
what the turn changed (whoever wrote it: acp-tui for the agent, the agent itself, a command)
and, compared with later checkpoints, what the user changed between turns. Both live in the
workspace's shadow repository as refs,
`refs/acp-tui/sessions/<session>/<turn>/before` and `.../after`; each commit's message
carries the session id, the turn, the prompt's first line and what was skipped (JSON), so
`acp-tui changes` needs nothing else to read them back.
"""

from __future__ import annotations

import json
import re
import time
from typing import Literal

import msgspec

from acp_tui.checkpoints.store import (
    CheckpointStore,
    FileChange,
    Skipped,
    Snapshot,
    Staged,
    skipped_from,
)

REF_ROOT = "refs/acp-tui/sessions"
_SAFE_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")

Moment = Literal["before", "after"]
EDITS = "edits"
"""Under a session's refs, the user's own edits (made in their editor from the changes view):
`<session>/edits/<time>/before` and `.../after`."""


def session_key(session_id: str) -> str:
    """A session id as one component of a ref name (hex-encoded when git would refuse it)."""
    safe = _SAFE_ID.fullmatch(session_id) and ".." not in session_id
    if safe and not session_id.endswith((".lock", ".")):
        return session_id
    return "=" + session_id.encode("utf-8", "surrogateescape").hex()


def session_id_of(key: str) -> str:
    if key.startswith("="):
        return bytes.fromhex(key[1:]).decode("utf-8", "surrogateescape")
    return key


class TurnCheckpoint(msgspec.Struct):
    """The checkpoints of one turn (`after` is None while it runs, or if acp-tui stopped
    before it ended)."""

    session_id: str
    turn: int
    before: str | None = None
    after: str | None = None
    prompt: str = ""
    started: float | None = None
    """When the turn started (seconds since the epoch)."""
    skipped_before: list[Skipped] = msgspec.field(default_factory=list)
    skipped_after: list[Skipped] = msgspec.field(default_factory=list)


class TurnChanges(msgspec.Struct):
    """What one turn changed in the workspace."""

    checkpoint: TurnCheckpoint
    files: list[FileChange]
    skipped: list[Skipped] = msgspec.field(default_factory=list)
    """Files the turn created or grew that the checkpoint could not hold (too large, a
    link outside): their changes are not shown, and a rewind cannot bring them back."""
    running: bool = False
    """The turn has no checkpoint after it yet: compared with the workspace as it is now."""
    edited: list[str] = msgspec.field(default_factory=list)
    """Its files the user changed in their editor since it began (read with the changes
    view's turn, not with the notice under it)."""

    @property
    def turn(self) -> int:
        return self.checkpoint.turn

    @property
    def added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed or 0 for f in self.files)

    def summary(self) -> str:
        """`3 files changed +40 -12`, or `no files changed`."""
        count = len(self.files)
        if not count:
            return "no files changed"
        noun = "file" if count == 1 else "files"
        return f"{count} {noun} changed +{self.added} -{self.removed}"

    def lines(self) -> list[str]:
        """One line per file (`M app.py +3 -1`), then the skipped ones."""
        lines = [f"{f.letter} {f.path}  {counts(f)}" for f in self.files]
        lines += [f"skipped {s.path}: {s.reason}" for s in self.skipped]
        return lines


class UserEdit(msgspec.Struct):
    """Files the user changed in their editor, from acp-tui: checkpoints around it, so that
    what they did there is theirs, never counted as the agent's."""

    before: str
    after: str
    paths: list[str]
    time: float


def counts(change: FileChange) -> str:
    if change.binary:
        return "binary"
    return f"+{change.added} -{change.removed}"


def _meta_of(session_id: str, turn: int, moment: Moment, prompt: str) -> dict[str, object]:
    """A checkpoint's message, beside what it skipped (which the store adds)."""
    return {
        "session": session_id,
        "turn": turn,
        "moment": moment,
        "prompt": prompt,
        "time": time.time(),
    }


def _meta(message: str) -> dict[str, object]:
    _title, _, body = message.partition("\n\n")
    try:
        meta = json.loads(body)
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


class SessionCheckpoints:
    """The checkpoints of one session in one workspace. Every method blocks (git runs):
    front ends call them off the event loop."""

    def __init__(self, store: CheckpointStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.prefix = f"{REF_ROOT}/{session_key(session_id)}/"

    def _ref(self, turn: int, moment: Moment) -> str:
        return f"{self.prefix}{turn:06d}/{moment}"

    def begin(self, turn: int, prompt: str = "", staged: Staged | None = None) -> Snapshot:
        """The checkpoint before turn `turn` (taken as the turn starts, or of the workspace as
        it was `staged` a moment before)."""
        first_line = prompt.strip().splitlines()[0][:200] if prompt.strip() else ""
        snap = self.store.snapshot(
            f"acp-tui checkpoint: before turn {turn}",
            _meta_of(self.session_id, turn, "before", first_line),
            staged,
        )
        # A turn number seen again (a session reopened without its record): start afresh.
        self.store.set_refs({self._ref(turn, "before"): snap.commit}, [self._ref(turn, "after")])
        return snap

    def end(self, turn: int) -> Snapshot:
        """The checkpoint after turn `turn` (taken when it ended, however it ended)."""
        snap = self.store.snapshot(
            f"acp-tui checkpoint: after turn {turn}", _meta_of(self.session_id, turn, "after", "")
        )
        self.store.set_refs({self._ref(turn, "after"): snap.commit})
        return snap

    def edit_begins(self) -> Snapshot:
        """The workspace as the user opens a file of it in their editor."""
        return self.store.snapshot("acp-tui: before the user's edit")

    def edit_ends(self, before: Snapshot) -> list[FileChange]:
        """What the user changed since `before` (their editor closed), kept as a `UserEdit`
        (nothing is kept when nothing changed)."""
        staged = self.store.stage()
        files = self.store.changes(before.commit, staged.tree)
        if files:
            meta = {"session": self.session_id, "moment": "edit", "time": time.time()}
            meta["paths"] = [f.path for f in files]
            after = self.store.snapshot("acp-tui checkpoint: the user's edit", meta, staged)
            edit = f"{self.prefix}{EDITS}/{time.time_ns()}"
            self.store.set_refs({f"{edit}/before": before.commit, f"{edit}/after": after.commit})
        return files

    def edits(self, since: float | None = None) -> list[UserEdit]:
        """The user's edits in this session (those from `since` on, seconds since the
        epoch), in order."""
        commits: dict[str, dict[str, str]] = {}
        metas: dict[str, dict[str, object]] = {}
        for name, commit, message in self.store.refs(f"{self.prefix}{EDITS}"):
            stamp, _, end = name[len(self.prefix) + len(EDITS) + 1 :].partition("/")
            commits.setdefault(stamp, {})[end] = commit
            if end == "after":
                metas[stamp] = _meta(message)
        edits = []
        for stamp in sorted(commits, key=int):
            ends, meta = commits[stamp], metas.get(stamp, {})
            paths, when = meta.get("paths"), meta.get("time")
            if "before" not in ends or not isinstance(paths, list):
                continue
            moment = float(when) if isinstance(when, int | float) else 0.0
            if since is None or moment >= since:
                files = [str(path) for path in paths]
                edits.append(UserEdit(ends["before"], ends["after"], files, moment))
        return edits

    def turns(self) -> list[TurnCheckpoint]:
        """Every turn with a checkpoint, in order."""
        found: dict[int, TurnCheckpoint] = {}
        for name, commit, message in self.store.refs(self.prefix.rstrip("/")):
            parts = name[len(self.prefix) :].split("/")
            if len(parts) != 2 or not parts[0].isdigit() or parts[1] not in ("before", "after"):
                continue
            turn = int(parts[0])
            entry = found.setdefault(turn, TurnCheckpoint(self.session_id, turn))
            meta = _meta(message)
            skipped = skipped_from(meta.get("skipped"))
            if parts[1] == "before":
                entry.before = commit
                entry.prompt = str(meta.get("prompt", ""))
                started = meta.get("time")
                entry.started = float(started) if isinstance(started, int | float) else None
                entry.skipped_before = skipped
            else:
                entry.after = commit
                entry.skipped_after = skipped
        return [found[n] for n in sorted(found) if found[n].before is not None]

    def turn(self, number: int) -> TurnCheckpoint | None:
        return next((t for t in self.turns() if t.turn == number), None)

    def changes(self, checkpoint: TurnCheckpoint) -> TurnChanges:
        """What the turn changed: from the checkpoint before it to the one after it (to the
        workspace as it is now while it has none)."""
        assert checkpoint.before is not None
        after = checkpoint.after
        skipped_after = checkpoint.skipped_after
        running = after is None
        if after is None:
            now = self.store.snapshot("acp-tui: the workspace now")
            after, skipped_after = now.commit, now.skipped
        files = self.store.changes(checkpoint.before, after)
        before_skipped = {s.path for s in checkpoint.skipped_before}
        skipped = [s for s in skipped_after if s.path not in before_skipped]
        return TurnChanges(checkpoint, files, skipped, running=running)


def sessions(store: CheckpointStore) -> list[tuple[str, float]]:
    """`(session id, time of its latest checkpoint)` of every session with checkpoints in
    this workspace, the most recent first."""
    latest: dict[str, float] = {}
    for name, _commit, message in store.refs(REF_ROOT):
        key = name[len(REF_ROOT) + 1 :].split("/", 1)[0]
        when = _meta(message).get("time")
        stamp = float(when) if isinstance(when, int | float) else 0.0
        session_id = session_id_of(key)
        latest[session_id] = max(latest.get(session_id, 0.0), stamp)
    return sorted(latest.items(), key=lambda item: item[1], reverse=True)
