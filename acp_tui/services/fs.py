"""`fs/read_text_file` and `fs/write_text_file`: the agent's file access, confined and careful.

Every path goes through the session's `Workspace`, and every file is opened relative to a
directory descriptor reached without following symlinks (see `workspace.py`), so what was
checked is what is used. Blocking I/O runs in a worker thread: a big file never stalls the UI.

Reads
    `line` (1-based) and `limit` (lines) select a part of the file; lines end at `\\n`, and a
    file has one more line than it has `\\n` (the last one possibly empty). Asking for a line
    past that is `-32602`, as Zed answers. A missing file is `-32002`, never `{"content": ""}`:
    an empty answer makes agents believe the file exists and is empty (avante.nvim answered
    that way and gemini-cli looped in its edit-correction flow, avante.nvim PR #2849; Qwen Code
    and Zed map ENOENT to `-32002`). At most `max_read_bytes` are returned per read; more is
    `-32602` telling the agent to read in parts. Content that is not UTF-8, or holds NUL bytes,
    is `-32602` ("not text"), never a crash and never silently mangled text that a later write
    would store.

Writes
    Atomic: the new content goes to an unnamed temporary file in the target's directory
    (`O_TMPFILE`; a hidden `.name.acp-tui-XXXX.tmp` where that is unsupported), is fsynced,
    gets the old file's mode (and owner, when allowed), and is renamed over the target; the
    directory is fsynced after. Killed at any moment, the target holds the old content or the
    new, never a part. Because the target is replaced rather than written into, a hard link
    to a file elsewhere is never modified through the workspace. Missing parent directories
    are created (inside the workspace only). The result is `{}`.

Writes that would lose changes
    The service remembers, per file, what the agent last saw of it: the content hash when it
    read or wrote the whole file, else its size/mtime/inode. If the file changed on disk since
    then (the user edited it, a formatter ran), the write is **refused** with `-32602`
    (`data.reason: "conflict"`), telling the agent to read the file again. Why refuse rather
    than write and warn: the spec does not require the write to happen, an agent recovers from
    the error by re-reading (the same rule Claude Code's own Edit tool enforces), and a write
    that overwrote the user's edits could only be undone by hand from the transcript. The
    check runs again just before the rename, so an edit made during the write is not lost
    either. A file the agent never read through `fs/*` has no record, so it is written (its old
    content is still in the `WriteRecord`).

`on_write` hears of every write attempt that reached the disk check: done, or refused for a
conflict. `WriteRecord` carries the old and new text and a unified diff for the transcript.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from acp_tui.protocol.client_methods import (
    ReadTextFileRequest,
    ReadTextFileResponse,
    WriteTextFileRequest,
    decode_params,
)
from acp_tui.protocol.jsonrpc import RESOURCE_NOT_FOUND, RpcError
from acp_tui.services.json_string import JsonString
from acp_tui.text import git_style_diff, human_size
from acp_tui.workspace import Workspace, fsync_directory, os_error, path_error, temp_name

DEFAULT_MAX_READ_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_WRITE_BYTES = 32 * 1024 * 1024
"""The largest write (its content as sent, escapes included) acp-tui makes for an agent
(`max_write` in the config): far beyond any source file, short of what an agent's mistake
should be allowed to put on disk."""
"""The most one `fs/read_text_file` returns: larger than any hand-written source file, small
enough that a JSON line carrying it stays quick to send and to log."""

DIFF_MAX_CHARS = 2 * 1024 * 1024
"""Above this (old and new text together) the transcript gets a summary instead of a diff:
`difflib` is quadratic in the worst case, and no one reads a diff that long."""

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""`O_NOFOLLOW`: the last component must not have become a symlink since it was checked.
`O_NONBLOCK`: opening a FIFO planted in its place must not hang; `fstat` then refuses it."""

_BLOCK = 64 * 1024

_USE_TMPFILE = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")
"""Whether writes can use an unnamed temporary file, named only once complete (Linux)."""


class WriteRecord(msgspec.Struct, frozen=True):
    """One write by the agent, for the transcript and the UI.

    `old_text` is None for a new file, and also when the old content was larger than the read
    cap (`existed` tells which); undecodable bytes in it are shown as U+FFFD. `diff` is a ready
    unified diff (or a one-line summary for huge files). `written` is False when the write was
    refused because the file changed on disk since the agent read it; `conflict` says so.
    """

    path: Path
    existed: bool
    old_text: str | None
    new_text: str | None
    """None when too large to show (more than `DIFF_MAX_CHARS`)."""
    diff: str
    written: bool
    conflict: str | None = None


class _Seen(msgspec.Struct, frozen=True):
    """What the agent last saw of a file: its identity on disk, and its hash if seen whole."""

    fingerprint: tuple[int, int, int, int]
    digest: bytes | None


class _Old(msgspec.Struct, frozen=True):
    """The file a write is about to replace."""

    info: os.stat_result
    data: bytes | None
    digest: bytes


def _fingerprint(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


class _PathOnly(msgspec.Struct):
    path: str = "?"


class FileSystemService:
    """Serves `fs/read_text_file` and `fs/write_text_file` for one session's workspace."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
        max_write_bytes: int = DEFAULT_MAX_WRITE_BYTES,
        on_write: Callable[[WriteRecord], None] | None = None,
        missing_reads_empty: bool = False,
    ) -> None:
        self.workspace = workspace
        self.missing_reads_empty = missing_reads_empty
        """Answer a read of a missing file with "" (`acp_tui.session.quirks`), not `-32002`."""
        self.max_read_bytes = max_read_bytes
        self.max_write_bytes = max_write_bytes
        self._on_write = on_write
        self._seen: dict[Path, _Seen] = {}
        self._write_lock = asyncio.Lock()

    # -- fs/read_text_file --------------------------------------------------------------------

    async def read_text_file(self, params: msgspec.Raw) -> ReadTextFileResponse:
        request = decode_params(params, ReadTextFileRequest)
        try:
            content = await asyncio.to_thread(self._read, request.path, request.line, request.limit)
        except RpcError as error:
            if not (self.missing_reads_empty and error.code == RESOURCE_NOT_FOUND):
                raise
            content = ""
        return ReadTextFileResponse(content)

    def _read(self, path: str, line: int | None, limit: int | None) -> str:
        resolved = self.workspace.resolve(path, for_write=False)
        dir_fd, name = self.workspace.open_parent(path, resolved, create=False)
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise os_error(path, exc, resolved=resolved) from exc
        finally:
            os.close(dir_fd)
        with open(fd, "rb") as file:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise path_error(
                    path, "not_a_file", f"{path!r} is not a regular file", resolved=resolved
                )
            data, whole = self._select(path, file, info.st_size, (line or 1) - 1, limit)
        text = _decode_text(path, data)
        self._seen[resolved] = _Seen(
            _fingerprint(info), hashlib.sha256(data).digest() if whole else None
        )
        return text

    def _select(
        self, path: str, file: BinaryIO, size: int, start: int, limit: int | None
    ) -> tuple[bytes, bool]:
        """The bytes of lines `start` (0-based) to `start + limit`, and whether that is all of
        the file. Reads in blocks and keeps only the selected lines, so memory stays bounded."""
        cap = self.max_read_bytes
        if start == 0 and limit is None:
            if size > cap:
                raise _too_large(path, f"the file is {size:,} bytes", cap)
            data = file.read(cap + 1)
            if len(data) > cap:  # it grew since fstat
                raise _too_large(path, "the file grew while it was read", cap)
            return data, True
        taken = bytearray()
        line_index = 0
        stopped = False
        while chunk := file.readline(_BLOCK):
            if limit is not None and line_index >= start + limit:
                stopped = True
                break
            if line_index >= start:
                taken += chunk
                if len(taken) > cap:
                    detail = f"lines {start + 1} to {line_index + 1} are {len(taken):,} bytes"
                    raise _too_large(path, detail, cap)
            if chunk.endswith(b"\n"):
                line_index += 1
        if not stopped and start > line_index:
            raise path_error(
                path,
                "past_end",
                f"line {start + 1} is past the end of {path!r}, which has {line_index + 1} lines",
            )
        return bytes(taken), start == 0 and not stopped

    # -- fs/write_text_file -------------------------------------------------------------------

    async def write_text_file(self, params: msgspec.Raw) -> dict[str, Any]:
        if len(params) > self.max_write_bytes:
            # Refused before the content is decoded: a huge write costs no memory.
            path = msgspec.json.decode(params, type=_PathOnly).path
            raise path_error(
                path,
                "too_large",
                f"the content for {path!r} is {human_size(len(params))}, more than acp-tui "
                f"writes for an agent ({human_size(self.max_write_bytes)}, `max_write` in its "
                "config); nothing was written",
            )
        request = decode_params(params, WriteTextFileRequest)
        async with self._write_lock:
            content = JsonString(request.content)
            record, refusal = await asyncio.to_thread(self._write, request.path, content)
        if self._on_write is not None:
            self._on_write(record)
        if refusal is not None:
            raise refusal
        return {}

    def _write(self, path: str, content: JsonString) -> tuple[WriteRecord, RpcError | None]:
        resolved = self.workspace.resolve(path, for_write=True)
        dir_fd, name = self.workspace.open_parent(path, resolved, create=True)
        try:
            old = self._load_old(path, resolved, dir_fd, name)
            conflict = self._conflict(path, old, self._seen.get(resolved))
            if conflict is None:
                try:
                    info, digest = self._replace(path, resolved, dir_fd, name, content, old)
                except _ChangedMeanwhile as exc:
                    conflict = str(exc)
        finally:
            os.close(dir_fd)
        record = self._record(path, resolved, old, content, conflict)
        if conflict is not None:
            return record, path_error(path, "conflict", conflict, resolved=resolved)
        self._seen[resolved] = _Seen(_fingerprint(info), digest)
        return record, None

    def _load_old(self, path: str, resolved: Path, dir_fd: int, name: str) -> _Old | None:
        """The file about to be replaced (None if there is none): its metadata, its hash, and
        its content if small enough to show in a diff."""
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise os_error(path, exc, resolved=resolved) from exc
        with open(fd, "rb") as file:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                raise path_error(
                    path, "is_directory", f"{path!r} is a directory", resolved=resolved
                )
            if not stat.S_ISREG(info.st_mode):
                raise path_error(
                    path, "not_a_file", f"{path!r} is not a regular file", resolved=resolved
                )
            digest = hashlib.sha256()
            kept: bytearray | None = bytearray()
            while block := file.read(_BLOCK):
                digest.update(block)
                if kept is not None:
                    kept += block
                    if len(kept) > self.max_read_bytes:
                        kept = None
        return _Old(info, None if kept is None else bytes(kept), digest.digest())

    @staticmethod
    def _conflict(path: str, old: _Old | None, seen: _Seen | None) -> str | None:
        """Why writing now would lose changes made since the agent's last look, or None."""
        if seen is None or old is None:
            return None
        if seen.digest is not None:
            changed = seen.digest != old.digest
        else:
            changed = seen.fingerprint != _fingerprint(old.info)
        if not changed:
            return None
        return (
            f"{path!r} changed on disk since the agent last read it, so the write was refused "
            "to keep those changes; nothing was written. Read the file again and redo the edit."
        )

    def _record(
        self,
        path: str,
        resolved: Path,
        old: _Old | None,
        content: JsonString,
        conflict: str | None,
    ) -> WriteRecord:
        old_text = None
        if old is not None and old.data is not None:
            old_text = old.data.decode("utf-8", errors="replace")
        new_text = content.whole() if len(content) <= DIFF_MAX_CHARS else None
        if old is not None and old_text is None:
            diff = f"(diff not shown: the old {path} is {old.info.st_size:,} bytes)\n"
        elif new_text is None:
            diff = f"(diff not shown: the new {path} is {human_size(len(content))})\n"
        else:
            diff = unified_diff(path, old_text, new_text)
        return WriteRecord(
            path=resolved,
            existed=old is not None,
            old_text=old_text,
            new_text=new_text,
            diff=diff,
            written=conflict is None,
            conflict=conflict,
        )

    def _replace(
        self,
        path: str,
        resolved: Path,
        dir_fd: int,
        name: str,
        content: JsonString,
        old: _Old | None,
    ) -> tuple[os.stat_result, bytes]:
        """Atomically make `name` (in `dir_fd`) hold `content` in UTF-8; return the new file's
        metadata and the hash of its bytes."""
        digest = hashlib.sha256()
        try:
            # An existing file may be private: its new content must not be readable by others
            # before its mode is copied. A new file gets the usual mode (umask applies).
            fd, temp_name = _create_temp(dir_fd, name, 0o600 if old is not None else 0o666)
            try:
                for data in _encoded(path, content):
                    digest.update(data)
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                if old is not None:
                    os.fchmod(fd, stat.S_IMODE(old.info.st_mode))
                    if (old.info.st_uid, old.info.st_gid) != (os.geteuid(), os.getegid()):
                        with contextlib.suppress(PermissionError):
                            os.fchown(fd, old.info.st_uid, old.info.st_gid)
                os.fsync(fd)
                if temp_name is None:
                    temp_name = _link_temp(fd, dir_fd, name)
                if old is not None:
                    _check_unchanged(path, dir_fd, name, old)
                os.rename(temp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                temp_name = None
                info = os.fstat(fd)
            finally:
                os.close(fd)
                if temp_name is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(temp_name, dir_fd=dir_fd)
        except OSError as exc:
            raise os_error(path, exc, resolved=resolved) from exc
        fsync_directory(dir_fd)
        return info, digest.digest()


def _encoded(path: str, content: JsonString) -> Iterator[bytes]:
    """A write's content in UTF-8, a piece at a time."""
    at = 0
    try:
        for text in content.pieces():
            try:
                yield text.encode("utf-8")
            except UnicodeEncodeError as exc:  # a lone surrogate, escaped in the JSON
                at += exc.start
                message = f"the content for {path!r} is not valid Unicode (at character {at})"
                raise path_error(path, "bad_content", message) from None
            at += len(text)
    except msgspec.DecodeError as exc:
        message = f"the content for {path!r} is not a valid JSON string: {exc}"
        raise path_error(path, "bad_content", message) from None


def unified_diff(path: str, old_text: str | None, new_text: str) -> str:
    """A unified diff of one file (`old_text` None: a new file), for the transcript."""
    if len(old_text or "") + len(new_text) > DIFF_MAX_CHARS:
        old = "a new file" if old_text is None else f"{len(old_text):,}"
        return f"(diff not shown: {old} → {len(new_text):,} characters)\n"
    diff = git_style_diff(old_text or "", new_text, "/dev/null" if old_text is None else path, path)
    if not diff and old_text is None:  # a new, empty file: still worth a line in the transcript
        return f"--- /dev/null\n+++ {path}\n"
    return diff


def _decode_text(path: str, data: bytes) -> str:
    """UTF-8 text, or a `-32602` saying why the file is not text."""
    nul = data.find(b"\0")
    if nul >= 0:
        raise path_error(
            path,
            "binary",
            f"{path!r} is a binary file (a NUL byte at offset "
            f"{nul} of the part read); acp-tui only serves text files",
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise path_error(
            path,
            "binary",
            f"{path!r} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start} of "
            "the part read); acp-tui only serves UTF-8 text files",
        ) from None


def _too_large(path: str, detail: str, cap: int) -> RpcError:
    return path_error(
        path,
        "too_large",
        f"{path!r}: {detail}, more than the {cap:,} bytes acp-tui returns in one read; read it "
        "in parts with `line` and `limit`",
    )


def _create_temp(dir_fd: int, name: str, mode: int) -> tuple[int, str | None]:
    """A new empty file for the content, in the target's directory (so the rename is atomic):
    unnamed (`O_TMPFILE`, name None) where possible, else under a fresh hidden name."""
    if _USE_TMPFILE:
        try:
            flags = os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC
            return os.open(".", flags, mode, dir_fd=dir_fd), None
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        temporary = temp_name(name)
        try:
            return os.open(temporary, flags, mode, dir_fd=dir_fd), temporary
        except FileExistsError:
            continue


def _link_temp(fd: int, dir_fd: int, name: str) -> str:
    """Give a complete unnamed temporary file a name, so it can be renamed over the target."""
    while True:
        temporary = temp_name(name)
        try:
            os.link(f"/proc/self/fd/{fd}", temporary, dst_dir_fd=dir_fd, follow_symlinks=True)
            return temporary
        except FileExistsError:
            continue


class _ChangedMeanwhile(Exception):
    """The target changed while the new content was being written: the write is a conflict."""


def _check_unchanged(path: str, dir_fd: int, name: str, old: _Old) -> None:
    """Refuse to rename over a file that changed while the new content was being written."""
    try:
        now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return  # deleted meanwhile: nothing there to lose
    if _fingerprint(now) != _fingerprint(old.info):
        raise _ChangedMeanwhile(
            f"{path!r} changed on disk while acp-tui was writing it, so the write was refused "
            "to keep those changes; nothing was written. Read the file again and redo the edit."
        )
