"""Checkpoints: snapshots of the workspace in a shadow git repository, what each turn changed,
and putting it back, on real files (no agent here: see test_checkpoints_agents.py)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from acp_tui.checkpoints import CheckpointError, CheckpointStore, SessionCheckpoints
from acp_tui.checkpoints.checkpointer import Checkpointer
from acp_tui.checkpoints.git import Git
from acp_tui.checkpoints.ignores import inherited_excludes
from acp_tui.checkpoints.rewind import Stale, apply_rewind, plan_rewind, rewinds, undo_plan
from acp_tui.checkpoints.turns import session_id_of, session_key
from acp_tui.session.state import SessionState


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="u",
        GIT_AUTHOR_EMAIL="u@x",
        GIT_COMMITTER_NAME="u",
        GIT_COMMITTER_EMAIL="u@x",
    )
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    ).stdout


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root, {"app.py": "a = 1\nb = 2\n", "docs/readme.md": "# hi\n", "old.txt": "old\n"})
    return root


class NoticedSession:
    """What a `Checkpointer` uses of a session: its id, its state, and the notices it is
    given (kept)."""

    def __init__(self) -> None:
        self.id = "s"
        self.state = SessionState()
        self.notices: list[str] = []

    def notice(self, *args: str) -> None:
        self.notices.append(args[1])


def open_store(tmp_path: Path, workspace: Path, **kwargs: int) -> CheckpointStore:
    return CheckpointStore.open(workspace, tmp_path / "store", **kwargs)


def test_a_turn_changes_files_and_the_checkpoints_say_which(
    tmp_path: Path, workspace: Path
) -> None:
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "sess-1")
    checkpoints.begin(1, "make the change\nplease")
    write(workspace, {"app.py": "a = 1\nb = 3\nc = 4\n", "src/new.py": "x = 1\n"})
    (workspace / "old.txt").unlink()
    checkpoints.end(1)
    [turn] = checkpoints.turns()
    assert (turn.turn, turn.prompt) == (1, "make the change")
    changes = checkpoints.changes(turn)
    got = {(f.path, f.status, f.added, f.removed) for f in changes.files}
    assert got == {
        ("app.py", "modified", 2, 1),
        ("src/new.py", "added", 1, 0),
        ("old.txt", "deleted", 0, 1),
    }
    assert changes.summary() == "3 files changed +3 -2"
    assert not changes.running


def test_a_running_turn_is_compared_with_the_workspace_now(tmp_path: Path, workspace: Path) -> None:
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "s")
    checkpoints.begin(1)
    write(workspace, {"app.py": "changed\n"})
    changes = checkpoints.changes(checkpoints.turns()[0])
    assert changes.running and [f.path for f in changes.files] == ["app.py"]


def test_storage_grows_with_what_changed_not_with_turns(tmp_path: Path, workspace: Path) -> None:
    write(workspace, {f"lib/m{i}.py": f"value = {i}\n" * 50 for i in range(50)})
    store = open_store(tmp_path, workspace)
    checkpoints = SessionCheckpoints(store, "s")
    checkpoints.begin(1)
    objects = store.git_dir / "objects"

    def count() -> int:
        return sum(len(files) for _, _, files in os.walk(objects))

    first = count()
    for turn in range(1, 6):
        checkpoints.end(turn)
        checkpoints.begin(turn + 1)
    # Unchanged turns: one small commit per checkpoint, no tree or file stored again.
    assert count() - first == 10


def test_what_is_not_stored_is_listed_as_skipped(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    write(workspace, {"big.bin": b"\0" * 5000, "node_modules/pkg/index.js": "x\n"})
    (workspace / "out").symlink_to(outside)
    (workspace / "inside").symlink_to("app.py")
    (workspace / "nested").mkdir()
    git(workspace / "nested", "init", "-q")
    store = open_store(tmp_path, workspace, max_size=4096)
    snapshot = store.snapshot()
    skipped = {s.path: s.reason for s in snapshot.skipped}
    assert skipped.keys() == {"big.bin", "out", "nested"}
    assert "larger than" in skipped["big.bin"]
    assert "outside the workspace" in skipped["out"]
    assert "repository" in skipped["nested"]
    stored = store.paths(snapshot.commit)
    assert stored == {"app.py", "docs/readme.md", "old.txt", "inside"}
    assert store.entry(snapshot.commit, "inside") is not None
    assert store.entry(snapshot.commit, "inside")[0] == "120000"  # the link, not app.py again


def test_the_users_repository_is_left_byte_for_byte(tmp_path: Path, workspace: Path) -> None:
    git(workspace, "init", "-q")
    write(workspace, {".gitignore": "*.log\nbuild/\n", "debug.log": "noise\n"})
    write(workspace, {"build/out.o": b"\x7fELF", "private.key": "k\n"})
    (workspace / ".git" / "info" / "exclude").write_text("private.key\n")
    git(workspace, "add", "app.py", ".gitignore")
    git(workspace, "commit", "-qm", "first")
    write(workspace, {"app.py": "stashed\n"})
    git(workspace, "stash", "-q")
    write(workspace, {"docs/readme.md": "# staged\n"})
    git(workspace, "add", "docs/readme.md")
    write(workspace, {"app.py": "unstaged\n"})

    def fingerprint() -> dict[str, object]:
        files = {}
        for directory, _, names in os.walk(workspace / ".git"):
            for name in names:
                path = Path(directory) / name
                files[str(path.relative_to(workspace))] = hashlib.sha256(
                    path.read_bytes()
                ).hexdigest()
        return {
            "files": files,
            "status": git(workspace, "status", "--porcelain=v2", "--untracked-files=all"),
            "refs": git(workspace, "for-each-ref"),
            "stash": git(workspace, "stash", "list"),
        }

    before = fingerprint()
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "s")
    snapshot = checkpoints.begin(1)
    assert {"debug.log", "build/out.o", "private.key"}.isdisjoint(
        checkpoints.store.paths(snapshot.commit)
    )
    write(workspace, {"app.py": "agent\n", "new.txt": "n\n"})
    checkpoints.end(1)
    apply_rewind(checkpoints.store, plan_rewind(checkpoints, 1))
    assert (workspace / "app.py").read_text() == "unstaged\n"
    assert not (workspace / "new.txt").exists()
    # `git status` itself refreshes the index's stat data: compare after it has, both times.
    assert fingerprint() == before


def test_a_workspace_inside_a_repository_inherits_its_ignore_rules(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    workspace = top / "pkg" / "sub"
    workspace.mkdir(parents=True)
    git(top, "init", "-q")
    (top / ".gitignore").write_text("*.tmp\n/pkg/sub/gen/\n/other/\n!keep.tmp\n")
    (top / "pkg" / ".gitignore").write_text("sub/local.txt\n")
    (top / ".git" / "info" / "exclude").write_text("secret.env\n")
    rules = inherited_excludes(workspace).splitlines()
    assert "*.tmp" in rules and "!keep.tmp" in rules and "secret.env" in rules
    assert "/gen/" in rules and "/local.txt" in rules
    assert not any("other" in rule for rule in rules)
    write(workspace, {"a.tmp": "", "keep.tmp": "", "gen/x.py": "", "local.txt": "", "ok.py": ""})
    store = open_store(tmp_path, workspace)
    assert store.paths(store.snapshot().commit) == {"keep.tmp", "ok.py"}


def test_binary_files_and_line_endings_come_back_byte_for_byte(
    tmp_path: Path, workspace: Path
) -> None:
    blob = bytes(range(256)) * 40
    crlf = b"one\r\ntwo\r\n"
    write(workspace, {".gitattributes": "* text=auto eol=lf\n", "img.png": blob, "win.txt": crlf})
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "s")
    checkpoints.begin(1)
    write(workspace, {"img.png": blob[::-1], "win.txt": b"changed\n"})
    checkpoints.end(1)
    changes = {f.path: f for f in checkpoints.changes(checkpoints.turns()[0]).files}
    assert changes["img.png"].binary and not changes["win.txt"].binary
    apply_rewind(checkpoints.store, plan_rewind(checkpoints, 1))
    assert (workspace / "img.png").read_bytes() == blob
    assert (workspace / "win.txt").read_bytes() == crlf


def test_rewind_asks_about_files_the_user_changed_after_the_turn(
    tmp_path: Path, workspace: Path
) -> None:
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "s")
    checkpoints.begin(1)
    write(workspace, {"app.py": "agent 1\n", "docs/readme.md": "agent\n"})
    checkpoints.end(1)
    write(workspace, {"docs/readme.md": "the user\n"})  # between turns
    checkpoints.begin(2)
    write(workspace, {"app.py": "agent 2\n"})
    checkpoints.end(2)
    write(workspace, {"old.txt": "the user again\n"})  # after the last turn
    plan = plan_rewind(checkpoints, 1)
    assert {f.path: f.user_changed for f in plan.files} == {
        "app.py": False,
        "docs/readme.md": True,
        "old.txt": True,
    }
    result = apply_rewind(checkpoints.store, plan, skip_conflicts=True)
    assert result.restored == ["app.py"]
    assert (workspace / "app.py").read_text() == "a = 1\nb = 2\n"
    assert (workspace / "docs/readme.md").read_text() == "the user\n"
    # The rewind is undoable: back to what was there just before it.
    [undo] = rewinds(checkpoints.store, "s")
    apply_rewind(checkpoints.store, undo_plan(checkpoints.store, undo, "s"))
    assert (workspace / "app.py").read_text() == "agent 2\n"


def test_a_plan_made_stale_by_a_change_is_not_applied(tmp_path: Path, workspace: Path) -> None:
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "s")
    checkpoints.begin(1)
    write(workspace, {"app.py": "agent\n"})
    checkpoints.end(1)
    plan = plan_rewind(checkpoints, 1)
    write(workspace, {"app.py": "typed meanwhile\n"})
    with pytest.raises(Stale):
        apply_rewind(checkpoints.store, plan)
    assert (workspace / "app.py").read_text() == "typed meanwhile\n"


def test_one_file_can_be_put_back_alone(tmp_path: Path, workspace: Path) -> None:
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "s")
    checkpoints.begin(1)
    write(workspace, {"app.py": "agent\n", "src/new.py": "new\n"})
    checkpoints.end(1)
    apply_rewind(checkpoints.store, plan_rewind(checkpoints, 1, ["src/new.py"]))
    assert not (workspace / "src").exists()  # and the directory it made
    assert (workspace / "app.py").read_text() == "agent\n"


def test_nothing_is_restored_through_a_symbolic_link(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "s")
    checkpoints.begin(1)
    # The turn swaps the docs directory for a link to a directory outside the workspace.
    (workspace / "docs" / "readme.md").unlink()
    (workspace / "docs").rmdir()
    (workspace / "docs").symlink_to(outside)
    checkpoints.end(1)
    plan = plan_rewind(checkpoints, 1)
    assert [f.path for f in plan.files] == ["docs/readme.md"]  # the link itself was skipped
    result = apply_rewind(checkpoints.store, plan)
    assert result.restored == []
    [(path, reason)] = result.failed
    assert path == "docs/readme.md" and "symbolic link" in reason
    assert list(outside.iterdir()) == []


def test_links_inside_come_back_as_links_and_links_outside_never(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "inside").symlink_to("app.py")
    (workspace / "out").symlink_to(tmp_path)
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "s")
    checkpoints.begin(1)
    (workspace / "inside").unlink()
    (workspace / "out").unlink()
    checkpoints.end(1)
    apply_rewind(checkpoints.store, plan_rewind(checkpoints, 1))
    assert os.readlink(workspace / "inside") == "app.py"
    assert not (workspace / "out").is_symlink()


def test_odd_session_ids_make_valid_refs(tmp_path: Path, workspace: Path) -> None:
    for session_id in ("sess_1", "a b/c..d:e", "x.lock", "日本", "=odd"):
        assert session_id_of(session_key(session_id)) == session_id
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "a b/c..d:e")
    checkpoints.begin(1)
    assert [t.turn for t in checkpoints.turns()] == [1]


async def test_without_git_checkpoints_are_off_said_once(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp_tui.session.state import SessionState

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    warnings: list[str] = []
    checkpointer = Checkpointer(workspace, root=tmp_path / "store", on_warning=warnings.append)

    class FakeSession:
        id = "s"
        state = SessionState()

    for _ in range(3):
        assert not await checkpointer.before_turn(FakeSession(), "hi")  # type: ignore[arg-type]
        assert await checkpointer.after_turn(FakeSession()) is None  # type: ignore[arg-type]
    assert len(warnings) == 1 and "git was not found" in warnings[0]


def test_acp_tuis_own_data_inside_the_workspace_is_left_out(tmp_path: Path) -> None:
    workspace = tmp_path / "home"
    write(workspace, {"notes.txt": "n\n"})
    store = CheckpointStore.open(workspace, workspace / ".local/share/acp-tui/checkpoints")
    assert store.paths(store.snapshot().commit) == {"notes.txt"}


def test_one_hunk_is_undone_and_the_rest_of_the_file_kept(tmp_path: Path, workspace: Path) -> None:
    from acp_tui.checkpoints.hunks import hunks
    from acp_tui.checkpoints.rewind import revert_hunks

    lines = [f"line {i}\n" for i in range(30)]
    write(workspace, {"long.txt": "".join(lines)})
    checkpoints = SessionCheckpoints(open_store(tmp_path, workspace), "s")
    checkpoints.begin(1)
    agent = list(lines)
    agent[2] = "agent A\n"
    agent[25] = "agent B\n"
    write(workspace, {"long.txt": "".join(agent)})
    checkpoints.end(1)
    assert len(hunks("".join(lines), "".join(agent))) == 2
    mine = [*agent[:14], "the user\n", *agent[14:]]
    write(workspace, {"long.txt": "".join(mine)})  # the user adds a line: B moves down
    result = revert_hunks(checkpoints, 1, {"long.txt": [1]})
    assert result.restored == ["long.txt"] and result.undo
    text = (workspace / "long.txt").read_text()
    assert "agent A" in text and "the user" in text and "agent B" not in text
    assert "line 25\n" in text
    taken = "".join(lines).replace("line 2\n", "user took it\n")
    write(workspace, {"long.txt": taken})
    result = revert_hunks(checkpoints, 1, {"long.txt": [0]})
    assert result.restored == []
    assert result.failed == [("long.txt", "its lines changed since the turn: left as it is")]
    assert (workspace / "long.txt").read_text() == taken


async def test_a_workspace_too_big_to_copy_turns_checkpoints_off_once(
    tmp_path: Path, workspace: Path
) -> None:
    from acp_tui.session.state import SessionState

    warnings: list[str] = []
    checkpointer = Checkpointer(workspace, root=tmp_path / "store", on_warning=warnings.append)
    store = checkpointer.store()
    assert store is not None
    store.max_files = 2

    class FakeSession:
        id = "s"
        state = SessionState()

        def __init__(self) -> None:
            self.notices: list[str] = []

        def notice(self, *args: str) -> None:
            self.notices.append(args[1])

    session = FakeSession()
    await checkpointer.warm_up()
    for _ in range(2):
        assert not await checkpointer.before_turn(session, "hi")  # type: ignore[arg-type]
    assert len(warnings) == 1 and "3 files are new or changed" in warnings[0]
    assert checkpointer.unavailable is not None and session.notices == []
    store.max_files, store.max_bytes = 100, 10
    with pytest.raises(CheckpointError, match="too much to copy"):
        store.snapshot()


async def test_a_checkpoint_staged_ahead_counts_what_changed_meanwhile_as_the_turns(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Headless stages the first turn's checkpoint as the agent starts up: a file written in
    between (by the agent, as it starts) is a change of that turn."""
    import asyncio
    import threading

    write(workspace, {"a.txt": "a\n"})
    staged = threading.Event()
    stage = CheckpointStore.stage

    def stage_and_say(self: CheckpointStore) -> object:
        result = stage(self)
        staged.set()
        return result

    monkeypatch.setattr(CheckpointStore, "stage", stage_and_say)
    checkpointer = Checkpointer(workspace, root=tmp_path / "store")
    session = NoticedSession()
    checkpointer.stage_ahead()
    assert await asyncio.to_thread(staged.wait, 10)
    write(workspace, {"b.txt": "b\n"})
    assert await checkpointer.before_turn(session, "hi")  # type: ignore[arg-type]
    changes = await checkpointer.after_turn(session)  # type: ignore[arg-type]
    assert changes is not None
    assert [(change.path, change.status) for change in changes.files] == [("b.txt", "added")]
    assert session.notices == ["1 file changed +1 -0"]
    # The next turn stages afresh: nothing changed in it, which takes no diff to tell.
    ran: list[str] = []
    run = Git.run

    def noted(self: Git, *args: str, **kwargs: object) -> bytes:
        ran.append(args[0])
        return run(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Git, "run", noted)
    assert await checkpointer.before_turn(session, "again")  # type: ignore[arg-type]
    changes = await checkpointer.after_turn(session)  # type: ignore[arg-type]
    assert changes is not None and changes.files == []
    assert "write-tree" in ran and "diff-tree" not in ran


async def test_the_prompt_waits_for_the_workspace_staged_not_for_the_commit(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio
    import threading

    go_on = threading.Event()
    begin = SessionCheckpoints.begin

    def held_begin(self: SessionCheckpoints, *args: object) -> object:
        go_on.wait(10)
        return begin(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(SessionCheckpoints, "begin", held_begin)
    checkpointer = Checkpointer(workspace, root=tmp_path / "store")
    session = NoticedSession()
    assert await asyncio.wait_for(checkpointer.before_turn(session, "hi"), 5)  # type: ignore[arg-type]
    write(workspace, {"made.txt": "by the turn\n"})  # the staged tree has it not
    go_on.set()
    changes = await checkpointer.after_turn(session)  # type: ignore[arg-type]
    assert changes is not None and [c.path for c in changes.files] == ["made.txt"]


async def test_a_first_turn_cancelled_while_its_checkpoint_is_staged_ahead_leaves_no_error(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+C during headless' first checkpoint: the staging thread finishes quietly."""
    import asyncio
    import threading

    go_on = threading.Event()
    errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    stage = CheckpointStore.stage

    def held_stage(self: CheckpointStore) -> object:
        go_on.wait(10)
        return stage(self)

    monkeypatch.setattr(CheckpointStore, "stage", held_stage)
    checkpointer = Checkpointer(workspace, root=tmp_path / "store")
    checkpointer.stage_ahead()
    [ahead] = [thread for thread in threading.enumerate() if thread.name == "checkpoint ahead"]
    turn = asyncio.ensure_future(checkpointer.before_turn(NoticedSession(), "hi"))  # type: ignore[arg-type]
    await asyncio.sleep(0)  # it waits for the staging now
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    go_on.set()
    await asyncio.to_thread(ahead.join, 10)
    assert not ahead.is_alive() and errors == []
    checkpointer.close()


async def test_closing_abandons_a_long_first_checkpoint_at_once(
    tmp_path: Path, workspace: Path
) -> None:
    import asyncio
    import time

    write(workspace, {f"data/f{i}.txt": os.urandom(1 << 20).hex() for i in range(12)})
    checkpointer = Checkpointer(workspace, root=tmp_path / "store")
    warm = asyncio.create_task(checkpointer.warm_up())
    await asyncio.sleep(0.15)
    start = time.monotonic()
    checkpointer.close()
    await warm
    assert time.monotonic() - start < 0.5
    # The next acp-tui finds the shadow repository usable (git's lock file is gone).
    store = open_store(tmp_path, workspace)
    assert "data/f3.txt" in store.paths(store.snapshot().commit)
