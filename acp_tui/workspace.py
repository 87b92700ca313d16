"""The part of the file system an agent may touch through acp-tui: the session's workspace.

A workspace is the session's `cwd` plus its `additionalDirectories` (its *roots*), plus any
directory the user allowed on purpose (`--allow-path`, the config). Every path an agent sends
through `fs/*` or as a `terminal/create` cwd goes through `Workspace.resolve` (or
`resolve_directory`) first:

1. it must be a string without NUL bytes that the OS can encode, and absolute (ACP requires it);
2. it is resolved the way the kernel will: `os.path.realpath` follows every symbolic link and
   `..`, including `/proc/self/...` magic links, and a dangling link to where it would lead;
3. the *resolved* path must lie inside a root or an allowed directory, by path components (so
   `/ws-evil` is not inside `/ws`).

Resolution and use are two moments, and a symlink can be planted in between (an agent can run
commands too). `open_parent` closes that gap: it walks from the root to the file's directory
one component at a time with `O_NOFOLLOW | O_DIRECTORY`, so the directory it hands back is the
one that was checked, and callers open the file itself relative to it with `O_NOFOLLOW`.

Errors are JSON-RPC errors an agent and a user can both read: `-32602` for a path that is not
acceptable (not absolute, outside, a directory, …) and `-32002` for one that does not exist.
Each message names the path, and `data` carries `{"path", "reason", "resolved"?}`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp_tui.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError

_WALK_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""How each directory on the way to a file is opened: without following a symlink, and on
Linux without needing read permission on it (`O_PATH`), only search permission, like the
kernel (macOS has no `O_PATH`: there a directory must be readable)."""


def path_error(
    path: str,
    reason: str,
    message: str,
    *,
    code: int = INVALID_PARAMS,
    resolved: Path | None = None,
) -> RpcError:
    """An error about one path, with machine-readable `data` for agents and tests."""
    data: dict[str, Any] = {"path": path, "reason": reason}
    if resolved is not None:
        data["resolved"] = str(resolved)
    return RpcError(code, message, data)


def os_error(path: str, exc: OSError, *, resolved: Path | None = None) -> RpcError:
    """Turn an `OSError` met while serving `path` into the JSON-RPC error the agent gets."""
    shown = repr(path)
    if exc.errno == errno.ENOENT:
        return path_error(
            path, "not_found", f"{shown} does not exist", code=RESOURCE_NOT_FOUND, resolved=resolved
        )
    if exc.errno == errno.ELOOP:
        return path_error(
            path,
            "symlink",
            f"{shown}: a symbolic link loop, or a symbolic link where acp-tui does not follow "
            "one (a part of the path was replaced by a link after it was checked); nothing was "
            "read or written",
            resolved=resolved,
        )
    if exc.errno == errno.ENOTDIR:
        return path_error(
            path,
            "not_a_directory",
            f"{shown}: a part of the path is not a directory (or was replaced by a symbolic "
            "link after it was checked); nothing was read or written",
            resolved=resolved,
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return path_error(
            path, "permission_denied", f"{shown}: permission denied", resolved=resolved
        )
    if exc.errno == errno.ENAMETOOLONG:
        return path_error(path, "name_too_long", f"{shown}: the path is too long")
    return path_error(
        path, "os_error", f"{shown}: {exc.strerror or exc}", code=INTERNAL_ERROR, resolved=resolved
    )


class Workspace:
    """The directories one session's agent may read and write, and the checks that keep it there.

    `roots` are the session's `cwd` (first) and its `additionalDirectories`; `allowed` are the
    directories the user added on purpose (`--allow-path`, config). Both are absolute; they are
    resolved once, here, so a root reached through a symlink still works.
    """

    def __init__(self, roots: Sequence[Path], allowed: Sequence[Path] = ()) -> None:
        if not roots:
            raise ValueError("a workspace needs at least one root: the session's cwd")
        for directory in (*roots, *allowed):
            if not Path(directory).is_absolute():
                raise ValueError(f"workspace directories must be absolute, got {directory!r}")
        self.roots: tuple[Path, ...] = tuple(Path(os.path.realpath(r)) for r in roots)
        self.allowed: tuple[Path, ...] = tuple(Path(os.path.realpath(a)) for a in allowed)

    @property
    def cwd(self) -> Path:
        """The session's working directory: the default cwd of its terminals."""
        return self.roots[0]

    def describe(self) -> str:
        """The workspace in words, for error messages and the README's promise."""
        text = ", ".join(str(root) for root in self.roots)
        if self.allowed:
            text += "; also allowed: " + ", ".join(str(a) for a in self.allowed)
        return text

    def contains(self, resolved: Path) -> bool:
        """Whether an already resolved path is inside a root or an allowed directory."""
        return self._base_of(resolved) is not None

    def _base_of(self, resolved: Path) -> Path | None:
        """The deepest root or allowed directory holding `resolved`, or None."""
        bases = [b for b in (*self.roots, *self.allowed) if resolved.is_relative_to(b)]
        return max(bases, key=lambda b: len(b.parts), default=None)

    # -- resolution ---------------------------------------------------------------------------

    def resolve(self, path: str, *, for_write: bool) -> Path:
        """Check an agent's file path and return it resolved (no symlinks, no `..`).

        For a read the file must exist (else `-32002`) and be a regular file. For a write it
        may be missing (its parent directories too), but must not be a directory or a special
        file, and no existing part of its parent path may be a file.
        """
        resolved = self._resolve_inside(path)
        try:
            info = os.stat(resolved)
        except FileNotFoundError:
            if not for_write:
                raise path_error(
                    path,
                    "not_found",
                    f"{path!r} does not exist",
                    code=RESOURCE_NOT_FOUND,
                    resolved=resolved,
                ) from None
            if path.endswith("/"):
                raise path_error(
                    path,
                    "is_directory",
                    f"{path!r} ends with '/', so it names a directory, not a file",
                    resolved=resolved,
                ) from None
            self._check_parents(path, resolved)
            return resolved
        except OSError as exc:
            raise os_error(path, exc, resolved=resolved) from exc
        if stat.S_ISDIR(info.st_mode):
            raise path_error(
                path,
                "is_directory",
                f"{path!r} is a directory; fs methods read and write files",
                resolved=resolved,
            )
        if not stat.S_ISREG(info.st_mode):
            raise path_error(
                path,
                "not_a_file",
                f"{path!r} is not a regular file (a FIFO, socket or device); "
                "acp-tui only serves regular files",
                resolved=resolved,
            )
        return resolved

    def resolve_directory(self, path: str | None) -> Path:
        """Check a terminal's requested `cwd` (None: the session's cwd) and return it resolved."""
        if path is None:
            return self.cwd
        resolved = self._resolve_inside(path)
        try:
            info = os.stat(resolved)
        except OSError as exc:
            raise os_error(path, exc, resolved=resolved) from exc
        if not stat.S_ISDIR(info.st_mode):
            raise path_error(
                path, "not_a_directory", f"{path!r} is not a directory", resolved=resolved
            )
        return resolved

    def _resolve_inside(self, path: str) -> Path:
        if not isinstance(path, str) or not path:
            raise path_error(
                str(path),
                "not_absolute",
                "the path is empty; ACP requires an "
                f"absolute path (this session's workspace is {self.cwd})",
            )
        if "\0" in path:
            raise path_error(path, "bad_path", f"{path!r} contains a NUL byte")
        try:
            os.fsencode(path)
        except UnicodeEncodeError:
            raise path_error(
                path, "bad_path", f"{path!r} cannot be encoded as a file name"
            ) from None
        if not os.path.isabs(path):
            raise path_error(
                path,
                "not_absolute",
                f"{path!r} is not an absolute path; ACP requires absolute paths "
                f"(this session's workspace is {self.cwd})",
            )
        resolved = Path(os.path.realpath(path))
        if not self.contains(resolved):
            lexical = os.path.normpath(path)
            via = "" if str(resolved) == lexical else f" (it resolves to {str(resolved)!r})"
            suggestion = resolved if resolved.is_dir() else resolved.parent
            raise path_error(
                path,
                "outside_workspace",
                f"{path!r}{via} is outside this session's workspace ({self.describe()}). "
                "acp-tui confines agents' file access and terminal directories to the "
                f"workspace. To allow it on purpose, start acp-tui with --allow-path {suggestion}",
                resolved=resolved,
            )
        return resolved

    def _check_parents(self, path: str, resolved: Path) -> None:
        """For a new file: the nearest existing ancestor must be a directory."""
        for parent in resolved.parents:
            try:
                info = os.stat(parent)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise os_error(path, exc, resolved=resolved) from exc
            if not stat.S_ISDIR(info.st_mode):
                raise path_error(
                    path,
                    "not_a_directory",
                    f"{path!r} cannot be created: {str(parent)!r} is a file, not a directory",
                    resolved=resolved,
                )
            return

    # -- race-free opening --------------------------------------------------------------------

    def open_parent(self, path: str, resolved: Path, *, create: bool) -> tuple[int, str]:
        """Open the directory holding `resolved` (from `resolve`) without following symlinks.

        Walks from the root that holds it, one component at a time, so a symlink planted after
        `resolve` is refused instead of followed. With `create`, missing directories are made on
        the way (the spec: a write creates its file, and we create its parents). Returns an
        directory descriptor (the caller closes it) and the file's name in it.
        """
        base = self._base_of(resolved)
        if base is None or base == resolved:
            raise path_error(path, "outside_workspace", f"{path!r} is not a file in the workspace")
        *directories, name = resolved.relative_to(base).parts
        try:
            fd = os.open(base, _WALK_FLAGS)
        except OSError as exc:
            raise os_error(str(base), exc) from exc
        try:
            for part in directories:
                try:
                    child = os.open(part, _WALK_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    # Made by someone else meanwhile? The open below checks what it is.
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                    child = os.open(part, _WALK_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
        except OSError as exc:
            os.close(fd)
            raise os_error(path, exc, resolved=resolved) from exc
        return fd, name


def temp_name(name: str) -> str:
    """A fresh hidden name beside `name` for its new content (short enough for any file name)."""
    # os.urandom is what `secrets.token_hex` reads, without importing `random` at start-up.
    return f".{name[:200]}.acp-tui-{os.urandom(4).hex()}.tmp"


def fsync_directory(dir_fd: int) -> None:
    """Make the rename durable. Best effort: some file systems refuse to fsync a directory."""
    with contextlib.suppress(OSError):
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
