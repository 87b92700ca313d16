"""`acp-tui changes [SESSION] [--turn N] [--patch]`: what each turn changed in the workspace,
from the shell (and what `acp-tui rewind` shares with it).

Exit status: 0 done; 1 an error (no git, no checkpoints, no such session or turn), said on
stderr; 2 a usage error.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from acp_tui.checkpoints.git import GitFailed, GitMissing
from acp_tui.checkpoints.store import CheckpointError, CheckpointStore
from acp_tui.checkpoints.turns import SessionCheckpoints, TurnChanges, counts, sessions
from acp_tui.cli.printing import config, warn

EXIT_OK, EXIT_FAILED, EXIT_NOT_CONFIRMED = 0, 1, 3


class Failure(Exception):
    """A reason the command failed, said on stderr (exit status 1)."""


def open_store(workspace: Path) -> CheckpointStore:
    try:
        return CheckpointStore.open(workspace, create=False, agent_state=config().agent_state)
    except GitMissing as error:
        raise Failure(f"{error}: acp-tui keeps no checkpoints without git") from error
    except CheckpointError as error:
        raise Failure(f"{error} (acp-tui takes one before and after every turn)") from error


def find_session(store: CheckpointStore, wanted: str | None) -> str:
    """The session id `wanted` names (exactly or by a unique prefix); the latest without."""
    known = [session_id for session_id, _when in sessions(store)]
    if not known:
        raise Failure(f"no checkpoints were taken in {store.workspace}")
    if wanted is None:
        return known[0]
    if wanted in known:
        return wanted
    matches = [s for s in known if s.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    listing = ", ".join(known[:10])
    if matches:
        raise Failure(f"{wanted!r} names several sessions: {', '.join(matches[:10])}")
    raise Failure(f"no checkpoints of a session {wanted!r} here (there are: {listing})")


def when(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp).astimezone().strftime("%Y-%m-%d %H:%M")


def reported(
    command: Callable[[argparse.Namespace], int],
) -> Callable[[argparse.Namespace], int]:
    """Failures as one line on stderr and exit status 1."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (Failure, CheckpointError, GitFailed, OSError) as error:
            warn(str(error))
        return EXIT_FAILED

    return run


def run(args: argparse.Namespace, agent_command: list[str]) -> int:
    return _changes(args)


@reported
def _changes(args: argparse.Namespace) -> int:
    store = open_store(args.cwd)
    session_id = find_session(store, args.session)
    checkpoints = SessionCheckpoints(store, session_id)
    turns = checkpoints.turns()
    if args.turn is not None:
        turns = [t for t in turns if t.turn == args.turn]
        if not turns:
            raise Failure(f"session {session_id} has no checkpoint for turn {args.turn}")
    print(f"Session {session_id} in {store.workspace}")
    every, edits = checkpoints.turns(), checkpoints.edits()
    for checkpoint in turns:
        turn_changes = checkpoints.changes(checkpoint)
        _print_turn(turn_changes)
        # The user's edits in their editor from the changes view, under the turn they followed.
        after = next((t.started for t in every if t.turn > checkpoint.turn), None)
        for edit in edits:
            if edit.time >= (checkpoint.started or 0) and (after is None or edit.time < after):
                print(f"  ✎  {', '.join(edit.paths)}: edited by you, {when(edit.time)}")
        if args.patch and turn_changes.files:
            after = checkpoint.after or _now(store)
            assert checkpoint.before is not None
            sys.stdout.write(store.patch(checkpoint.before, after))
    return EXIT_OK


def _now(store: CheckpointStore) -> str:
    return store.snapshot("acp-tui: the workspace now").commit


def _print_turn(turn: TurnChanges) -> None:
    checkpoint = turn.checkpoint
    prompt = f" · {checkpoint.prompt[:60]}" if checkpoint.prompt else ""
    print(f"\nTurn {checkpoint.turn}{prompt} · {when(checkpoint.started)} · {turn.summary()}")
    if turn.running:
        print("  (no checkpoint after it: running, or acp-tui stopped first; compared with now)")
    width = max((len(f.path) for f in turn.files), default=0)
    for change in turn.files:
        print(f"  {change.letter}  {change.path:<{width}}  {counts(change)}")
    for skipped in turn.skipped:
        print(f"  -  {skipped.path}: not kept ({skipped.reason})")
