"""The review of a turn's hunks (verdicts, and the prompt that tells the agent what was
reverted and why), the user's editor command, and their edits kept as theirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_tui.checkpoints import CheckpointStore, SessionCheckpoints
from acp_tui.checkpoints.hunks import HunkLines
from acp_tui.checkpoints.rewind import plan_rewind
from acp_tui.conversation.editor import editor_argv
from acp_tui.conversation.review import LINES_SHOWN, Review, review_prompt


def test_verdicts_are_given_taken_back_and_given_to_a_whole_file() -> None:
    review = Review(turn=2)
    review.judge("app.py", 0, "rejected")
    review.judge("app.py", 2, "accepted")
    review.judge("notes.md", 1, "rejected")
    assert review.rejected() == {"app.py": [0], "notes.md": [1]}
    review.judge("app.py", 0, "rejected")  # again: taken back
    assert review.verdict("app.py", 0) is None
    review.judge_file("app.py", 3, "rejected")
    assert review.rejected() == {"app.py": [0, 1, 2], "notes.md": [1]}
    assert (review.count("app.py", "rejected"), review.count("app.py", "accepted")) == (3, 0)
    review.judge_file("app.py", 3, "rejected")  # all had it: taken back from all
    assert review.rejected() == {"notes.md": [1]}
    review.forget(["notes.md"])
    assert review.rejected() == {}


def test_the_prompt_says_where_what_and_why_compactly() -> None:
    reverted = [
        ("app.py", HunkLines(12, ("    return a + b",), ("    return a - b", "    # faster"))),
        ("notes.md", HunkLines(3, ("gone?",), ())),
    ]
    assert review_prompt(reverted, "  the sum was right  ") == (
        "I reverted these changes of yours: the files have the - lines again, not your + lines.\n\n"
        "app.py:12-13\n```diff\n-    return a + b\n+    return a - b\n+    # faster\n```\n\n"
        "notes.md:3\n```diff\n-gone?\n```\n\n"
        "Because: the sum was right"
    )
    two = review_prompt([("a.txt", HunkLines(1, (), ("x",))), ("a.txt", HunkLines(9, ("y",), ()))])
    assert two.startswith("I reverted these changes of yours: the file has the - lines again")
    one = review_prompt([("a.txt", HunkLines(1, (), ("```", "x")))])
    assert one.startswith("I reverted this change of yours")
    assert "````diff\n+```\n+x\n````" in one and "Because" not in one
    long = review_prompt([("big.py", HunkLines(1, (), tuple(f"l{i}" for i in range(50))))])
    assert f"+l{LINES_SHOWN - 1}\n… 30 more lines\n```" in long and "+l20" not in long


@pytest.mark.parametrize(
    ("editor", "argv"),
    [
        ("vim", ["vim", "+7", "src/a.py"]),
        ("/usr/bin/nvim -u NONE", ["/usr/bin/nvim", "-u", "NONE", "+7", "src/a.py"]),
        ("emacsclient -t", ["emacsclient", "-t", "+7", "src/a.py"]),
        ("hx", ["hx", "+7", "src/a.py"]),
        ("code", ["code", "--wait", "-g", "src/a.py:7"]),
        ("code -w", ["code", "-w", "-g", "src/a.py:7"]),
        ("subl", ["subl", "--wait", "src/a.py:7"]),
        ("my-editor --flag", ["my-editor", "--flag", "src/a.py"]),
    ],
)
def test_the_editor_is_told_the_line_its_own_way(editor: str, argv: list[str]) -> None:
    assert editor_argv("src/a.py", 7, {"EDITOR": editor}) == argv


def test_visual_comes_first_then_editor_then_what_is_here(tmp_path: Path) -> None:
    assert editor_argv("a", 1, {"VISUAL": "nano", "EDITOR": "vim"})[0] == "nano"
    assert editor_argv("a", 1, {"VISUAL": " ", "EDITOR": "vim"})[0] == "vim"
    (tmp_path / "vi").write_text("")
    (tmp_path / "vi").chmod(0o755)
    assert editor_argv("a", 3, {"PATH": str(tmp_path)}) == ["vi", "+3", "a"]
    (tmp_path / "nano").write_text("")
    (tmp_path / "nano").chmod(0o755)
    assert editor_argv("a", 3, {"PATH": str(tmp_path)}) == ["nano", "+3", "a"]


def test_a_users_edit_is_kept_as_theirs_even_while_a_turn_runs(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("a = 1\n")
    (workspace / "other.py").write_text("o = 1\n")
    store = CheckpointStore.open(workspace, tmp_path / "checkpoints")
    checkpoints = SessionCheckpoints(store, "s")
    checkpoints.begin(1)
    (workspace / "app.py").write_text("a = 2\n")  # the agent
    before = checkpoints.edit_begins()
    assert checkpoints.edit_ends(before) == []  # the editor closed, nothing changed
    assert checkpoints.edits() == []
    before = checkpoints.edit_begins()
    (workspace / "other.py").write_text("o = 'mine'\n")  # the user, in their editor
    [edited] = checkpoints.edit_ends(before)
    assert edited.path == "other.py"
    checkpoints.end(1)
    [edit] = checkpoints.edits()
    assert edit.paths == ["other.py"] and edit.before == before.commit
    assert checkpoints.edits(since=edit.time + 1) == []
    plan = plan_rewind(checkpoints, 1)
    assert {f.path: f.user_changed for f in plan.files} == {"app.py": False, "other.py": True}
    assert [t.turn for t in checkpoints.turns()] == [1]  # an edit is not a turn
