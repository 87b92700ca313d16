"""`fs/read_text_file` and `fs/write_text_file`: lines, caps, text checks, atomic writes, diffs,
and writes refused when they would lose changes made on disk."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_tui.protocol.client_methods import ReadTextFileRequest, decode_params
from acp_tui.protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError
from acp_tui.services import fs
from acp_tui.services.fs import FileSystemService, WriteRecord, unified_diff
from acp_tui.workspace import Workspace


def params(**fields: Any) -> msgspec.Raw:
    return msgspec.Raw(json.dumps({"sessionId": "s", **fields}).encode())


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def records() -> list[WriteRecord]:
    return []


@pytest.fixture
def service(ws: Path, records: list[WriteRecord]) -> FileSystemService:
    return FileSystemService(Workspace([ws]), max_read_bytes=1000, on_write=records.append)


async def read(service: FileSystemService, path: Path | str, **fields: Any) -> str:
    result = await service.read_text_file(params(path=str(path), **fields))
    return result.content


async def write(service: FileSystemService, path: Path | str, content: str) -> dict[str, Any]:
    return await service.write_text_file(params(path=str(path), content=content))


async def error_of(call: Any) -> RpcError:
    with pytest.raises(RpcError) as caught:
        await call
    return caught.value


# -- reading ------------------------------------------------------------------------------------

TEXT = "one\ntwo\r\nthree\n\nfive"


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, TEXT),
        ({"line": 1}, TEXT),
        ({"line": 2}, "two\r\nthree\n\nfive"),
        ({"line": 2, "limit": 2}, "two\r\nthree\n"),
        ({"limit": 1}, "one\n"),
        ({"limit": 0}, ""),
        ({"line": 5}, "five"),
        ({"line": 4, "limit": 100}, "\nfive"),
        # Malformed optional fields count as absent (the schema's leniency rule).
        ({"line": 0}, TEXT),
        ({"line": -3, "limit": "two"}, TEXT),
        ({"line": None, "limit": None, "_meta": {"x": 1}, "unknown": True}, TEXT),
    ],
)
async def test_read_lines(
    service: FileSystemService, ws: Path, fields: dict[str, Any], expected: str
) -> None:
    (ws / "f.txt").write_bytes(TEXT.encode())
    assert await read(service, ws / "f.txt", **fields) == expected


@pytest.mark.parametrize(
    ("content", "line", "expected"),
    [
        ("a\nb\n", 3, ""),  # after the last newline there is an empty last line
        ("", 1, ""),
        ("a\nb", 3, None),
        ("a\nb\n", 4, None),
        ("", 2, None),
    ],
)
async def test_reading_past_the_end(
    service: FileSystemService, ws: Path, content: str, line: int, expected: str | None
) -> None:
    (ws / "f.txt").write_text(content)
    if expected is not None:
        assert await read(service, ws / "f.txt", line=line) == expected
        return
    error = await error_of(read(service, ws / "f.txt", line=line))
    assert (error.code, error.data["reason"]) == (INVALID_PARAMS, "past_end")
    assert f"line {line} is past the end" in error.message


async def test_text_comes_back_byte_for_byte(service: FileSystemService, ws: Path) -> None:
    text = "\ufeffBOM, CRLF\r\nünïcödé 😀\ttabs\x0bvertical\u2028separator\n"
    (ws / "f.txt").write_bytes(text.encode())
    assert await read(service, ws / "f.txt") == text


async def test_a_missing_file_is_resource_not_found(service: FileSystemService, ws: Path) -> None:
    error = await error_of(read(service, ws / "nope.txt"))
    assert error.code == RESOURCE_NOT_FOUND
    assert error.message == f"{str(ws / 'nope.txt')!r} does not exist"


@pytest.mark.parametrize(
    ("data", "fields", "reason", "detail"),
    [
        (b"x" * 1001, {}, "too_large", "the file is 1,001 bytes, more than the 1,000 bytes"),
        (b"x\n" * 600, {"limit": 600}, "too_large", "lines 1 to 501 are 1,002 bytes"),
        (b"\x89PNG\r\n\x1a\n\0\0", {}, "binary", "(a NUL byte at offset 8"),
        (b"caf\xe9\n", {}, "binary", "not UTF-8 text (byte 0xe9 at offset 3"),
        (b"ok\n\xff\xfe", {"line": 2}, "binary", "(byte 0xff at offset 0 of the part read)"),
    ],
)
async def test_reads_that_are_refused(
    service: FileSystemService,
    ws: Path,
    data: bytes,
    fields: dict[str, Any],
    reason: str,
    detail: str,
) -> None:
    (ws / "f").write_bytes(data)
    error = await error_of(read(service, ws / "f", **fields))
    assert (error.code, error.data["reason"]) == (INVALID_PARAMS, reason)
    assert detail in error.message


async def test_a_part_of_a_file_larger_than_the_cap_can_be_read(
    service: FileSystemService, ws: Path
) -> None:
    (ws / "big.log").write_bytes(b"".join(b"line %d\n" % n for n in range(100_000)))
    assert await read(service, ws / "big.log", line=50_000, limit=2) == "line 49999\nline 50000\n"


async def test_a_huge_line_is_refused_without_reading_it_all(
    service: FileSystemService, ws: Path
) -> None:
    (ws / "one-line").write_bytes(b"a\n" + b"x" * 10_000_000)
    error = await error_of(read(service, ws / "one-line", line=2))
    assert error.data["reason"] == "too_large"


async def test_reading_a_fifo_does_not_hang(service: FileSystemService, ws: Path) -> None:
    os.mkfifo(ws / "fifo")
    error = await asyncio.wait_for(error_of(read(service, ws / "fifo")), 5)
    assert error.data["reason"] == "not_a_file"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"sessionId": "s"}', "Object missing required field `path`"),
        (b'{"sessionId": "s", "path": 7}', "Expected `str`, got `int` - at `$.path`"),
        (b"null", "Expected `object`, got `null`"),
        (b"", "Expected `object`, got `null`"),
        (b'"/etc/passwd"', "Expected `object`, got `str`"),
    ],
)
def test_malformed_params_are_invalid_params(raw: bytes, message: str) -> None:
    with pytest.raises(RpcError) as caught:
        decode_params(msgspec.Raw(raw), ReadTextFileRequest)
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message == f"Invalid params: {message}"


# -- writing ------------------------------------------------------------------------------------


async def test_write_creates_the_file_and_its_parent_directories(
    service: FileSystemService, ws: Path, records: list[WriteRecord]
) -> None:
    assert await write(service, ws / "a/b/new.txt", "hello\n") == {}
    assert (ws / "a/b/new.txt").read_text() == "hello\n"
    assert (ws / "a/b/new.txt").stat().st_mode & 0o777 == 0o666 & ~_umask()
    [record] = records
    assert (record.path, record.existed, record.old_text, record.written) == (
        ws / "a/b/new.txt",
        False,
        None,
        True,
    )
    assert record.diff == (f"--- /dev/null\n+++ {ws / 'a/b/new.txt'}\n@@ -0,0 +1 @@\n+hello\n")


async def test_write_replaces_atomically_and_keeps_the_mode(
    service: FileSystemService, ws: Path, records: list[WriteRecord]
) -> None:
    target = ws / "script.sh"
    target.write_text("#!/bin/sh\necho old\n")
    target.chmod(0o750)
    inode = target.stat().st_ino
    await write(service, target, "#!/bin/sh\necho new")
    assert target.read_text() == "#!/bin/sh\necho new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert target.stat().st_ino != inode  # a new file was renamed over the old one
    assert sorted(p.name for p in ws.iterdir()) == ["script.sh"]
    assert records[0].old_text == "#!/bin/sh\necho old\n"
    assert records[0].diff.splitlines()[2:] == [
        "@@ -1,2 +1,2 @@",
        " #!/bin/sh",
        "-echo old",
        "+echo new",
        "\\ No newline at end of file",
    ]


async def test_writing_through_a_link_inside_the_workspace_updates_its_target(
    service: FileSystemService, ws: Path
) -> None:
    (ws / "real.txt").write_text("old")
    (ws / "alias.txt").symlink_to(ws / "real.txt")
    await write(service, ws / "alias.txt", "new")
    assert (ws / "alias.txt").is_symlink()
    assert (ws / "real.txt").read_text() == "new"


async def test_a_hard_link_to_a_file_outside_is_never_modified(
    service: FileSystemService, ws: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    os.link(outside, ws / "hard.txt")
    await write(service, ws / "hard.txt", "replaced\n")
    assert (ws / "hard.txt").read_text() == "replaced\n"
    assert outside.read_text() == "outside\n"


async def test_the_named_temporary_file_fallback(
    service: FileSystemService, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fs, "_USE_TMPFILE", False)
    (ws / "f.txt").write_text("old")
    await write(service, ws / "f.txt", "new")
    assert (ws / "f.txt").read_text() == "new"
    assert sorted(p.name for p in ws.iterdir()) == ["f.txt"]


async def test_a_failed_write_leaves_the_file_and_no_temporary_file(
    service: FileSystemService, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "f.txt").write_text("old")

    def disk_full(fd: int, data: Any) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fs, "_USE_TMPFILE", False)
    monkeypatch.setattr(os, "write", disk_full)
    error = await error_of(write(service, ws / "f.txt", "new"))
    monkeypatch.undo()
    assert "No space left on device" in error.message
    assert sorted(p.name for p in ws.iterdir()) == ["f.txt"]
    assert (ws / "f.txt").read_text() == "old"


# -- writes that would lose changes -------------------------------------------------------------


async def test_a_file_changed_since_the_agent_read_it_is_not_overwritten(
    service: FileSystemService, ws: Path, records: list[WriteRecord]
) -> None:
    target = ws / "f.txt"
    target.write_text("v1\n")
    assert await read(service, target) == "v1\n"
    target.write_text("v1 + the user's edit\n")  # the user saves in their editor
    error = await error_of(write(service, target, "v2 by the agent\n"))
    assert (error.code, error.data["reason"]) == (INVALID_PARAMS, "conflict")
    assert "changed on disk since the agent last read it" in error.message
    assert target.read_text() == "v1 + the user's edit\n"
    [record] = records
    assert not record.written and record.conflict == error.message
    assert record.old_text == "v1 + the user's edit\n"
    assert "-v1 + the user's edit\n+v2 by the agent\n" in record.diff

    assert await read(service, target) == "v1 + the user's edit\n"  # the agent reads again
    await write(service, target, "v2 by the agent\n")
    assert target.read_text() == "v2 by the agent\n"


async def test_a_partial_read_also_guards_the_file(service: FileSystemService, ws: Path) -> None:
    target = ws / "f.txt"
    target.write_text("a\nb\n")
    await read(service, target, line=2)
    os.utime(target, ns=(0, 0))  # any change of size, mtime or inode counts without a hash
    assert (await error_of(write(service, target, "x"))).data["reason"] == "conflict"


async def test_rewriting_the_same_content_is_not_a_conflict(
    service: FileSystemService, ws: Path
) -> None:
    target = ws / "f.txt"
    target.write_text("same\n")
    await read(service, target)
    target.write_text("same\n")  # touched, same content: nothing to lose
    await write(service, target, "new\n")
    assert target.read_text() == "new\n"


async def test_consecutive_writes_and_unread_files_are_not_conflicts(
    service: FileSystemService, ws: Path
) -> None:
    target = ws / "f.txt"
    target.write_text("never read by the agent\n")
    await write(service, target, "one\n")
    await write(service, target, "two\n")
    assert target.read_text() == "two\n"


async def test_a_change_during_the_write_is_not_overwritten(
    service: FileSystemService,
    ws: Path,
    monkeypatch: pytest.MonkeyPatch,
    records: list[WriteRecord],
) -> None:
    target = ws / "f.txt"
    target.write_text("before\n")
    real_fsync = os.fsync

    def user_saves_meanwhile(fd: int) -> None:
        real_fsync(fd)
        if target.read_text() == "before\n":
            target.write_text("the user's edit, saved during the write\n")

    monkeypatch.setattr(os, "fsync", user_saves_meanwhile)
    error = await error_of(write(service, target, "agent\n"))
    assert error.data["reason"] == "conflict"
    assert "while acp-tui was writing it" in error.message
    assert target.read_text() == "the user's edit, saved during the write\n"
    assert sorted(p.name for p in ws.iterdir()) == ["f.txt"]
    assert not records[0].written


async def test_the_record_of_a_write_over_a_huge_file(
    service: FileSystemService, ws: Path, records: list[WriteRecord]
) -> None:
    (ws / "big.txt").write_text("x" * 5000)
    await write(service, ws / "big.txt", "small\n")
    [record] = records
    assert record.existed and record.old_text is None
    assert record.diff == f"(diff not shown: the old {ws / 'big.txt'} is 5,000 bytes)\n"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, "", "--- /dev/null\n+++ /p\n"),
        ("a\n", "a\n", ""),
        ("a\nb\n", "a\nc\n", "--- /p\n+++ /p\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"),
        ("a", "a\n", "--- /p\n+++ /p\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"),
        ("a\rb\n", "a\rc\n", "--- /p\n+++ /p\n@@ -1 +1 @@\n-a\rb\n+a\rc\n"),
    ],
)
def test_unified_diff(old: str | None, new: str, expected: str) -> None:
    assert unified_diff("/p", old, new) == expected


def test_a_huge_diff_is_summarised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fs, "DIFF_MAX_CHARS", 10)
    assert unified_diff("/p", "a" * 6, "b" * 6) == "(diff not shown: 6 → 6 characters)\n"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
