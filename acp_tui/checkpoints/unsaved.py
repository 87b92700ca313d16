"""What a rewind must leave as it is: the paths whose state one of the two checkpoints it goes
between did not save.

A rewind compares the workspace now (a checkpoint taken as it is planned) with the checkpoint
it goes back to, the target. A path the target skipped (too large, a link to outside the
workspace, a repository of its own, unreadable, not a regular file) or ignored reads there as
absent: put back naively, the path would be deleted, and what was there is gone for good,
since no checkpoint holds it. Likewise a path the checkpoint of now skipped, that the target
does not hold: deleting it could not be undone. Such paths are not touched; each is listed as
not put back, with the reason. So is a path in a folder where an agent keeps its own state
(its sessions, the locks it holds while it runs): a checkpoint taken before the folder was
known to be one may hold it, but it is the agent's, not the user's work.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence

from acp_tui.checkpoints.ignores import in_agent_state
from acp_tui.checkpoints.store import CheckpointStore, FileChange, Skipped, Snapshot, stamp

NOT_SAVED = "the checkpoint did not save how it was"


def not_put_back(
    store: CheckpointStore,
    target: str,
    now: Snapshot,
    changes: Sequence[FileChange],
    wanted: Collection[str] | None = None,
) -> dict[str, str]:
    """The paths a rewind from `now` to `target` must leave alone, and why: those of `changes`
    (from now to the target) and those no change lists. `wanted`: the rewind is of these
    paths only."""
    left: dict[str, str] = {}
    for change in changes:
        folder = in_agent_state(change.path, store.agent_state)
        if folder is not None:
            left[change.path] = f"an agent's own state ({folder}/): left to the agent"
    then = store.unsaved(target)
    if then is None:
        return left  # an older checkpoint that does not say: the rest of what it holds goes back
    skipped_then = {s.path: s for s in then}
    changed = {change.path for change in changes}
    # Held now, absent from the target: deleting them is right only if they were not there.
    deletions = [change.path for change in changes if change.status == "deleted"]
    for path in deletions:
        skipped = _covering(skipped_then, path)
        if skipped is not None:
            where = "" if skipped.path == path else f"{skipped.path}: "
            left[path] = f"{NOT_SAVED} ({where}{skipped.reason})"
    if any(_is_ignore_file(path) for path in changed):
        # The rules changed in between: a path ignored then, and so absent, may be old.
        for path in store.ignored(target, [p for p in deletions if p not in left]):
            left[path] = f"{NOT_SAVED} (it was ignored)"
    # Skipped then, and no change says so: what it was cannot be put back if it changed.
    skipped_now = {s.path: s for s in now.skipped}
    root = str(store.workspace)
    for skipped in then:
        if skipped.path in left or skipped.path in changed or not _wanted(skipped.path, wanted):
            continue
        if not _changed(root, skipped, skipped_now.get(skipped.path)):
            continue
        left[skipped.path] = f"{NOT_SAVED} ({skipped.reason})"
    # Skipped now, not in the target: the turn (or someone since) made it; it stays.
    for skipped in now.skipped:
        path = skipped.path
        if path in left or path in changed or path in skipped_then or not _wanted(path, wanted):
            continue
        left[path] = (
            f"the checkpoint does not hold it, but deleting it could not be undone "
            f"({skipped.reason})"
        )
    return left


def _covering(skipped: dict[str, Skipped], path: str) -> Skipped | None:
    """The skipped entry for `path` or for a directory above it (a link to outside that is a
    directory now, a repository of its own that is not one any more)."""
    parts = path.split("/")
    for end in range(len(parts), 0, -1):
        found = skipped.get("/".join(parts[:end]))
        if found is not None:
            return found
    return None


def _changed(root: str, then: Skipped, now: Skipped | None) -> bool:
    """Whether a path skipped then is not as it was (gone, or another thing)."""
    if now is None:
        # Not skipped now: gone, ignored, or what git lists only once, as it stops being a
        # file (a FIFO, a socket): what is there tells.
        return not then.stamp or stamp(os.path.join(root, then.path)) != then.stamp
    if now.reason != then.reason:
        return True
    # No stamp (a repository of its own, an older checkpoint): nothing says it changed.
    return bool(then.stamp) and then.stamp != now.stamp


def _wanted(path: str, wanted: Collection[str] | None) -> bool:
    if wanted is None:
        return True
    return any(path == w or path.startswith(w + "/") or w.startswith(path + "/") for w in wanted)


def _is_ignore_file(path: str) -> bool:
    return path == ".gitignore" or path.endswith("/.gitignore")
