"""`acp-tui changes [SESSION] [--turn N] [--patch]` and `acp-tui rewind SESSION --turn N`:
what each turn changed in the workspace, and putting it back, from the shell.

Exit status: 0 done; 1 an error (no git, no checkpoints, no such session or turn), said on
stderr; 2 a usage error; 3 (`rewind`) nothing was done because it was not confirmed.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from acp_tui.checkpoints.git import GitFailed, GitMissing
from acp_tui.checkpoints.rewind import (
    RewindPlan,
    apply_rewind,
    plan_rewind,
    rewinds,
    undo_plan,
)
from acp_tui.checkpoints.store import CheckpointError, CheckpointStore
from acp_tui.checkpoints.turns import SessionCheckpoints, TurnChanges, counts, sessions

EXIT_OK, EXIT_FAILED, EXIT_NOT_CONFIRMED = 0, 1, 3


class _Failure(Exception):
    pass


def run(name: str, argv: Sequence[str]) -> int:
    """`acp-tui changes ...` or `acp-tui rewind ...`."""
    return changes(argv) if name == "changes" else rewind(argv)


def _warn(message: str) -> None:
    print(f"acp-tui: {message}", file=sys.stderr)


def _store(workspace: Path) -> CheckpointStore:
    try:
        return CheckpointStore.open(workspace, create=False)
    except GitMissing as error:
        raise _Failure(f"{error}: acp-tui keeps no checkpoints without git") from error
    except CheckpointError as error:
        raise _Failure(f"{error} (acp-tui takes one before and after every turn)") from error


def _session(store: CheckpointStore, wanted: str | None) -> str:
    """The session id `wanted` names (exactly or by a unique prefix); the latest without."""
    known = [session_id for session_id, _when in sessions(store)]
    if not known:
        raise _Failure(f"no checkpoints were taken in {store.workspace}")
    if wanted is None:
        return known[0]
    if wanted in known:
        return wanted
    matches = [s for s in known if s.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    listing = ", ".join(known[:10])
    if matches:
        raise _Failure(f"{wanted!r} names several sessions: {', '.join(matches[:10])}")
    raise _Failure(f"no checkpoints of a session {wanted!r} here (there are: {listing})")


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp).astimezone().strftime("%Y-%m-%d %H:%M")


# -- changes ---------------------------------------------------------------------------------------


def _reported(command: Callable[[Sequence[str]], int]) -> Callable[[Sequence[str]], int]:
    """Failures as one line on stderr and exit status 1."""

    @functools.wraps(command)
    def run(argv: Sequence[str]) -> int:
        try:
            return command(argv)
        except (_Failure, CheckpointError, GitFailed, OSError) as error:
            _warn(str(error))
        return EXIT_FAILED

    return run


@_reported
def changes(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="acp-tui changes",
        usage="acp-tui changes [SESSION] [--turn N] [--patch] [--cwd DIR]",
        description="What each turn of a session changed in the workspace (whoever wrote it: "
        "the agent through acp-tui, the agent itself, a command it ran), from the "
        "checkpoints acp-tui takes before and after every turn.",
    )
    parser.add_argument(
        "session", nargs="?", metavar="SESSION", help="a session id or prefix (default: the latest)"
    )
    parser.add_argument("--turn", type=int, metavar="N", help="only turn N")
    parser.add_argument("--patch", action="store_true", help="the diffs too, as a patch")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the workspace")
    args = parser.parse_args(argv)
    store = _store(args.cwd)
    session_id = _session(store, args.session)
    checkpoints = SessionCheckpoints(store, session_id)
    turns = checkpoints.turns()
    if args.turn is not None:
        turns = [t for t in turns if t.turn == args.turn]
        if not turns:
            raise _Failure(f"session {session_id} has no checkpoint for turn {args.turn}")
    print(f"Session {session_id} in {store.workspace}")
    for checkpoint in turns:
        turn_changes = checkpoints.changes(checkpoint)
        _print_turn(turn_changes)
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
    print(f"\nTurn {checkpoint.turn}{prompt} · {_when(checkpoint.started)} · {turn.summary()}")
    if turn.running:
        print("  (no checkpoint after it: running, or acp-tui stopped first; compared with now)")
    width = max((len(f.path) for f in turn.files), default=0)
    for change in turn.files:
        print(f"  {change.letter}  {change.path:<{width}}  {counts(change)}")
    for skipped in turn.skipped:
        print(f"  -  {skipped.path}: not kept ({skipped.reason})")


# -- rewind ------------------------------------------------------------------------------------


@_reported
def rewind(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="acp-tui rewind",
        usage="acp-tui rewind SESSION (--turn N [--file PATH ...] | --undo) [--yes] [--cwd DIR]",
        description="Put the workspace's files back as they were before turn N of a session "
        "(from acp-tui's checkpoints). The files as they are now are kept first: --undo puts "
        "them back.",
    )
    parser.add_argument("session", metavar="SESSION", help="a session id or prefix")
    parser.add_argument("--turn", type=int, metavar="N", help="rewind to before turn N")
    parser.add_argument(
        "--file", action="append", metavar="PATH", help="only this file (repeatable)"
    )
    parser.add_argument("--undo", action="store_true", help="undo the session's last rewind")
    parser.add_argument(
        "--yes", action="store_true", help="do not ask (files you changed are overwritten too)"
    )
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the workspace")
    args = parser.parse_args(argv)
    if (args.turn is None) == (not args.undo):
        parser.error("give --turn N or --undo")
    store = _store(args.cwd)
    session_id = _session(store, args.session)
    if args.undo:
        done = rewinds(store, session_id)
        if not done:
            raise _Failure(f"session {session_id} has no rewind to undo")
        plan = undo_plan(store, done[-1], session_id)
    else:
        paths = [_relative(store, p) for p in args.file] if args.file else None
        plan = plan_rewind(SessionCheckpoints(store, session_id), args.turn, paths)
    return _rewind(store, plan, args.yes, session_id)


def _relative(store: CheckpointStore, path: str) -> str:
    """A path given on the command line, as a path in the workspace."""
    full = Path(path) if Path(path).is_absolute() else Path.cwd() / path
    try:
        return Path(full.absolute()).relative_to(store.workspace).as_posix()
    except ValueError:
        # Not under the workspace as given: take it as relative to the workspace.
        return Path(path).as_posix()


def _rewind(store: CheckpointStore, plan: RewindPlan, yes: bool, session_id: str) -> int:
    what = f"before {plan.label}" if plan.turn else "before the rewind"
    if not plan.files:
        print(f"Nothing to do: the files are as they were {what}.")
        return EXIT_OK
    print(f"Putting back {len(plan.files)} file(s) as they were {what}:")
    for restore in plan.files:
        verb = "delete" if restore.action == "delete" else "restore"
        mark = "  (changed after the turn: yours?)" if restore.user_changed else ""
        print(f"  {verb:<8}{restore.path}{mark}")
    conflicts = plan.conflicts
    if not yes:
        question = "Go ahead?"
        if conflicts:
            question = (
                f"{len(conflicts)} file(s) changed after the turn ended will be overwritten "
                "(they are kept: --undo brings them back). Go ahead?"
            )
        if not sys.stdin.isatty():
            _warn("not rewound: pass --yes to do it without being asked")
            return EXIT_NOT_CONFIRMED
        answer = input(f"{question} [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("Nothing was changed.")
            return EXIT_NOT_CONFIRMED
    result = apply_rewind(store, plan)  # Stale is a CheckpointError: said by _reported
    print(f"Put back {len(result.restored)} file(s).")
    for path, reason in result.failed:
        _warn(f"{path}: not put back: {reason}")
    print(f"Undo it with: acp-tui rewind {session_id} --undo")
    return EXIT_FAILED if result.failed else EXIT_OK
