"""Putting files back as a checkpoint holds them: a whole turn, one file, or some hunks.

A rewind is planned first (`plan_rewind`): the workspace is checkpointed as it is now (so the
rewind itself can be undone), compared with the target, and every file to write or delete is
listed, each marked when the user changed it after the turn ended (between turns, or since
the last one): those are the ones to ask about. Applying the plan (`apply_rewind`) writes
each file atomically, never through a symbolic link: every directory on the way is opened
without following links, so a link planted in the workspace (by an agent, say) cannot send a
restored file elsewhere; such a file is reported, not written. A path whose state one of the
two checkpoints did not save (`unsaved`) is never written or deleted: it is listed as not put
back, with the reason.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from acp_tui.checkpoints.hunks import hunks, unapply_hunks
from acp_tui.checkpoints.ignores import in_agent_state
from acp_tui.checkpoints.store import CheckpointError, CheckpointStore, FileChange, Snapshot
from acp_tui.checkpoints.turns import SessionCheckpoints, TurnCheckpoint, session_key
from acp_tui.checkpoints.unsaved import not_put_back
from acp_tui.paths import within
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.workspace import Workspace, fsync_directory, temp_name

UNDO_ROOT = "refs/acp-tui/rewinds"


@dataclass(slots=True)
class FileRestore:
    """One file a rewind puts back: written as the target holds it, or deleted."""

    path: str
    action: Literal["write", "delete"]
    mode: str | None = None
    blob: str | None = None
    user_changed: bool = False
    """Changed by the user (or anyone but this session's agent) after the turn ended."""


@dataclass(slots=True)
class RewindPlan:
    """What a rewind will do; nothing is written until it is applied."""

    target: str
    """The checkpoint the files go back to."""
    now: Snapshot
    """The workspace as it was when the rewind was planned: what undoes it."""
    files: list[FileRestore]
    label: str = ""
    session_id: str = ""
    turn: int = 0
    not_put_back: list[tuple[str, str]] = field(default_factory=list)
    """Paths left as they are, since a checkpoint did not save their state, and why."""
    paths: tuple[str, ...] = ()
    """The files asked for (a file reverted), none when the rewind is of every file."""

    @property
    def conflicts(self) -> list[FileRestore]:
        return [f for f in self.files if f.user_changed]


@dataclass(slots=True)
class RewindResult:
    restored: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    """Files left as they were, and why."""
    not_put_back: list[tuple[str, str]] = field(default_factory=list)
    """The plan's paths left as they are, since a checkpoint did not save their state."""
    undo: str | None = None
    """The ref of the checkpoint taken before the rewind (rewinding to it undoes this)."""


def plan_rewind(
    checkpoints: SessionCheckpoints, turn: int, paths: Sequence[str] | None = None
) -> RewindPlan:
    """Plan putting the workspace (or `paths` only) back as it was before turn `turn`."""
    turns = checkpoints.turns()
    target = next((t for t in turns if t.turn == turn), None)
    if target is None or target.before is None:
        raise CheckpointError(f"turn {turn} has no checkpoint")
    later = [t for t in turns if t.turn >= turn]
    # The user's edits in their editor are theirs even when made while a turn ran.
    edits = [(edit.before, edit.after) for edit in checkpoints.edits(target.started)]
    return plan_restore(
        checkpoints.store,
        target.before,
        user_changes=[*_user_spans(later), *edits],
        paths=paths,
        label=f"turn {turn}",
        session_id=checkpoints.session_id,
        turn=turn,
    )


def _user_spans(turns: list[TurnCheckpoint]) -> list[tuple[str, str | None]]:
    """The spans in which whoever changed files was not the agent: from the end of each
    turn to the start of the next one, and from the end of the last one to now (None)."""
    spans: list[tuple[str, str | None]] = []
    for index, turn in enumerate(turns):
        if turn.after is None:
            continue
        following = turns[index + 1] if index + 1 < len(turns) else None
        spans.append((turn.after, following.before if following is not None else None))
    return spans


def plan_restore(
    store: CheckpointStore,
    target: str,
    *,
    user_changes: Sequence[tuple[str, str | None]] = (),
    paths: Sequence[str] | None = None,
    label: str = "",
    session_id: str = "",
    turn: int = 0,
) -> RewindPlan:
    """Plan putting files back as checkpoint `target` holds them. `user_changes` are spans
    `(from, to)` (to None: now) whose changes were not the agent's."""
    now = store.snapshot(f"acp-tui: the workspace before rewinding {label}")
    wanted = set(paths) if paths is not None else None
    changes = [
        change
        for change in store.changes(now.commit, target)
        if wanted is None or change.path in wanted
    ]
    left = not_put_back(store, target, now, changes, wanted)
    files: list[FileRestore] = []
    root = str(store.workspace)
    for change in changes:
        if change.path in left:
            continue
        if change.status == "deleted":
            files.append(FileRestore(change.path, "delete"))
            continue
        restore = FileRestore(change.path, "write", change.new_mode, change.new_blob)
        # There now, but not in the checkpoint of now (too large, a link outside, ignored):
        # overwriting it could not be undone. Asked about, as a change of the user's.
        restore.user_changed = change.status == "added" and os.path.lexists(
            os.path.join(root, change.path)
        )
        files.append(restore)
    touched_by_user: set[str] = set()
    for start, end in user_changes:
        touched_by_user.update(c.path for c in store.changes(start, end or now.commit))
    for restore in files:
        restore.user_changed = restore.user_changed or restore.path in touched_by_user
    return RewindPlan(
        target, now, files, label, session_id, turn, sorted(left.items()), tuple(paths or ())
    )


def _undo_meta(plan: RewindPlan) -> dict[str, object]:
    return {
        "session": plan.session_id,
        "turn": plan.turn,
        "moment": "rewind",
        "label": plan.label,
        "time": time.time(),
    }


class Stale(CheckpointError):
    """The workspace changed between planning a rewind and applying it."""


def apply_rewind(
    store: CheckpointStore, plan: RewindPlan, *, skip_conflicts: bool = False
) -> RewindResult:
    """Write and delete what the plan says (the user's changes too, unless
    `skip_conflicts`). The checkpoints of before and after are kept under
    `refs/acp-tui/rewinds/<session>/<time>/`: undoing the rewind goes back to the first.
    `Stale` when the workspace changed since the plan was made (plan again)."""
    with store.locked():
        current = store.snapshot(
            f"acp-tui checkpoint: before rewinding {plan.label}", _undo_meta(plan)
        )
        if current.tree != plan.now.tree:
            raise Stale("files changed since the rewind was planned; look at it again")
        result = RewindResult(undo=_keep_before(store, plan, current))
        result.not_put_back = list(plan.not_put_back)
        root = str(store.workspace)
        for restore in plan.files:
            if skip_conflicts and restore.user_changed:
                result.failed.append((restore.path, "changed since the turn: left as it is"))
                continue
            try:
                if restore.action == "delete":
                    _delete(root, restore.path)
                else:
                    assert restore.blob is not None and restore.mode is not None
                    _write(root, restore.path, store.blob(restore.blob), restore.mode)
            except OSError as error:
                result.failed.append((restore.path, _reason(error)))
            else:
                result.restored.append(restore.path)
        assert result.undo is not None
        _keep_after(store, plan, result.undo)
    return result


def revert_hunks(
    checkpoints: SessionCheckpoints, turn: int, chosen: Mapping[str, Sequence[int]]
) -> RewindResult:
    """Undo the hunks `chosen` (by file, their indexes in `hunks`) of what turn `turn` did,
    in the files as they are now (the rest of each file is left as it is). A file where one
    of them is not found as the turn left it is left alone, and said so in `failed`. Undoable
    like a rewind (one undo for all of them)."""
    store = checkpoints.store
    checkpoint = checkpoints.turn(turn)
    if checkpoint is None or checkpoint.before is None:
        raise CheckpointError(f"turn {turn} has no checkpoint")
    for path in chosen:
        folder = in_agent_state(path, store.agent_state)
        if folder is not None:
            raise CheckpointError(f"{path} is an agent's own state ({folder}/): left to the agent")
    before = checkpoint.before
    after = checkpoint.after or store.snapshot("acp-tui: the workspace now").commit
    versions = {path: (_text(store, before, path), _text(store, after, path)) for path in chosen}
    root = str(store.workspace)
    with store.locked():
        texts: dict[str, str] = {}
        failed: list[tuple[str, str]] = []
        for path, indexes in chosen.items():
            old, new = versions[path]
            found = hunks(old, new)
            if not all(0 <= index < len(found) for index in indexes):
                raise CheckpointError(f"{path} has no such hunk in turn {turn}")
            text = unapply_hunks(_read(root, path), old, new, [found[i] for i in indexes])
            if text is None:
                failed.append((path, "its lines changed since the turn: left as it is"))
            else:
                texts[path] = text
        now = store.snapshot("acp-tui: before reverting hunks")
        label = "hunks of " + ", ".join(chosen)
        plan = RewindPlan(now.commit, now, [], label, checkpoints.session_id, turn)
        undo = _keep_before(store, plan, now)
        result = RewindResult(failed=failed, undo=undo)
        for path, text in texts.items():
            try:
                if not text and store.entry(before, path) is None:
                    _delete(root, path)  # every line of a file the turn made: it goes
                else:
                    entry = store.entry(after, path) or store.entry(before, path)
                    _write(root, path, text.encode("utf-8"), (entry or ("100644", ""))[0])
            except OSError as error:
                result.failed.append((path, _reason(error)))
            else:
                result.restored.append(path)
        _keep_after(store, plan, undo)
    return result


def _text(store: CheckpointStore, commit: str, path: str) -> str:
    entry = store.entry(commit, path)
    if entry is None:
        return ""
    data = store.blob(entry[1])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CheckpointError(f"{path} is not text: revert the whole file instead") from None


def _read(root: str, path: str) -> str:
    fd, name = _open_parent(root, path, create=False)
    try:
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    except FileNotFoundError:
        return ""
    finally:
        os.close(fd)
    with open(handle, "rb") as file:
        data = file.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CheckpointError(f"{path} is not text now: revert the whole file instead") from None


def _keep_before(store: CheckpointStore, plan: RewindPlan, now: Snapshot) -> str:
    undo = f"{UNDO_ROOT}/{session_key(plan.session_id)}/{time.time_ns()}"
    store.set_refs({f"{undo}/before": now.commit})
    return undo


def _keep_after(store: CheckpointStore, plan: RewindPlan, undo: str) -> None:
    after = store.snapshot(f"acp-tui checkpoint: after rewinding {plan.label}")
    store.set_refs({f"{undo}/after": after.commit})


def rewinds(store: CheckpointStore, session_id: str) -> list[str]:
    """The rewinds done in a session (their refs), the latest last."""
    prefix = f"{UNDO_ROOT}/{session_key(session_id)}"
    found = {name.rsplit("/", 1)[0] for name, _commit, _message in store.refs(prefix)}
    return sorted(found, key=lambda name: int(name.rsplit("/", 1)[1]))


def undo_plan(store: CheckpointStore, undo: str, session_id: str = "") -> RewindPlan:
    """Plan undoing a rewind (`undo`, from `RewindResult.undo` or `rewinds`): every file back
    as it was just before it; what changed since it was done is the user's."""
    before = store.git.text("rev-parse", "--verify", "--quiet", f"{undo}/before^{{commit}}")
    after = store.git.text("rev-parse", "--verify", "--quiet", f"{undo}/after^{{commit}}")
    return plan_restore(
        store,
        before,
        user_changes=[(after, None)] if after else (),
        label="the rewind",
        session_id=session_id,
    )


# -- writing without following links ------------------------------------------------------------


def _reason(error: OSError) -> str:
    if isinstance(error, _InTheWay):
        return str(error)
    if error.errno is not None and error.strerror:
        return error.strerror.lower()
    return str(error)


class _InTheWay(OSError):
    """Something in the workspace stops a file from being restored safely."""


def _open_parent(root: str, path: str, *, create: bool = True) -> tuple[int, str]:
    """The directory holding `path` (made if missing, with `create`), opened without following
    a link on the way, as for an agent's writes; and the file's name in it.
    `FileNotFoundError` when it is missing and not to be made."""
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise _InTheWay(f"not a path in the workspace: {path!r}")
    try:
        return Workspace([Path(root)]).open_parent(path, Path(root, *parts), create=create)
    except RpcError as error:
        reason = error.data.get("reason") if isinstance(error.data, dict) else None
        if reason == "not_found":
            raise FileNotFoundError(path) from error
        raise _InTheWay(
            "a symbolic link (or a file) is where a directory was: nothing is written through it"
            if reason in ("symlink", "not_a_directory")
            else error.message
        ) from error


def _write(root: str, path: str, data: bytes, mode: str) -> None:
    fd, name = _open_parent(root, path)
    try:
        try:
            current = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            current = None
        if current is not None and stat.S_ISDIR(current.st_mode):
            raise _InTheWay("a directory is in the way")
        temporary = temp_name(name)
        if mode == "120000":
            target = os.fsdecode(data)
            where = os.path.dirname(os.path.join(root, path))
            resolved = os.path.realpath(os.path.join(where, target))
            if not within(root, resolved):
                raise _InTheWay("a symbolic link to outside the workspace: not restored")
            os.symlink(target, temporary, dir_fd=fd)
        else:
            # A new file gets the usual permissions less the umask, applied by the kernel (reading
            # the umask means setting it, for every thread of the process); a file written over
            # keeps its own, with the executable bits the checkpoint says.
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            out = os.open(temporary, flags, 0o777 if mode == "100755" else 0o666, dir_fd=fd)
            try:
                with open(out, "wb", closefd=False) as file:
                    file.write(data)
                    file.flush()
                    os.fsync(out)
                if current is not None and stat.S_ISREG(current.st_mode):
                    permissions = stat.S_IMODE(current.st_mode)
                    if mode == "100755":
                        permissions |= (permissions & 0o444) >> 2
                    else:
                        permissions &= ~0o111
                    os.fchmod(out, permissions)
            except BaseException:
                os.close(out)
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=fd)
                raise
            os.close(out)
        try:
            os.rename(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=fd)
            raise
        fsync_directory(fd)
    finally:
        os.close(fd)


def _delete(root: str, path: str) -> None:
    """Delete the file (a link itself, never what it points to), then the directories the
    deletion left empty."""
    try:
        fd, name = _open_parent(root, path, create=False)
    except FileNotFoundError:
        return
    try:
        current = os.lstat(name, dir_fd=fd)
        if stat.S_ISDIR(current.st_mode):
            raise _InTheWay("a directory is in the way")
        os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        return
    finally:
        os.close(fd)
    parts = path.split("/")[:-1]
    while parts:
        try:
            os.rmdir(os.path.join(root, *parts))
        except OSError:
            break
        parts.pop()


__all__ = [
    "FileChange",
    "FileRestore",
    "RewindPlan",
    "RewindResult",
    "Stale",
    "apply_rewind",
    "plan_restore",
    "plan_rewind",
    "revert_hunks",
    "rewinds",
    "undo_plan",
]
