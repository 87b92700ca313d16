"""Checkpoints: a snapshot of the workspace before and after every turn, in a shadow git
repository, to see what a turn changed and to undo it (see `store`, `turns`, `rewind`)."""

from acp_tui.checkpoints.git import GitFailed, GitMissing
from acp_tui.checkpoints.store import (
    CheckpointError,
    CheckpointStore,
    FileChange,
    Skipped,
    Snapshot,
)
from acp_tui.checkpoints.turns import SessionCheckpoints, TurnChanges, TurnCheckpoint, sessions

__all__ = [
    "CheckpointError",
    "CheckpointStore",
    "FileChange",
    "GitFailed",
    "GitMissing",
    "SessionCheckpoints",
    "Skipped",
    "Snapshot",
    "TurnChanges",
    "TurnCheckpoint",
    "sessions",
]
