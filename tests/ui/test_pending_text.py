"""The text a view has not taken in yet: whatever is appended, peeked at and taken, in any
order, it reads as one string would, and says where it starts in all that was given."""

from __future__ import annotations

import random

from acp_tui.ui.widgets.pending_text import PendingText


def test_pending_text_reads_as_one_string_would() -> None:
    rng = random.Random(1)
    for _ in range(300):
        pending = PendingText("x" * rng.randint(0, 5))
        same = pending.text()
        given = len(same)
        for _ in range(40):
            step = rng.random()
            count = rng.randint(0, 9)
            if step < 0.4:
                text = "".join(rng.choice("ab\n") for _ in range(count))
                pending.append(text)
                same += text
                given += len(text)
            elif step < 0.7:
                assert pending.peek(count) == same[:count]
            elif step < 0.95:
                assert pending.take(count) == same[:count]
                same = same[count:]
            else:
                assert pending.take() == same
                same = ""
            assert len(pending) == len(same) and pending.text() == same
            assert bool(pending) == bool(same)
            assert pending.done + len(pending) == given


def test_taking_part_of_a_long_text_copies_only_that_part() -> None:
    rest = "y" * 1_000_000
    pending = PendingText(rest)
    assert pending.take(10) == "y" * 10
    assert pending.chunks[0] is rest and pending.taken == 10
