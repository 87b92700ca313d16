"""`acp-tui rewind SESSION --turn N [--file PATH] [--yes]` and `acp-tui rewind SESSION --undo`:
put the workspace's files back as they were before a turn, from the shell.

Exit status: 0 done; 1 an error, or a path not put back (a checkpoint did not save it), said
on stderr; 2 a usage error; 3 nothing was done because it was not confirmed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acp_tui.checkpoints.rewind import RewindPlan, apply_rewind, plan_rewind, rewinds, undo_plan
from acp_tui.checkpoints.store import CheckpointStore
from acp_tui.checkpoints.turns import SessionCheckpoints
from acp_tui.cli.changes import (
    EXIT_FAILED,
    EXIT_NOT_CONFIRMED,
    EXIT_OK,
    Failure,
    find_session,
    open_store,
    reported,
)
from acp_tui.cli.printing import warn


def run(args: argparse.Namespace, agent_command: list[str]) -> int:
    if (args.turn is None) == (not args.undo):
        print("acp-tui rewind: give --turn N or --undo", file=sys.stderr)
        return 2
    return _rewind_session(args)


@reported
def _rewind_session(args: argparse.Namespace) -> int:
    store = open_store(args.cwd)
    session_id = find_session(store, args.session)
    if args.undo:
        done = rewinds(store, session_id)
        if not done:
            raise Failure(f"session {session_id} has no rewind to undo")
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
        if plan.not_put_back:
            print(f"Nothing can be put back as it was {what}.")
            _say_not_put_back(plan.not_put_back)
            return EXIT_FAILED
        print(f"Nothing to do: the files are as they were {what}.")
        return EXIT_OK
    if plan.paths:  # files named: said as reverting them, not as a rewind of their turn
        print(f"Reverting {', '.join(plan.paths)} to how it was {what}:")
    else:
        print(f"Putting back {len(plan.files)} file(s) as they were {what}:")
    for restore in plan.files:
        verb = "delete" if restore.action == "delete" else "restore"
        mark = "  (changed after the turn: yours?)" if restore.user_changed else ""
        print(f"  {verb:<8}{restore.path}{mark}")
    for path, reason in plan.not_put_back:
        print(f"  {'keep':<8}{path}  (not put back: {reason})")
    conflicts = plan.conflicts
    if not yes:
        question = "Go ahead?"
        if conflicts:
            question = (
                f"{len(conflicts)} file(s) changed after the turn ended will be overwritten "
                "(they are kept: --undo brings them back). Go ahead?"
            )
        if not sys.stdin.isatty():
            warn("not rewound: pass --yes to do it without being asked")
            return EXIT_NOT_CONFIRMED
        answer = input(f"{question} [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("Nothing was changed.")
            return EXIT_NOT_CONFIRMED
    result = apply_rewind(store, plan)  # Stale is a CheckpointError: said by `reported`
    if plan.paths and result.restored:
        print(f"Reverted {', '.join(result.restored)}.")
    else:
        print(f"Put back {len(result.restored)} file(s).")
    for path, reason in result.failed:
        warn(f"{path}: not put back: {reason}")
    _say_not_put_back(result.not_put_back)
    print(f"Undo it with: acp-tui rewind {session_id} --undo")
    return EXIT_FAILED if result.failed or result.not_put_back else EXIT_OK


def _say_not_put_back(paths: list[tuple[str, str]]) -> None:
    for path, reason in paths:
        warn(f"{path}: not put back: {reason}")
