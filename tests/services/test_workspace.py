"""Workspace confinement: which paths an agent may use, and the error it gets for the others."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_tui.protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError
from acp_tui.workspace import Workspace


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp/ws (the workspace) with a file, a subdir, and links in and out; tmp/out beside it."""
    ws, out = tmp_path / "ws", tmp_path / "out"
    (ws / "sub").mkdir(parents=True)
    out.mkdir()
    (ws / "file.txt").write_text("text\n")
    (out / "secret.txt").write_text("secret\n")
    (ws / "inner-link").symlink_to(ws / "sub")
    (ws / "out-link").symlink_to(out)
    (ws / "secret-link.txt").symlink_to(out / "secret.txt")
    (ws / "loop").symlink_to("loop")
    os.mkfifo(ws / "fifo")
    return tmp_path


# (path relative to tmp, for_write, expected: a path relative to tmp, or (code, reason))
CASES = [
    ("ws/file.txt", False, "ws/file.txt"),
    ("ws/./sub/../file.txt", False, "ws/file.txt"),
    ("ws//file.txt", False, "ws/file.txt"),
    ("ws/inner-link/../file.txt", False, "ws/file.txt"),  # `..` after a link, as the kernel does
    ("ws/file.txt", True, "ws/file.txt"),
    ("ws/new/dirs/file.txt", True, "ws/new/dirs/file.txt"),
    ("ws/inner-link/new.txt", True, "ws/sub/new.txt"),
    ("ws/missing.txt", False, (RESOURCE_NOT_FOUND, "not_found")),
    ("ws/missing/file.txt", False, (RESOURCE_NOT_FOUND, "not_found")),
    ("out/secret.txt", False, (INVALID_PARAMS, "outside_workspace")),
    ("out/missing.txt", False, (INVALID_PARAMS, "outside_workspace")),  # no existence leak
    ("out/new.txt", True, (INVALID_PARAMS, "outside_workspace")),
    ("ws/../out/secret.txt", False, (INVALID_PARAMS, "outside_workspace")),
    ("ws/missing/../../out/new.txt", True, (INVALID_PARAMS, "outside_workspace")),
    ("ws/out-link/secret.txt", False, (INVALID_PARAMS, "outside_workspace")),
    ("ws/out-link/new/deep.txt", True, (INVALID_PARAMS, "outside_workspace")),
    ("ws/secret-link.txt", True, (INVALID_PARAMS, "outside_workspace")),
    ("ws/loop", False, (INVALID_PARAMS, "symlink")),
    ("ws", False, (INVALID_PARAMS, "is_directory")),
    ("ws/sub", True, (INVALID_PARAMS, "is_directory")),
    ("ws/newdir/", True, (INVALID_PARAMS, "is_directory")),
    ("ws/fifo", False, (INVALID_PARAMS, "not_a_file")),
    ("ws/fifo", True, (INVALID_PARAMS, "not_a_file")),
    ("ws/file.txt/child", True, (INVALID_PARAMS, "not_a_directory")),
    ("ws/file.txt/a/b", True, (INVALID_PARAMS, "not_a_directory")),
]


@pytest.mark.parametrize(("relative", "for_write", "expected"), CASES)
def test_resolve(tree: Path, relative: str, for_write: bool, expected: object) -> None:
    workspace = Workspace([tree / "ws"])
    path = str(tree) + "/" + relative
    if isinstance(expected, str):
        assert workspace.resolve(path, for_write=for_write) == tree / expected
        return
    with pytest.raises(RpcError) as caught:
        workspace.resolve(path, for_write=for_write)
    assert (caught.value.code, caught.value.data["reason"]) == expected
    assert repr(path) in caught.value.message


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("file.txt", "not_absolute"),
        ("./file.txt", "not_absolute"),
        ("~/file.txt", "not_absolute"),
        ("", "not_absolute"),
        ("/ws\0/x", "bad_path"),
        ("/ws/\ud800", "bad_path"),  # cannot be encoded as a file name
    ],
)
def test_bad_paths_are_invalid_params(tree: Path, path: str, reason: str) -> None:
    with pytest.raises(RpcError) as caught:
        Workspace([tree / "ws"]).resolve(path, for_write=True)
    assert (caught.value.code, caught.value.data["reason"]) == (INVALID_PARAMS, reason)


def test_the_outside_error_says_where_the_path_leads_and_how_to_widen(tree: Path) -> None:
    with pytest.raises(RpcError) as caught:
        Workspace([tree / "ws"]).resolve(str(tree / "ws/out-link/secret.txt"), for_write=False)
    message = caught.value.message
    assert f"it resolves to {str(tree / 'out/secret.txt')!r}" in message
    assert f"outside this session's workspace ({tree / 'ws'})" in message
    assert f"--allow-path {tree / 'out'}" in message
    assert caught.value.data["resolved"] == str(tree / "out/secret.txt")


def test_a_string_prefix_is_not_containment(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws-evil").mkdir()
    (tmp_path / "ws-evil/x.txt").write_text("x")
    with pytest.raises(RpcError, match="outside"):
        Workspace([tmp_path / "ws"]).resolve(str(tmp_path / "ws-evil/x.txt"), for_write=False)


def test_additional_directories_and_allowed_paths_widen_the_workspace(tree: Path) -> None:
    workspace = Workspace([tree / "ws"], allowed=[tree / "out"])
    secret = workspace.resolve(str(tree / "ws/secret-link.txt"), for_write=False)
    assert secret == tree / "out/secret.txt"
    assert workspace.describe() == f"{tree / 'ws'}; also allowed: {tree / 'out'}"
    assert Workspace([tree / "ws", tree / "out"]).contains(tree / "out/new.txt")


def test_roots_reached_through_a_symlink_still_work(tree: Path) -> None:
    (tree / "ws-link").symlink_to(tree / "ws")
    workspace = Workspace([tree / "ws-link"])
    assert workspace.cwd == tree / "ws"
    assert (
        workspace.resolve(str(tree / "ws-link/file.txt"), for_write=False) == tree / "ws/file.txt"
    )


def test_roots_must_be_absolute() -> None:
    with pytest.raises(ValueError, match="absolute"):
        Workspace([Path("relative")])
    with pytest.raises(ValueError, match="at least one root"):
        Workspace([])


def test_resolve_directory(tree: Path) -> None:
    workspace = Workspace([tree / "ws"])
    assert workspace.resolve_directory(None) == tree / "ws"
    assert workspace.resolve_directory(str(tree / "ws/inner-link")) == tree / "ws/sub"
    for path, reason in [
        (tree / "ws/file.txt", "not_a_directory"),
        (tree / "ws/out-link", "outside_workspace"),
        (tree / "ws/nope", "not_found"),
    ]:
        with pytest.raises(RpcError) as caught:
            workspace.resolve_directory(str(path))
        assert caught.value.data["reason"] == reason


def test_open_parent_refuses_a_symlink_planted_after_resolve(tree: Path) -> None:
    """The race: `sub` is checked, then swapped for a link to the outside before the open."""
    workspace = Workspace([tree / "ws"])
    path = str(tree / "ws/sub/deeper/new.txt")
    resolved = workspace.resolve(path, for_write=True)
    (tree / "ws/sub").rmdir()
    (tree / "ws/sub").symlink_to(tree / "out")
    with pytest.raises(RpcError) as caught:
        workspace.open_parent(path, resolved, create=True)
    assert caught.value.data["reason"] == "not_a_directory"
    assert sorted(p.name for p in (tree / "out").iterdir()) == ["secret.txt"]


def test_open_parent_creates_missing_directories_only_with_create(tree: Path) -> None:
    workspace = Workspace([tree / "ws"])
    path = str(tree / "ws/a/b/c.txt")
    resolved = workspace.resolve(path, for_write=True)
    with pytest.raises(RpcError) as caught:
        workspace.open_parent(path, resolved, create=False)
    assert caught.value.code == RESOURCE_NOT_FOUND
    fd, name = workspace.open_parent(path, resolved, create=True)
    os.close(fd)
    assert name == "c.txt" and (tree / "ws/a/b").is_dir()
