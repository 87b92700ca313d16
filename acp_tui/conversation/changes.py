"""What each turn of a session changed in the workspace, and undoing it: the checkpoints of one
session, as a front end's changes view reads and rewinds them. Every git call runs off the
event loop (the checkpointer's threads); a failure raises one of `FAILURES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from acp_tui.checkpoints.checkpointer import FAILURES, Checkpointer
from acp_tui.checkpoints.store import FileChange, Snapshot
from acp_tui.checkpoints.turns import SessionCheckpoints, TurnChanges, TurnCheckpoint, counts
from acp_tui.session.session import Session

# Rewinding (and its diffs) is imported by the rewinds themselves: a headless run never
# rewinds, and the TUI not before the user asks.
if TYPE_CHECKING:
    from acp_tui.checkpoints.rewind import RewindPlan, RewindResult

__all__ = ["FAILURES", "SessionChanges"]

T = TypeVar("T")


class SessionChanges:
    """The checkpoints of `session`'s turns, to read and rewind."""

    def __init__(self, checkpointer: Checkpointer, session: Session) -> None:
        self._checkpointer = checkpointer
        self.session = session
        self._checkpoints: SessionCheckpoints | None = None

    @property
    def unavailable(self) -> str | None:
        """Why there are no checkpoints (None: there are)."""
        return self._checkpointer.unavailable

    @property
    def workspace(self) -> Path:
        return self._checkpointer.workspace

    @property
    def busy(self) -> bool:
        """A turn runs: files must not be rewound under it."""
        return self.session.busy

    async def _run(self, function: Callable[[], T]) -> T:
        return await self._checkpointer.run(function)

    def _session_checkpoints(self) -> SessionCheckpoints | None:
        """(Blocks: from a thread.)"""
        if self._checkpoints is None:
            self._checkpoints = self._checkpointer.session(self.session.id)
        return self._checkpoints

    async def read(self, turn: int | None) -> tuple[list[TurnCheckpoint], TurnChanges | None]:
        """The session's checkpointed turns, and what `turn` changed (the latest by default)."""

        def read() -> tuple[list[TurnCheckpoint], TurnChanges | None]:
            checkpoints = self._session_checkpoints()
            if checkpoints is None:
                return [], None
            turns = checkpoints.turns()
            chosen = next((t for t in turns if t.turn == turn), None)
            if chosen is None and turns:
                chosen = turns[-1]
            if chosen is None:
                return turns, None
            changes = checkpoints.changes(chosen)
            yours = {path for edit in checkpoints.edits(chosen.started) for path in edit.paths}
            changes.edited = [f.path for f in changes.files if f.path in yours]
            return turns, changes

        return await self._run(read)

    async def versions(self, change: FileChange) -> tuple[bytes, bytes] | None:
        """The file `change` is about, before and after (None: no checkpoints)."""
        store = await self._run(self._checkpointer.store)  # may open it: git
        if store is None:
            return None

        def read() -> tuple[bytes, bytes]:
            old = store.blob(change.old_blob) if change.status != "added" else b""
            new = store.blob(change.new_blob) if change.status != "deleted" else b""
            return old, new

        return await self._run(read)

    async def plan(self, plan_for: Callable[[SessionCheckpoints], RewindPlan]) -> RewindPlan | None:
        """A rewind planned on the session's checkpoints (None: there are none)."""
        checkpoints = await self._run(self._session_checkpoints)
        if checkpoints is None:
            return None
        return await self._run(lambda: plan_for(checkpoints))

    async def apply(self, plan: RewindPlan, *, skip_conflicts: bool) -> RewindResult | None:
        """Rewind as `plan` says (the files changed since left alone with `skip_conflicts`);
        None when there are no checkpoints. Raises `Stale` when the workspace moved on."""
        from acp_tui.checkpoints.rewind import apply_rewind

        store = await self._run(self._checkpointer.store)  # may open it: git
        if store is None:
            return None
        return await self._run(lambda: apply_rewind(store, plan, skip_conflicts=skip_conflicts))

    async def revert_hunks(
        self, turn: int, chosen: Mapping[str, Sequence[int]]
    ) -> RewindResult | None:
        """Put back the hunks `chosen` (their indexes, by file) as they were before `turn`."""
        from acp_tui.checkpoints.rewind import revert_hunks

        checkpoints = await self._run(self._session_checkpoints)
        if checkpoints is None:
            return None
        return await self._run(lambda: revert_hunks(checkpoints, turn, chosen))

    async def edit_begins(self) -> Snapshot | None:
        """The workspace as the user opens a file in their editor (None: no checkpoints)."""
        checkpoints = await self._run(self._session_checkpoints)
        return None if checkpoints is None else await self._run(checkpoints.edit_begins)

    async def edit_ends(self, before: Snapshot) -> list[FileChange]:
        """Their editor closed: what they changed is kept as theirs, and said in the session
        (a rewind then asks before putting it back, as for any change of theirs)."""
        checkpoints = await self._run(self._session_checkpoints)
        if checkpoints is None:
            return []
        files = await self._run(lambda: checkpoints.edit_ends(before))
        if files:
            names = ", ".join(f"{f.path} {counts(f)}" for f in files)
            detail = "Kept as your change, not the agent's: a rewind asks before undoing it."
            self.session.notice("info", f"You edited {names}", detail)
        return files

    async def undo_plan(self) -> RewindPlan | None:
        """What undoing the session's last rewind would put back (None: nothing to undo).
        Raises `NoCheckpoints`."""
        from acp_tui.checkpoints.rewind import rewinds, undo_plan

        store = await self._run(self._checkpointer.store)  # may open it: git
        if store is None:
            raise NoCheckpoints(self.unavailable or "")
        session_id = self.session.id
        done = await self._run(lambda: rewinds(store, session_id))
        if not done:
            return None
        return await self._run(lambda: undo_plan(store, done[-1], session_id))

    def said(
        self,
        result: RewindResult,
        what: str,
        verb: str = "Rewound",
        before: str = "",
        *,
        told: bool = False,
    ) -> tuple[str, str]:
        """Say in the session what a rewind did (it is part of its story): `verb` `what`,
        and how many files it put back; or, with `before` (the turn they went back to), when
        `what` names them (a file reverted, a hunk), what became of them; `told`: the agent
        is told in the next prompt (a review). A title and a line, for a notification."""
        count = len(result.restored)
        noun = "file" if count == 1 else "files"
        title = f"{verb} {what}"
        if not before:
            line = f"{count} {noun} put back"
        elif result.restored:
            line = f"As it was before {before}."
        else:
            title, line = f"Not {verb.lower()}: {what}", "Nothing was written."
        headline = title if before else f"{title}: {line}"
        detail = [line] if before else []
        detail += [f"left as it was: {path} ({reason})" for path, reason in result.failed]
        detail += [f"not put back: {path} ({reason})" for path, reason in result.not_put_back]
        detail.append(
            "U in the changes view (F3) undoes it. "
            + (
                "The agent is told, in your next prompt."
                if told
                else "The agent was not told: it sees the files as they are when it next reads "
                "them."
            )
        )
        self.session.notice("rewind", headline, "\n".join(detail))
        return title, line


class NoCheckpoints(Exception):
    """There are no checkpoints to rewind from; the message says why."""
