"""The review in the changes view, on an agent that writes through acp-tui's fs: hunks accepted
and rejected with the keyboard, the rejected one reverted on disk and the agent told why; and a
file opened in the user's editor, what they changed there kept as theirs."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot

from acp_tui.session.state import Notice
from acp_tui.ui.app import AcpApp
from acp_tui.ui.screens.changes import ChangesScreen
from acp_tui.ui.screens.review import ReviewScreen
from acp_tui.ui.screens.rewind import RewindScreen
from tests.agents.hostile import AGENTS, LOG_ENV
from tests.support.pilot import demo_app, demo_workspace, send, wait_idle, wait_started, wait_until

ORIGINAL = [f"line {i}\n" for i in range(30)]
AGENT = [*ORIGINAL[:2], "agent A\n", *ORIGINAL[3:25], "agent B\n", *ORIGINAL[26:]]


@asynccontextmanager
async def edited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[AcpApp, Pilot[int], ChangesScreen, Path]]:
    """The app on an agent that wrote `long.txt` (two hunks) through acp-tui, its changes
    view open on that turn; and the agent's log of what it was sent."""
    log = tmp_path / "agent.jsonl"
    monkeypatch.setenv(LOG_ENV, str(log))
    workspace = demo_workspace(tmp_path / "workspace")
    (workspace / "long.txt").write_text("".join(ORIGINAL))
    argv = AGENTS["never-asks"].argv()
    app = demo_app(workspace, tmp_path / "state", argv=argv, permission="allow")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        await send(app, pilot, "write long.txt " + "".join(AGENT).replace("\n", "\\n"))
        await wait_idle(app, pilot)
        assert (workspace / "long.txt").read_text() == "".join(AGENT)
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert isinstance(screen, ChangesScreen)
        await wait_until(pilot, lambda: len(screen.hunks) == 2)
        yield app, pilot, screen, log


def prompts(log: Path) -> list[str]:
    """The text of every prompt the agent received."""
    found = []
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        message = json.loads(entry["text"]) if entry.get("dir") == "got" else {}
        if message.get("method") == "session/prompt":
            found.append("".join(b.get("text", "") for b in message["params"]["prompt"]))
    return found


async def test_a_rejected_hunk_is_reverted_and_the_agent_told_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with edited(tmp_path, monkeypatch) as (app, pilot, screen, log):
        workspace = app.options.cwd
        await pilot.press("a")  # the first hunk accepted: on to the second
        assert screen.hunk == 1
        await pilot.press("x")
        review = screen.review
        assert review is not None and review.rejected() == {"long.txt": [1]}
        assert review.verdict("long.txt", 0) == "accepted"
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        await pilot.press(*"line 25 is right")
        await pilot.press("enter")
        kept = "".join(AGENT).replace("agent B\n", "line 25\n")
        await wait_until(pilot, lambda: (workspace / "long.txt").read_text() == kept)
        told = (
            "I reverted this change of yours: the file has the - lines again, not your + lines.\n\n"
            "long.txt:26\n```diff\n-line 25\n+agent B\n```\n\nBecause: line 25 is right"
        )
        await wait_until(pilot, lambda: told in prompts(log))
        await wait_idle(app, pilot)
        assert app.session is not None
        [notice] = [
            item
            for item in app.session.state.timeline
            if isinstance(item, Notice) and item.severity == "rewind"
        ]
        assert notice.title == "Reverted 1 hunk of long.txt"
        assert "The agent is told" in (notice.detail or "")
        assert review.rejected() == {}  # acted on: the verdicts are gone


async def test_a_hunk_changed_since_is_said_and_its_file_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with edited(tmp_path, monkeypatch) as (app, pilot, screen, log):
        mine = "".join(AGENT).replace("agent A\n", "the user's A\n")
        (app.options.cwd / "long.txt").write_text(mine)
        await pilot.press("X")  # the whole file rejected
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        await pilot.press("enter")
        left = "long.txt: its lines changed since the turn: left as it is"

        def said() -> bool:
            return any(str(n.message) == left for n in app._notifications)

        await wait_until(pilot, said)
        assert (app.options.cwd / "long.txt").read_text() == mine
        assert len(prompts(log)) == 1  # only the first: the agent is told nothing
        review = screen.review
        assert review is not None and review.rejected() == {"long.txt": [0, 1]}  # still


async def test_the_users_edit_in_their_editor_is_kept_as_theirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = tmp_path / "bin" / "vi"
    editor.parent.mkdir()
    editor.write_text(
        '#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\nprintf "the user\'s line\\n" >> "$2"\n'
    )
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    async with edited(tmp_path, monkeypatch) as (app, pilot, screen, _log):
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # no terminal to hand over
        await pilot.press("n")  # the second hunk: its changed line is line 26
        await pilot.press("e")
        await wait_until(pilot, lambda: (editor.parent / "args").exists())
        assert (editor.parent / "args").read_text() == "+26 long.txt\n"
        await wait_until(pilot, lambda: screen.changes is not None and screen.changes.edited)
        await wait_until(pilot, lambda: len(screen.hunks) == 2 and screen.hunk == 1)  # kept
        assert "the user's line" in (app.options.cwd / "long.txt").read_text()
        assert app.session is not None
        [notice] = [
            item
            for item in app.session.state.timeline
            if isinstance(item, Notice) and item.title.startswith("You edited")
        ]
        assert notice.title == "You edited long.txt +1 -0"
        # A rewind of the turn asks about it: the user's, not the agent's.
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        dialog = app.screen
        assert isinstance(dialog, RewindScreen)
        assert [f.path for f in dialog.plan.conflicts] == ["long.txt"]


async def test_a_review_sent_while_a_turn_runs_waits_in_the_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with edited(tmp_path, monkeypatch) as (app, pilot, _screen, log):
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.chat)
        # A turn that runs until the test says so: a command waiting for a file.
        await send(app, pilot, "run while [ ! -e go ]; do sleep 0.1; done")
        await wait_until(pilot, lambda: app.session is not None and app.session.busy)
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
        review_of = app.screen
        assert isinstance(review_of, ChangesScreen)
        await wait_until(pilot, lambda: review_of.changes is not None)
        await pilot.press("left")  # the running turn shown first: back to the first one
        await wait_until(pilot, lambda: len(review_of.hunks) == 2)
        await pilot.press("x", "s")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        await pilot.press("enter")
        await wait_until(pilot, lambda: [p.text for p in app.chat.queue] != [])
        assert app.session is not None and app.session.busy
        [queued] = app.chat.queue
        assert queued.text.startswith("I reverted this change of yours")
        assert "long.txt:3\n" in queued.text and "Because" not in queued.text
        assert queued.text not in prompts(log)
        (app.options.cwd / "go").touch()  # the turn ends: the review goes next
        await wait_until(pilot, lambda: queued.text in prompts(log))
