"""A rewind never deletes or overwrites a path whose state a checkpoint did not save (a link to
outside the workspace, a file too large, unreadable or not a regular file, a repository of its
own, an ignored file): it leaves it as it is and lists it as not put back, with the reason."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from acp_tui.checkpoints import CheckpointStore, SessionCheckpoints
from acp_tui.checkpoints import store as store_module
from acp_tui.checkpoints.rewind import apply_rewind, plan_rewind, rewinds, undo_plan
from acp_tui.checkpoints.unsaved import NOT_SAVED

LINK_OUTSIDE = f"{NOT_SAVED} (a symbolic link to outside the workspace)"


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def tree(root: Path) -> dict[str, bytes | str]:
    """Every path under `root`: a file's bytes, a link's target."""
    found: dict[str, bytes | str] = {}
    for directory, names, files in os.walk(root):
        for name in names + files:
            path = Path(directory, name)
            key = str(path.relative_to(root))
            if path.is_symlink():
                found[key] = "-> " + os.readlink(path)
            elif path.is_file():
                found[key] = path.read_bytes()
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, {"app.py": "a = 1\n", "docs/readme.md": "# hi\n"})
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the workspace, that nothing here may touch."""
    root = tmp_path / "outside"
    write(root, {"target.txt": "not the workspace's\n", "other.txt": "nor this\n"})
    return root


def session(tmp_path: Path, workspace: Path, **kwargs: int) -> SessionCheckpoints:
    return SessionCheckpoints(CheckpointStore.open(workspace, tmp_path / "store", **kwargs), "s")


def turn(checkpoints: SessionCheckpoints, change: Callable[[], None]) -> None:
    """Turn 1, in which the agent does `change` and edits app.py (which a rewind puts back)."""
    checkpoints.begin(1)
    change()
    write(checkpoints.store.workspace, {"app.py": "agent\n"})
    checkpoints.end(1)


def rewound(checkpoints: SessionCheckpoints) -> list[tuple[str, str]]:
    """Rewind turn 1 whole; what was not put back (the plan and the result agree)."""
    plan = plan_rewind(checkpoints, 1)
    result = apply_rewind(checkpoints.store, plan)
    assert result.failed == []
    assert result.not_put_back == plan.not_put_back
    assert (checkpoints.store.workspace / "app.py").read_text() == "a = 1\n"
    return result.not_put_back


def replace(path: Path, text: str) -> None:
    path.unlink()
    path.write_text(text)


# -- a link to outside the workspace -------------------------------------------------------------


def test_a_link_to_outside_replaced_by_a_file_is_kept_and_listed(
    tmp_path: Path, workspace: Path, outside: Path
) -> None:
    (workspace / "out").symlink_to(outside / "target.txt")
    before = tree(outside)
    checkpoints = session(tmp_path, workspace)
    turn(checkpoints, lambda: replace(workspace / "out", "the agent's file\n"))
    plan = plan_rewind(checkpoints, 1)
    assert [f.path for f in plan.files] == ["app.py"]  # "out" is not deleted
    assert rewound(checkpoints) == [("out", LINK_OUTSIDE)]
    assert (workspace / "out").read_text() == "the agent's file\n"
    assert tree(outside) == before


def test_a_link_to_outside_the_agent_deleted_is_listed(
    tmp_path: Path, workspace: Path, outside: Path
) -> None:
    (workspace / "out").symlink_to(outside / "target.txt")
    before = tree(outside)
    checkpoints = session(tmp_path, workspace)
    turn(checkpoints, (workspace / "out").unlink)
    assert rewound(checkpoints) == [("out", LINK_OUTSIDE)]
    assert not (workspace / "out").is_symlink()  # never made again: where it pointed is unknown
    assert tree(outside) == before


@pytest.mark.parametrize("now_to", ["outside/other.txt", "ws/app.py"])
def test_a_link_to_outside_pointed_elsewhere_is_left_so_and_listed(
    tmp_path: Path, workspace: Path, outside: Path, now_to: str
) -> None:
    """Pointed at another file outside (skipped both times), or inside (saved now, so a naive
    rewind would delete it)."""
    (workspace / "out").symlink_to(outside / "target.txt")
    before = tree(outside)
    checkpoints = session(tmp_path, workspace)

    def repoint() -> None:
        (workspace / "out").unlink()
        (workspace / "out").symlink_to(tmp_path / now_to)

    turn(checkpoints, repoint)
    assert rewound(checkpoints) == [("out", LINK_OUTSIDE)]
    assert os.readlink(workspace / "out") == str(tmp_path / now_to)
    assert tree(outside) == before


def test_a_link_to_outside_left_alone_is_not_listed(
    tmp_path: Path, workspace: Path, outside: Path
) -> None:
    (workspace / "out").symlink_to(outside / "target.txt")
    checkpoints = session(tmp_path, workspace)
    turn(checkpoints, lambda: None)
    assert rewound(checkpoints) == []
    assert os.readlink(workspace / "out") == str(outside / "target.txt")


def test_a_directory_that_was_a_link_to_outside_keeps_its_files(
    tmp_path: Path, workspace: Path, outside: Path
) -> None:
    (workspace / "shared").symlink_to(outside)
    before = tree(outside)
    checkpoints = session(tmp_path, workspace)

    def make_it_a_directory() -> None:
        (workspace / "shared").unlink()
        write(workspace, {"shared/target.txt": "the agent's\n"})

    turn(checkpoints, make_it_a_directory)
    assert rewound(checkpoints) == [
        ("shared", f"{NOT_SAVED} (a symbolic link to outside the workspace)"),
        ("shared/target.txt", f"{NOT_SAVED} (shared: a symbolic link to outside the workspace)"),
    ]
    assert (workspace / "shared" / "target.txt").read_text() == "the agent's\n"
    assert tree(outside) == before


def test_a_link_to_outside_the_turn_made_is_not_deleted_and_listed(
    tmp_path: Path, workspace: Path, outside: Path
) -> None:
    before = tree(outside)
    checkpoints = session(tmp_path, workspace)
    turn(checkpoints, lambda: (workspace / "planted").symlink_to(outside / "target.txt"))
    [(path, reason)] = rewound(checkpoints)
    assert path == "planted"
    assert reason == (
        "the checkpoint does not hold it, but deleting it could not be undone "
        "(a symbolic link to outside the workspace)"
    )
    assert os.readlink(workspace / "planted") == str(outside / "target.txt")
    assert tree(outside) == before


def test_reverting_one_file_lists_only_what_is_about_it(
    tmp_path: Path, workspace: Path, outside: Path
) -> None:
    (workspace / "out").symlink_to(outside / "target.txt")
    checkpoints = session(tmp_path, workspace)
    turn(checkpoints, lambda: replace(workspace / "out", "the agent's file\n"))
    assert plan_rewind(checkpoints, 1, ["app.py"]).not_put_back == []
    plan = plan_rewind(checkpoints, 1, ["out"])
    assert plan.files == [] and plan.not_put_back == [("out", LINK_OUTSIDE)]


def test_undoing_a_rewind_keeps_what_the_rewind_wrote_over_a_link_to_outside(
    tmp_path: Path, workspace: Path, outside: Path
) -> None:
    """The rewind asked, and wrote docs/readme.md over the link the turn made; what was there
    before the rewind (the link) was never saved, so its undo leaves the file."""
    before = tree(outside)
    checkpoints = session(tmp_path, workspace)
    link = workspace / "docs" / "readme.md"
    turn(checkpoints, lambda: (link.unlink(), link.symlink_to(outside / "target.txt")))
    plan = plan_rewind(checkpoints, 1)
    assert {f.path: f.user_changed for f in plan.files} == {"app.py": False, "docs/readme.md": True}
    apply_rewind(checkpoints.store, plan)
    assert link.read_text() == "# hi\n" and not link.is_symlink()
    [undo] = rewinds(checkpoints.store, "s")
    plan = undo_plan(checkpoints.store, undo, "s")
    assert [f.path for f in plan.files] == ["app.py"]
    assert plan.not_put_back == [("docs/readme.md", LINK_OUTSIDE)]
    apply_rewind(checkpoints.store, plan)
    assert link.read_text() == "# hi\n"
    assert tree(outside) == before


# -- every other kind of path a checkpoint skips ---------------------------------------------------


@pytest.mark.parametrize(
    ("what", "listed"),
    [("replaced", True), ("deleted", True), ("grown", True), ("untouched", False)],
)
def test_a_file_too_large_to_save(tmp_path: Path, workspace: Path, what: str, listed: bool) -> None:
    big = workspace / "big.bin"
    big.write_bytes(b"\1" * 5000)
    checkpoints = session(tmp_path, workspace, max_size=4096)
    change = {
        "replaced": lambda: replace(big, "small now\n"),
        "deleted": big.unlink,
        "grown": lambda: big.write_bytes(b"\2" * 6000),
        "untouched": lambda: None,
    }[what]
    turn(checkpoints, change)
    expected = [("big.bin", f"{NOT_SAVED} (larger than 0 MB (4.9 KB))")] if listed else []
    assert rewound(checkpoints) == expected
    if what == "replaced":
        assert big.read_text() == "small now\n"
    elif what == "grown":
        assert big.read_bytes() == b"\2" * 6000


@pytest.mark.parametrize("replaced", [True, False])
def test_a_file_that_became_a_fifo(tmp_path: Path, workspace: Path, replaced: bool) -> None:
    """Git lists a FIFO once, as the file it was stops being one: the checkpoint then skips it,
    and the ones after do not see it at all."""
    pipe = workspace / "pipe"
    pipe.write_text("a file first\n")
    checkpoints = session(tmp_path, workspace)
    checkpoints.store.snapshot()
    pipe.unlink()
    os.mkfifo(pipe)
    turn(checkpoints, lambda: replace(pipe, "a file again\n") if replaced else None)
    if replaced:
        assert rewound(checkpoints) == [("pipe", f"{NOT_SAVED} (not a regular file)")]
        assert pipe.read_text() == "a file again\n"
    else:
        assert rewound(checkpoints) == []
        assert stat.S_ISFIFO(pipe.lstat().st_mode)


def test_an_unreadable_file_replaced_by_a_readable_one_is_kept(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = workspace / "secret.txt"
    secret.write_text("locked\n")
    access = os.access
    # As root every file reads: unreadable it is, for the checkpoint before the turn.
    monkeypatch.setattr(
        store_module.os, "access", lambda path, mode: path != str(secret) and access(path, mode)
    )
    checkpoints = session(tmp_path, workspace)
    checkpoints.begin(1)
    monkeypatch.undo()
    replace(secret, "readable now\n")
    write(workspace, {"app.py": "agent\n"})
    checkpoints.end(1)
    assert rewound(checkpoints) == [("secret.txt", f"{NOT_SAVED} (unreadable (permission denied))")]
    assert secret.read_text() == "readable now\n"


def test_a_repository_of_its_own_that_stops_being_one_keeps_its_files(
    tmp_path: Path, workspace: Path
) -> None:
    write(workspace, {"vendor/lib.py": "mine\n"})
    subprocess.run(["git", "init", "-q"], cwd=workspace / "vendor", check=True)
    checkpoints = session(tmp_path, workspace)
    turn(checkpoints, lambda: shutil.rmtree(workspace / "vendor" / ".git"))
    assert rewound(checkpoints) == [
        ("vendor", f"{NOT_SAVED} (a repository of its own)"),
        ("vendor/lib.py", f"{NOT_SAVED} (vendor: a repository of its own)"),
    ]
    assert (workspace / "vendor" / "lib.py").read_text() == "mine\n"


def test_a_repository_of_its_own_still_one_is_not_listed(tmp_path: Path, workspace: Path) -> None:
    write(workspace, {"vendor/lib.py": "mine\n"})
    subprocess.run(["git", "init", "-q"], cwd=workspace / "vendor", check=True)
    checkpoints = session(tmp_path, workspace)
    turn(checkpoints, lambda: write(workspace, {"vendor/lib.py": "changed in it\n"}))
    assert rewound(checkpoints) == []


def test_a_file_ignored_then_is_kept_when_the_turn_changed_the_rules(
    tmp_path: Path, workspace: Path
) -> None:
    write(workspace, {".gitignore": "*.env\nbuild/\n", "local.env": "TOKEN=mine\n"})
    write(workspace, {"build/cache.bin": b"\0cache"})
    write(workspace, {"conf/.gitignore": "*.local\n", "conf/db.local": "mine\n"})
    checkpoints = session(tmp_path, workspace)

    def unignore() -> None:
        write(workspace, {".gitignore": "", "local.env": "TOKEN=agent\n", "made.txt": "new\n"})
        (workspace / "conf" / ".gitignore").unlink()

    turn(checkpoints, unignore)
    assert rewound(checkpoints) == [
        ("build/cache.bin", f"{NOT_SAVED} (it was ignored)"),
        ("conf/db.local", f"{NOT_SAVED} (it was ignored)"),
        ("local.env", f"{NOT_SAVED} (it was ignored)"),
    ]
    assert (workspace / ".gitignore").read_text() == "*.env\nbuild/\n"
    assert (workspace / "conf" / ".gitignore").read_text() == "*.local\n"
    assert (workspace / "conf" / "db.local").read_text() == "mine\n"
    assert (workspace / "local.env").read_text() == "TOKEN=agent\n"
    assert (workspace / "build" / "cache.bin").read_bytes() == b"\0cache"
    assert not (workspace / "made.txt").exists()  # new, and not ignored then: deleted


def test_a_file_ignored_now_is_asked_about_before_it_is_overwritten(
    tmp_path: Path, workspace: Path
) -> None:
    checkpoints = session(tmp_path, workspace)
    readme = workspace / "docs" / "readme.md"
    turn(checkpoints, lambda: (write(workspace, {".gitignore": "*.md\n"}), readme.unlink()))
    checkpoints.begin(2)
    write(workspace, {"docs/readme.md": "ignored, in no checkpoint\n"})
    checkpoints.end(2)
    plan = plan_rewind(checkpoints, 1)
    assert {f.path: f.user_changed for f in plan.files} == {
        ".gitignore": False,
        "app.py": False,
        "docs/readme.md": True,
    }


def test_every_skipped_path_is_known_to_a_rewind_however_many(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "MAX_SKIPPED_SAVED", 2)
    write(workspace, {f"data/{n}.bin": b"\1" * 5000 for n in range(3)})
    checkpoints = session(tmp_path, workspace, max_size=4096)
    turn(checkpoints, lambda: replace(workspace / "data" / "2.bin", "small\n"))
    [read_back] = checkpoints.turns()
    assert len(read_back.skipped_before) == 2  # what `acp-tui changes` shows
    assert rewound(checkpoints) == [("data/2.bin", f"{NOT_SAVED} (larger than 0 MB (4.9 KB))")]
    assert (workspace / "data" / "2.bin").read_text() == "small\n"
