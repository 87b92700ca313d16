"""Snapshots of a workspace's files in a shadow git repository.

`$XDG_DATA_HOME/acp-tui/checkpoints/<name>-<hash>/` is a git directory of acp-tui's own, one per
workspace, with its own index. A snapshot stores every file of the workspace that git would
see (tracked or not, `.gitignore`, the user's repository's `info/exclude` and their global
ignore file respected, `.git` itself left out) as a tree and a commit there; files already
stored are not stored again, so the repository grows with what changed, not with the number
of snapshots. The user's repository (its `.git`, index, refs, stashes) is never read by git
here, let alone written: only its ignore rules are copied.

Not stored, and listed as skipped: files over `MAX_FILE_SIZE`, symbolic links that point
outside the workspace, repositories nested in it, and anything that is not a file, a
directory or a link (sockets, FIFOs, devices). Each snapshot's commit carries that list, so a
rewind to it knows which paths it cannot put back (`unsaved`), and which ignore rules it had
(`ignored`): what it did not save, a rewind must not delete or overwrite.

A snapshot is taken in one walk of the workspace: `git ls-files` lists what changed since the
last one (git's stat cache in the shadow index), only those paths are looked at and hashed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from acp_tui.checkpoints.git import Git, GitFailed, user_excludes_file
from acp_tui.checkpoints.ignores import AGENT_STATE, inherited_excludes
from acp_tui.paths import data_dir, within
from acp_tui.text import human_size

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: one process at a time, by the thread lock
    fcntl = None  # type: ignore[assignment]

MAX_FILE_SIZE = 16 * 1024 * 1024
"""Files larger than this are not stored (listed as skipped): checkpoints are for source."""
MAX_FILES = 200_000
"""Files new or changed since the last checkpoint past which none is taken: a workspace that
big (a home directory) is not a project, and copying it would take minutes and gigabytes."""
MAX_BYTES = 4 << 30
"""The same, in bytes to store in one checkpoint."""
ATTRIBUTES = "* -text -eol -crlf -filter -ident -working-tree-encoding\n"
"""`info/attributes` of the shadow: files are stored byte for byte, whatever the workspace's
`.gitattributes` ask (no line-ending conversion, no clean filters such as LFS)."""
MAX_SKIPPED_SAVED = 200
"""Skipped paths written in a snapshot's message (what `acp-tui changes` shows); past that the
whole list is kept in a blob of its own, which only a rewind reads."""
UNSAVED_ROOT = "refs/acp-tui/unsaved"
"""Refs that keep those blobs (nothing else points at them)."""

ChangeStatus = Literal["added", "modified", "deleted"]


class CheckpointError(Exception):
    """A checkpoint could not be taken or read (the message says why)."""


class WorkspaceTooLarge(CheckpointError):
    """Too much changed at once to be copied: checkpoints are off in this workspace."""


class Skipped(msgspec.Struct, frozen=True):
    """A path of the workspace that a snapshot does not hold, and why."""

    path: str
    reason: str
    stamp: str = ""
    """What was there (a link's target; a file's type, size, time and inode), to tell a later
    snapshot's path that changed from one that did not; empty when not known."""


class Snapshot(msgspec.Struct):
    """The workspace at one moment: a commit (and its tree) in the shadow repository."""

    commit: str
    tree: str
    skipped: list[Skipped] = msgspec.field(default_factory=list)


class Staged(msgspec.Struct):
    """The workspace at one moment as a tree, not yet committed."""

    tree: str
    skipped: list[Skipped] = msgspec.field(default_factory=list)


class FileChange(msgspec.Struct):
    """One file that differs between two snapshots."""

    path: str
    status: ChangeStatus
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    added: int | None = 0
    """Lines added; None for a binary file."""
    removed: int | None = 0

    @property
    def binary(self) -> bool:
        return self.added is None

    @property
    def letter(self) -> str:
        return {"added": "A", "modified": "M", "deleted": "D"}[self.status]

    @property
    def old_is_link(self) -> bool:
        return self.old_mode == "120000"

    @property
    def new_is_link(self) -> bool:
        return self.new_mode == "120000"


def store_root() -> Path:
    return data_dir() / "checkpoints"


def shadow_name(workspace: Path) -> str:
    """The shadow repository's directory name for `workspace`: readable, and unique."""
    digest = hashlib.sha256(os.fsencode(workspace)).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", workspace.name)[:40] or "root"
    return f"{name}-{digest}"


class CheckpointStore:
    """The shadow repository of one workspace. Thread-safe; several acp-tui processes on one
    workspace take turns (a file lock)."""

    def __init__(
        self,
        workspace: Path,
        git_dir: Path,
        git: Git,
        max_size: int,
        agent_state: Sequence[str] = AGENT_STATE,
    ) -> None:
        self.workspace = workspace
        self.git_dir = git_dir
        self.git = git
        self.max_size = max_size
        self.agent_state = tuple(agent_state)
        """Folders where agents keep their own state: never stored, never rewound."""
        self._forget_agent_state = False
        """The ignore rules changed: what earlier snapshots stored of those folders leaves
        the index (an ignore rule only hides files it does not hold)."""
        self.max_files = MAX_FILES
        self.max_bytes = MAX_BYTES
        self._bytes = 0
        """What the snapshot being taken is to store, in bytes."""
        self._lock = threading.RLock()
        self._depth = 0
        self._trees: dict[str, str] = {}
        """The tree of each commit this store made: two of the same tree differ in nothing."""

    @classmethod
    def open(
        cls,
        workspace: Path,
        root: Path | None = None,
        *,
        max_size: int = MAX_FILE_SIZE,
        create: bool = True,
        ignore: Sequence[Path] = (),
        agent_state: Sequence[str] | None = None,
    ) -> CheckpointStore:
        """The store of `workspace` (created on first use, if `create`). `GitMissing` when
        there is no git; `CheckpointError` when the repository cannot be made (or there is
        none and `create` is false). `ignore`: more of acp-tui's own files or directories
        to leave out (a `--transcript` written in the workspace); `agent_state`: the folders
        where agents keep their own state (None: `AGENT_STATE`)."""
        folders = AGENT_STATE if agent_state is None else tuple(agent_state)
        workspace = Path(os.path.realpath(workspace))
        git_dir = (root or store_root()) / shadow_name(workspace)
        git = Git(git_dir, workspace, excludes_file=user_excludes_file())
        exists = (git_dir / "HEAD").is_file()
        if not exists and not create:
            raise CheckpointError(f"no checkpoints were taken in {workspace}")
        try:
            if not exists:
                git_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
                git.init()
                (git_dir / "workspace").write_text(f"{workspace}\n", encoding="utf-8")
            info = git_dir / "info"
            info.mkdir(exist_ok=True)
            (info / "attributes").write_text(ATTRIBUTES, encoding="utf-8")
            own = [git_dir.parent, data_dir(), *ignore]
            excludes = inherited_excludes(workspace, own, folders)
            exclude = info / "exclude"
            changed = not exclude.is_file() or exclude.read_text(encoding="utf-8") != excludes
            if changed:
                exclude.write_text(excludes, encoding="utf-8")
        except (OSError, GitFailed) as error:
            raise CheckpointError(f"cannot keep checkpoints in {git_dir}: {error}") from error
        store = cls(workspace, git_dir, git, max_size, folders)
        store._forget_agent_state = exists and changed and bool(folders)
        return store

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive use of the shadow repository (its index), in this process and across
        processes."""
        with self._lock:
            self._depth += 1
            try:
                if fcntl is None or self._depth > 1:
                    yield
                    return
                with open(self.git_dir / "acp-tui.lock", "a") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                    # Only a holder of this lock writes the index: a lock file of git's left
                    # now is from a git killed mid-way (acp-tui quit during a checkpoint).
                    with contextlib.suppress(FileNotFoundError):
                        (self.git_dir / "index.lock").unlink()
                    try:
                        yield
                    finally:
                        fcntl.flock(lock, fcntl.LOCK_UN)
            finally:
                self._depth -= 1

    # -- taking snapshots ---------------------------------------------------------------------

    def snapshot(
        self,
        title: str = "snapshot",
        meta: Mapping[str, object] | None = None,
        staged: Staged | None = None,
    ) -> Snapshot:
        """Store the workspace as it is now (or as it was `staged`); the commit, its tree and
        what was skipped. The commit's message is `title`, then `meta` as JSON, with what was
        skipped added (`unsaved` reads it back)."""
        staged = staged or self.stage()
        try:
            body = {**(meta or {}), **self._skipped_meta(staged.skipped)}
            text = f"{title}\n\n{json.dumps(body)}\n"
            commit = self.git.text("commit-tree", staged.tree, "-m", text)
        except (OSError, GitFailed) as error:
            raise CheckpointError(f"cannot take a checkpoint: {error}") from error
        self._trees[commit] = staged.tree
        return Snapshot(commit, staged.tree, staged.skipped)

    def _skipped_meta(self, skipped: Sequence[Skipped]) -> dict[str, object]:
        entries = [[s.path, s.reason, s.stamp] for s in skipped]
        if len(entries) <= MAX_SKIPPED_SAVED:
            return {"skipped": entries}
        # A message is read with every ref of its session: it keeps a few, a blob all of them.
        data = json.dumps(entries).encode()
        blob = self.git.text("hash-object", "-w", "--stdin", input=data)
        self.set_refs({f"{UNSAVED_ROOT}/{blob}": blob})
        return {"skipped": entries[:MAX_SKIPPED_SAVED], "skipped_all": blob}

    def stage(self) -> Staged:
        """The workspace as it is now, as a tree: the first half of a snapshot."""
        with self.locked():
            try:
                skipped = self._stage()
                return Staged(self.git.text("write-tree"), skipped)
            except (OSError, GitFailed) as error:
                raise CheckpointError(f"cannot take a checkpoint: {error}") from error

    def _stage(self) -> list[Skipped]:
        """Bring the shadow index up to date with the workspace; what was left out."""
        if self._forget_agent_state:
            folders = [f":(literal){folder}" for folder in self.agent_state]
            self.git.run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *folders)
            self._forget_agent_state = False
        listed = self.git.run("ls-files", "-z", "-t", "-m", "-d", "-o", "--exclude-standard")
        paths: dict[str, None] = {}
        for entry in listed.split(b"\0"):
            if entry:
                paths[os.fsdecode(entry[2:])] = None
        if len(paths) > self.max_files:
            raise WorkspaceTooLarge(
                f"{len(paths):,} files are new or changed here since the last checkpoint "
                f"(more than {self.max_files:,}): too many to copy"
            )
        update: list[str] = []
        drop: list[str] = []
        skipped: list[Skipped] = []
        root = str(self.workspace)
        self._bytes = 0
        for path in paths:
            if path.endswith("/"):
                skipped.append(Skipped(path.rstrip("/"), "a repository of its own"))
                continue
            if "/" in path and _through_link(root, path):
                drop.append(path)  # its directory is now a link: the file is gone from here
                continue
            left_out = self._why_not(root, path)
            if left_out is None:
                update.append(path)
            else:
                skipped.append(left_out)
                drop.append(path)
        if self._bytes > self.max_bytes:
            raise WorkspaceTooLarge(
                f"{human_size(self._bytes)} are new or changed here since the last checkpoint "
                f"(more than {human_size(self.max_bytes)}): too much to copy"
            )
        if update:
            data = b"\0".join(os.fsencode(p) for p in update) + b"\0"
            self.git.run("update-index", "-z", "--add", "--remove", "--stdin", input=data)
        if drop:
            data = b"\0".join(os.fsencode(p) for p in drop) + b"\0"
            self.git.run("update-index", "-z", "--force-remove", "--stdin", input=data)
        return skipped

    def _why_not(self, root: str, path: str) -> Skipped | None:
        """Why `path` is not stored (None: it is, or it is gone and leaves the index)."""
        full = os.path.join(root, path)
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            return None
        except OSError as error:
            return Skipped(path, f"unreadable ({error.strerror})")
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            return None  # it was a file; its files are listed on their own
        stamp = _stamp(full, info)
        if stat.S_ISLNK(mode):
            target = os.path.realpath(full)
            if not within(root, target):
                return Skipped(path, "a symbolic link to outside the workspace", stamp)
            return None
        if stat.S_ISREG(mode):
            if info.st_size > self.max_size:
                limit = self.max_size >> 20
                return Skipped(path, f"larger than {limit} MB ({human_size(info.st_size)})", stamp)
            if not os.access(full, os.R_OK):
                return Skipped(path, "unreadable (permission denied)", stamp)
            self._bytes += info.st_size
            return None
        return Skipped(path, "not a regular file", stamp)

    # -- reading ------------------------------------------------------------------------------

    def changes(self, old: str, new: str) -> list[FileChange]:
        """The files that differ between two snapshots (commits or trees), by path."""
        if self._trees.get(old, old) == self._trees.get(new, new):  # a turn that changed nothing
            return []
        out = self.git.run("diff-tree", "-r", "-z", "--no-renames", "--raw", "--numstat", old, new)
        fields = out.split(b"\0")
        changes: dict[str, FileChange] = {}
        index = 0
        while index < len(fields):
            entry = fields[index]
            if entry.startswith(b":"):
                old_mode, new_mode, old_blob, new_blob, letter = entry[1:].decode().split(" ")
                path = os.fsdecode(fields[index + 1])
                index += 2
                if "160000" in (old_mode, new_mode):
                    continue  # a nested repository, never stored
                status: ChangeStatus = (
                    "added" if letter == "A" else "deleted" if letter == "D" else "modified"
                )
                changes[path] = FileChange(path, status, old_mode, new_mode, old_blob, new_blob)
            elif entry:
                added, removed, path_bytes = entry.split(b"\t", 2)
                change = changes.get(os.fsdecode(path_bytes))
                if change is not None:
                    if added == b"-":
                        change.added = change.removed = None
                    else:
                        change.added, change.removed = int(added), int(removed)
                index += 1
            else:
                index += 1
        return list(changes.values())

    def patch(self, old: str, new: str, paths: Sequence[str] = ()) -> str:
        """A unified patch from `old` to `new` (only `paths` when given)."""
        args = ["diff-tree", "-r", "-p", "--no-renames", "--full-index", old, new]
        if paths:
            args += ["--", *paths]
        return self.git.run(*args).decode("utf-8", "surrogateescape")

    def blob(self, blob: str) -> bytes:
        return self.git.run("cat-file", "blob", blob)

    def blobs(self, blobs: Sequence[str]) -> list[bytes]:
        """Several blobs, in one git command."""
        if not blobs:
            return []
        out = self.git.run("cat-file", "--batch", input="".join(f"{b}\n" for b in blobs).encode())
        found = []
        at = 0
        for _blob in blobs:
            header_end = out.index(b"\n", at)
            size = int(out[at:header_end].split(b" ")[2])
            found.append(out[header_end + 1 : header_end + 1 + size])
            at = header_end + 1 + size + 1  # the newline after the content
        return found

    def entry(self, commit: str, path: str) -> tuple[str, str] | None:
        """`(mode, blob)` of `path` in a snapshot; None if it does not hold it."""
        out = self.git.run("ls-tree", "-z", commit, "--", path)
        if not out:
            return None
        meta, _, _name = out.rstrip(b"\0").partition(b"\t")
        mode, _kind, blob = meta.decode().split(" ")
        return mode, blob

    def paths(self, commit: str) -> set[str]:
        """Every path a snapshot holds."""
        out = self.git.run("ls-tree", "-r", "-z", "--name-only", commit)
        return {os.fsdecode(p) for p in out.split(b"\0") if p}

    def unsaved(self, commit: str) -> list[Skipped] | None:
        """What snapshot `commit` skipped: the paths whose state it does not hold. None when
        it does not say (a snapshot of an acp-tui that did not write it down)."""
        message = self.git.run("cat-file", "commit", commit).decode("utf-8", "surrogateescape")
        _headers, _, text = message.partition("\n\n")
        _title, _, body = text.partition("\n\n")
        try:
            meta = json.loads(body)
        except ValueError:
            return None
        if not isinstance(meta, dict) or not isinstance(meta.get("skipped"), list):
            return None
        entries = meta["skipped"]
        if isinstance(meta.get("skipped_all"), str):
            entries = json.loads(self.blob(meta["skipped_all"]))
        return skipped_from(entries)

    def ignored(self, commit: str, paths: Sequence[str]) -> set[str]:
        """Which of `paths` the ignore rules of snapshot `commit` left out: its `.gitignore`
        files, with the shadow's own rules (the ones git reads outside the workspace are the
        same now as then, or as near as anything can tell)."""
        if not paths:
            return set()
        listed = self.git.run("ls-tree", "-r", "-z", commit)
        rules: list[tuple[str, str]] = []
        for entry in listed.split(b"\0"):
            meta, _, name = entry.partition(b"\t")
            path = os.fsdecode(name)
            if meta.startswith(b"100") and (path == ".gitignore" or path.endswith("/.gitignore")):
                rules.append((path, meta.split(b" ")[2].decode()))
        import tempfile  # here: for an old snapshot's rules, not for every start-up

        with tempfile.TemporaryDirectory(prefix="acp-tui-rules-") as then:
            # A work tree of the rules alone: git asks of the paths as they stood then.
            for (path, _blob), text in zip(rules, self.blobs([b for _p, b in rules]), strict=True):
                where = Path(then, *path.split("/"))
                where.parent.mkdir(parents=True, exist_ok=True)
                where.write_bytes(text)
            data = b"\0".join(os.fsencode(p) for p in paths) + b"\0"
            out = self.git.run(
                "check-ignore",
                "--no-index",
                "-z",
                "--stdin",
                input=data,
                ok=(0, 1),  # 1: none of them is ignored
                env={"GIT_WORK_TREE": then},
                cwd=then,
            )
        return {os.fsdecode(p) for p in out.split(b"\0") if p}

    # -- refs ---------------------------------------------------------------------------------

    def set_refs(self, refs: dict[str, str], delete: Sequence[str] = ()) -> None:
        """Point each ref at its commit (keeping the commits from ever being pruned), and
        delete those in `delete`, in one transaction."""
        lines = "".join(f"update {name} {commit}\n" for name, commit in refs.items())
        lines += "".join(f"delete {name}\n" for name in delete)
        try:
            self.git.run("update-ref", "--stdin", input=lines.encode())
        except (OSError, GitFailed) as error:
            raise CheckpointError(f"cannot save the checkpoint: {error}") from error

    def refs(self, prefix: str) -> list[tuple[str, str, str]]:
        """`(name, commit, message)` of every ref under `prefix`, sorted by name."""
        separator = "\x1f\x1e"
        out = self.git.run(
            "for-each-ref",
            f"--format=%(refname)%00%(objectname)%00%(contents){separator}",
            prefix,
        ).decode("utf-8", "surrogateescape")
        result = []
        for record in out.split(separator):
            record = record.lstrip("\n")
            if record:
                name, commit, message = record.split("\0", 2)
                result.append((name, commit, message))
        return sorted(result)


def skipped_from(entries: object) -> list[Skipped]:
    """The skipped paths a snapshot's message lists (`[path, reason, stamp]`; older ones have
    no stamp)."""
    if not isinstance(entries, list):
        return []
    found = []
    for entry in entries:
        if isinstance(entry, list) and len(entry) >= 2:
            stamp = str(entry[2]) if len(entry) > 2 else ""
            found.append(Skipped(str(entry[0]), str(entry[1]), stamp))
    return found


def stamp(path: str) -> str:
    """What is at `path` now, as `Skipped.stamp` says it ("" when nothing is)."""
    try:
        return _stamp(path, os.lstat(path))
    except OSError:
        return ""


def _stamp(path: str, info: os.stat_result) -> str:
    if stat.S_ISLNK(info.st_mode):
        try:
            return "link " + os.readlink(path)
        except OSError:
            return ""
    return f"{stat.S_IFMT(info.st_mode):o} {info.st_size} {info.st_mtime_ns} {info.st_ino}"


def _through_link(root: str, path: str) -> bool:
    """Whether a directory on the way to `path` is a symbolic link (or not a directory)."""
    parent = os.path.join(root, os.path.dirname(path))
    return os.path.realpath(parent) != parent
