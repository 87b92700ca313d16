"""A turn's change to one file cut into hunks, and some of them undone in the file as it is now:
the rest of it (the hunks kept, and what the user changed since) stays as it is."""

from __future__ import annotations

from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from acp_tui.checkpoints import CheckpointStore, SessionCheckpoints
from acp_tui.checkpoints.hunks import HunkLines, hunk_lines, hunks, line_now, unapply_hunks
from acp_tui.checkpoints.rewind import revert_hunks


@st.composite
def changes(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """A file of distinct lines, and what an agent made of it: lines kept, dropped, replaced
    and inserted (every line distinct, so each hunk is found in one place only)."""
    old = [f"line {i}\n" for i in range(draw(st.integers(0, 60)))]
    new: list[str] = []
    steps = draw(st.lists(st.sampled_from("kkkkkkkkdri"), min_size=len(old), max_size=len(old)))
    for number, (line, step) in enumerate(zip(old, steps, strict=True)):
        if step != "d":
            new.append(f"agent {number}\n" if step == "r" else line)
        if step == "i":
            new.append(f"inserted {number}\n")
    if draw(st.booleans()):
        new.append("appended\n")
    return old, new


def kept(old: list[str], new: list[str], rejected: set[int], extra: int | None = None) -> str:
    """What the file should hold: the new text, with the rejected hunks' lines as they were
    (stitched hunk by hunk, apart from `unapply_hunks`); with `extra`, a line of the user's
    that was added before line `extra` of the new text."""
    out: list[str] = []
    at = 0
    pending = extra is not None
    for index, hunk in enumerate(hunks("".join(old), "".join(new))):
        out += new[at : hunk.new_start]
        if pending and extra is not None and at <= extra <= hunk.new_start:
            out.insert(len(out) - (hunk.new_start - extra), "the user's\n")
            pending = False
        changed = index in rejected
        out += old[hunk.old_start : hunk.old_end] if changed else new[hunk.new_start : hunk.new_end]
        at = hunk.new_end
    out += new[at:]
    if pending and extra is not None:
        out.insert(len(out) - (len(new) - extra), "the user's\n")
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(changes(), st.data())
def test_reverting_some_hunks_keeps_the_others(
    change: tuple[list[str], list[str]], data: st.DataObject
) -> None:
    old, new = change
    found = hunks("".join(old), "".join(new))
    rejected = data.draw(
        st.sets(st.integers(0, max(len(found) - 1, 0))).filter(
            lambda chosen: all(i < len(found) for i in chosen)
        )
    )
    text = unapply_hunks("".join(new), "".join(old), "".join(new), [found[i] for i in rejected])
    assert text == kept(old, new, rejected)
    if len(rejected) == len(found):
        assert text == "".join(old)


@settings(max_examples=300, deadline=None)
@given(changes(), st.data())
def test_a_line_the_user_added_outside_the_hunks_stays(
    change: tuple[list[str], list[str]], data: st.DataObject
) -> None:
    old, new = change
    found = hunks("".join(old), "".join(new))
    # Anywhere but inside a hunk as shown (its context included): there it is a conflict; nor
    # where a hunk that took every line out was (before or after it? either would do).
    outside = [
        at
        for at in range(len(new) + 1)
        if not any(h.new_start < at < h.new_end or h.new_start == at == h.new_end for h in found)
    ]
    assume(outside)
    extra = data.draw(st.sampled_from(outside))
    current = [*new[:extra], "the user's\n", *new[extra:]]
    rejected = data.draw(st.sets(st.integers(0, len(found) - 1)) if found else st.just(set()))
    text = unapply_hunks("".join(current), "".join(old), "".join(new), [found[i] for i in rejected])
    assert text == kept(old, new, rejected, extra)


def test_a_hunk_changed_since_leaves_the_whole_file_alone() -> None:
    old = "".join(f"line {i}\n" for i in range(30))
    new = old.replace("line 2\n", "agent A\n").replace("line 25\n", "agent B\n")
    first, second = hunks(old, new)
    current = new.replace("agent A\n", "the user's A\n")
    assert unapply_hunks(current, old, new, [first, second]) is None
    assert unapply_hunks(current, old, new, [second]) == current.replace("agent B", "line 25")


def test_a_file_without_a_last_newline_gets_one_where_lines_follow() -> None:
    old, new = "a\nb", "a\nB\n"
    assert unapply_hunks(new, old, new, hunks(old, new)) == "a\nb"
    assert unapply_hunks("a\nB\nthe user's\n", old, new, hunks(old, new)) == "a\nb\nthe user's\n"


def test_the_lines_of_a_hunk_without_its_context() -> None:
    old = "".join(f"line {i}\n" for i in range(10))
    new = old.replace("line 5\n", "five\nfive and a half\n")
    [hunk] = hunks(old, new)
    assert (hunk.new_start, hunk.new_end) == (2, 10)  # three lines of context either side
    assert hunk_lines(old, new, hunk) == HunkLines(6, ("line 5",), ("five", "five and a half"))
    assert hunk_lines(old, new, hunk).last == 7
    [gone] = hunks(old, old.replace("line 5\n", ""))
    lines = hunk_lines(old, old.replace("line 5\n", ""), gone)
    assert (lines.first, lines.last, lines.added) == (6, 6, ())


def test_every_hunk_of_a_file_the_turn_made_or_deleted_undone(tmp_path: Path) -> None:
    """A file the turn created goes; one it deleted comes back (with its mode)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "gone.sh").write_text("echo bye\n")
    (workspace / "gone.sh").chmod(0o755)
    checkpoints = SessionCheckpoints(CheckpointStore.open(workspace, tmp_path / "cp"), "s")
    checkpoints.begin(1)
    (workspace / "new.txt").write_text("made\nby the agent\n")
    (workspace / "gone.sh").unlink()
    checkpoints.end(1)
    result = revert_hunks(checkpoints, 1, {"new.txt": [0], "gone.sh": [0]})
    assert sorted(result.restored) == ["gone.sh", "new.txt"] and result.failed == []
    assert not (workspace / "new.txt").exists()
    assert (workspace / "gone.sh").read_text() == "echo bye\n"
    assert (workspace / "gone.sh").stat().st_mode & 0o111


def test_the_line_of_a_hunk_moves_with_the_lines_above_it() -> None:
    old = "".join(f"line {i}\n" for i in range(20))
    new = old.replace("line 12\n", "agent\n")
    [hunk] = hunks(old, new)
    assert line_now(new, old, new, hunk) == 13
    assert line_now("mine\nmine too\n" + new, old, new, hunk) == 15
    assert line_now(new.replace("agent", "mine"), old, new, hunk) == 13  # not found: as it was
