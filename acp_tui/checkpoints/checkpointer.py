"""Checkpoints around each turn, for the front ends (the TUI and headless mode).

Before a prompt is sent the workspace is checkpointed, and again when the turn ends; then a
`changes` notice is added under the turn: `3 files changed +40 -12`, one line per file. Git
runs in a worker thread, never on the event loop. Without git (or when the shadow repository
cannot be made) checkpoints are off, said once, and everything else goes on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from acp_tui.checkpoints.git import GitFailed, GitMissing
from acp_tui.checkpoints.store import CheckpointError, CheckpointStore, Staged, WorkspaceTooLarge
from acp_tui.checkpoints.turns import SessionCheckpoints, TurnChanges, TurnCheckpoint

if TYPE_CHECKING:
    from acp_tui.session.session import Session

T = TypeVar("T")
FAILURES = (CheckpointError, GitFailed, OSError)
CHANGES = "changes"
"""The severity of the notice that sums up a turn's changes."""


class Checkpointer:
    """Takes the checkpoints of every session in one workspace."""

    def __init__(
        self,
        workspace: Path,
        *,
        root: Path | None = None,
        enabled: bool = True,
        ignore: Sequence[Path | None] = (),
        agent_state: Sequence[str] | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.workspace = workspace
        self.root = root
        self.ignore = [path for path in ignore if path is not None]
        """acp-tui's own files in the workspace, left out (a `--transcript`)."""
        self.agent_state = agent_state
        """Folders where agents keep their own state, left out and never rewound (None: the
        known ones, `ignores.AGENT_STATE`)."""
        self.unavailable: str | None = None if enabled else "checkpoints are turned off"
        """Why there are no checkpoints (None: there are)."""
        self.on_warning = on_warning or (lambda _message: None)
        self._warnings: list[str] = []
        """Said from a worker thread; passed on from the event loop."""
        self._store: CheckpointStore | None = None
        self._open_lock = threading.Lock()
        self._running: dict[str, asyncio.Future[TurnCheckpoint | None]] = {}
        """Session id -> the checkpoint before its turn (being committed), until it ends."""
        self._ahead: concurrent.futures.Future[Staged | None] | None = None
        """The workspace being staged for the next turn's checkpoint (`stage_ahead`)."""

    def store(self) -> CheckpointStore | None:
        """The workspace's store, opened on first use (blocks: call it from a thread)."""
        with self._open_lock:
            if self._store is None and self.unavailable is None:
                try:
                    self._store = CheckpointStore.open(
                        self.workspace,
                        self.root,
                        ignore=self.ignore,
                        agent_state=self.agent_state,
                    )
                except GitMissing:
                    self._off(
                        "Checkpoints are off: git was not found on PATH. Install git to see "
                        "and undo what each turn changed."
                    )
                except CheckpointError as error:
                    self._off(f"Checkpoints are off: {error}")
            return self._store

    def _off(self, message: str) -> None:
        self.unavailable = message
        self._warnings.append(message)

    async def _in_thread(self, function: Callable[[], T]) -> T:
        return await self._outcome(asyncio.to_thread(function))

    async def _outcome(self, work: Awaitable[T]) -> T:
        """What `work` (in a worker thread) came to, with what it said passed on."""
        try:
            return await work
        except WorkspaceTooLarge as error:
            # Said once; trying again each turn would walk it all again.
            self._off(
                f"Checkpoints are off in this workspace: {error}. A .gitignore leaves out what "
                "need not be kept; --no-checkpoints silences this."
            )
            raise
        finally:
            warnings, self._warnings = self._warnings, []
            for warning in warnings:
                self.on_warning(warning)

    def close(self) -> None:
        """No more checkpoints; the one being taken is abandoned (its git killed)."""
        if self._ahead is not None:
            self._ahead.cancel()  # one not begun yet is not begun at all
            self._ahead = None
        with self._open_lock:
            self.unavailable = self.unavailable or "closed"
            if self._store is not None:
                self._store.git.stop()

    def _stage(self) -> Staged | None:
        """The workspace staged as a tree (blocks: call it from a thread)."""
        store = self.store()
        return store.stage() if store is not None else None

    def session(self, session_id: str) -> SessionCheckpoints | None:
        """The checkpoints of one session (blocks: call it from a thread)."""
        store = self.store()
        return SessionCheckpoints(store, session_id) if store is not None else None

    async def warm_up(self) -> None:
        """Take a first snapshot ahead of the first turn, so that its checkpoint is quick (the
        first one hashes every file)."""

        def warm() -> None:
            store = self.store()
            if store is not None:
                store.snapshot("acp-tui: warm-up")

        try:
            await self._in_thread(warm)
        except FAILURES as error:
            if not isinstance(error, WorkspaceTooLarge):  # that one was said already
                self.on_warning(f"Checkpoints: {error}")

    def stage_ahead(self) -> None:
        """Stage the workspace for the next turn's checkpoint now, in a thread of its own (no
        event loop needs to run yet): for a prompt that is sent as soon as its session opens
        (headless), which then need not wait for it. What changes the workspace meanwhile (an
        agent writing as it starts) counts as that turn's."""
        if self.unavailable is not None or self._ahead is not None:
            return
        ahead = self._ahead = concurrent.futures.Future()

        def stage() -> None:
            if not ahead.set_running_or_notify_cancel():  # its turn was cancelled meanwhile
                return
            try:
                ahead.set_result(self._stage())
            except BaseException as error:  # for `before_turn` to take as its own
                ahead.set_exception(error)

        threading.Thread(target=stage, name="checkpoint ahead", daemon=True).start()

    async def before_turn(self, session: Session, prompt: str) -> bool:
        """The checkpoint before the turn `session` is about to run; False (with a notice in
        the session) when it could not be taken. It returns once the workspace is staged:
        the commit goes on beside the turn (`after_turn` waits for it)."""
        turn = session.state.turn + 1
        session_id = session.id

        def commit() -> TurnCheckpoint | None:
            checkpoints = self.session(session_id)
            if checkpoints is None:
                return None
            before = checkpoints.begin(turn, prompt, staged)
            # Kept for `after_turn` (which needs only the snapshots: not read back from refs).
            return TurnCheckpoint(
                session_id, turn, before=before.commit, skipped_before=before.skipped
            )

        staged = None
        try:
            if self._ahead is not None:
                ahead, self._ahead = self._ahead, None
                with contextlib.suppress(*FAILURES):  # if it fails again below, that is said
                    staged = await self._outcome(asyncio.wrap_future(ahead))
            if self.unavailable is not None:
                return False
            staged = staged or await self._in_thread(self._stage)
        except FAILURES as error:
            _said(session, "No checkpoint before this turn", error)
            return False
        if staged is None:
            return False
        committing = asyncio.ensure_future(self._in_thread(commit))
        # Its failure is said by `after_turn`; a turn cancelled twice never gets there.
        committing.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._running[session_id] = committing
        return True

    def discard(self, session: Session) -> None:
        """Forget the checkpoint before a turn that is not run after all (its prompt was
        withdrawn): the next turn takes its own, under the same number."""
        self._running.pop(session.id, None)

    async def after_turn(self, session: Session) -> TurnChanges | None:
        """The checkpoint after the turn that just ended, and a notice of what it changed
        (none when nothing did). None when the turn had no checkpoint before it."""
        committing = self._running.pop(session.id, None)
        if committing is None:
            return None
        try:
            checkpoint = await committing
        except FAILURES as error:
            _said(session, "No checkpoint before this turn", error)
            return None
        if checkpoint is None:
            return None
        session_id = session.id

        def take() -> TurnChanges | None:
            checkpoints = self.session(session_id)
            if checkpoints is None:
                return None
            after = checkpoints.end(checkpoint.turn)
            checkpoint.after, checkpoint.skipped_after = after.commit, after.skipped
            return checkpoints.changes(checkpoint)

        try:
            changes = await self._in_thread(take)
        except FAILURES as error:
            _said(session, "No checkpoint after this turn", error)
            return None
        if changes is not None and (changes.files or changes.skipped):
            session.notice(CHANGES, changes.summary(), "\n".join(changes.lines()))
        return changes

    async def run(self, function: Callable[[], T]) -> T:
        """Run a blocking checkpoint function off the event loop."""
        return await self._in_thread(function)


def _said(session: Session, title: str, error: Exception) -> None:
    """A checkpoint that failed, in the session (a workspace too large was said once already,
    as checkpoints went off)."""
    if not isinstance(error, WorkspaceTooLarge):
        session.notice("warning", title, str(error))
