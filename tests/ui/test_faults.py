"""The TUI half of the faults suite for what `test_ui_lifecycle.py` does not cover: sizes and
shapes no one planned for (a 50 MB line, 100k updates in a burst, a 100 MB stderr flood), a terminal
resized mid-stream and a transcript on a full disk. Each checks what `test_faults.py`
checks headless, as the user sees it: the app still runs, the draft in the prompt is kept, the
answer (or the inspector line) is there, and the transcript is complete JSON lines."""

from __future__ import annotations

import resource
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from acp_tui.ui.app import AcpApp
from acp_tui.ui.widgets.inspector import KEEP, Inspector
from acp_tui.ui.widgets.notice import NoticeLine
from acp_tui.ui.widgets.prompt_input import PromptInput
from tests.agents.hostile import AGENTS, read_transcript
from tests.support.pilot import (
    core,
    demo_app,
    demo_workspace,
    send,
    wait_idle,
    wait_started,
    wait_until,
)
from tests.support.ui import message_texts

DRAFT = "my unsent draft"


@asynccontextmanager
async def started(
    tmp_path: Path, transcript: Path | str | None = None, **kwargs: Any
) -> AsyncIterator[tuple[AcpApp, Pilot[int]]]:
    """The app on `kwargs`' agent, recording a transcript (by default in `tmp_path`)."""
    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state", **kwargs)
    app.options.transcript = Path(transcript or tmp_path / "transcript.jsonl")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        yield app, pilot


async def ask(app: AcpApp, pilot: Pilot[int], text: str) -> PromptInput:
    """Send `text`, then start a draft in the prompt while the turn runs."""
    await send(app, pilot, text)
    prompt = app.chat.query_one(PromptInput)
    prompt.insert(DRAFT)
    return prompt


def finished(app: AcpApp) -> bool:
    return app.session is not None and not app.session.busy and not app.chat.sending


def still_there(app: AcpApp, prompt: PromptInput) -> None:
    assert app.is_running
    assert app.agent_running
    assert prompt.text == DRAFT


class Ticker:
    """A 16 ms timer: the longest gap between its ticks is how long the UI froze, counted in
    the event loop thread's own CPU time (the work it did without yielding), so that other
    processes taking the machine's cores (a loaded CI machine) do not count as a freeze."""

    def __init__(self, app: AcpApp) -> None:
        self.last = time.thread_time()
        self.worst = 0.0
        self.ticks = 0
        self.timer = app.set_interval(0.016, self._tick)

    def _tick(self) -> None:
        now = time.thread_time()
        self.worst = max(self.worst, now - self.last)
        self.last = now
        self.ticks += 1

    def stop(self) -> None:
        self.timer.stop()


# The floods run one at a time (on one worker): each keeps a core busy for many seconds.
@pytest.mark.xdist_group("floods")
@pytest.mark.timeout(300)
async def test_a_200_mb_write_is_refused_as_it_streams_and_nothing_is_lost(
    tmp_path: Path,
) -> None:
    """Over the line cap (64 MB): dropped as it arrives, the agent told; the draft, the
    transcript and the conversation go on, and the user can see what happened (F12)."""
    argv = AGENTS["big-write"].argv()
    async with started(tmp_path, argv=argv, permission="allow") as (app, pilot):
        prompt = await ask(app, pilot, "go")
        await wait_until(pilot, lambda: finished(app), timeout=240)
        assert message_texts(app)[-1].startswith(
            "error -32600: Invalid request: the message is more than acp-tui takes (64.0 MB"
        )
        assert not (tmp_path / "workspace" / "big.txt").exists()
        inspector = app.chat.query_one(Inspector)
        assert any("dropped a message of 200.0 MB" in text for _, text in inspector._lines)
        still_there(app, prompt)
        prompt.clear()
        await send(app, pilot, "again")
        await wait_until(pilot, lambda: message_texts(app)[-1] == "still here")
    assert len(read_transcript(tmp_path / "transcript.jsonl")) > 3


@pytest.mark.xdist_group("floods")
@pytest.mark.timeout(300)
async def test_a_50_mb_line_arrives_whole_and_the_ui_stays_responsive(tmp_path: Path) -> None:
    async with started(tmp_path, argv=AGENTS["huge-line"].argv()) as (app, pilot):
        ticker = Ticker(app)
        prompt = await ask(app, pilot, "big")
        await wait_until(pilot, lambda: finished(app), timeout=240)
        await pilot.pause()
        ticker.stop()
        assert app.session is not None
        (diff,) = app.session.state.tool_calls["big-diff"].content
        line = "+ an added line of the generated file\n"
        # 50 MiB on the wire, where each newline is the two characters of its JSON escape.
        assert isinstance(diff.new_text, str)
        assert len(diff.new_text) == (50 * 1024 * 1024 // (len(line) + 1) + 1) * len(line)
        assert diff.new_text[: 2 * len(line)] == line * 2
        assert "Regenerated big.txt" in message_texts(app)
        assert ticker.worst < 2.0, ticker.worst
        still_there(app, prompt)
    assert len(read_transcript(tmp_path / "transcript.jsonl")) > 3


@pytest.mark.xdist_group("floods")
@pytest.mark.timeout(300)
async def test_100k_updates_in_a_burst_all_arrive(tmp_path: Path) -> None:
    async with started(tmp_path, argv=AGENTS["update-burst"].argv()) as (app, pilot):
        ticker = Ticker(app)
        prompt = await ask(app, pilot, "burst")
        await wait_until(pilot, lambda: finished(app), timeout=240)
        await pilot.pause()
        ticker.stop()
        assert "".join(message_texts(app)[1:]) == "".join(f"{n} " for n in range(100_000))
        assert ticker.ticks > 0 and ticker.worst < 2.0, ticker.worst
        still_there(app, prompt)
    assert len(read_transcript(tmp_path / "transcript.jsonl")) == 100_000 + 6


@pytest.mark.xdist_group("floods")
@pytest.mark.timeout(300)
async def test_a_100_mb_stderr_flood_is_bounded_and_the_turn_finishes(tmp_path: Path) -> None:
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    async with started(tmp_path, argv=AGENTS["stderr-flood"].argv()) as (app, pilot):
        prompt = await ask(app, pilot, "flood")
        await wait_until(pilot, lambda: finished(app), timeout=240)
        await pilot.pause()
        assert "Flooding stderr, and still here" in message_texts(app)
        client = core(app).client
        assert client is not None and client.process is not None
        stderr = client.process.stderr
        assert stderr.total > 100 * 1024 * 1024
        assert len(stderr.text()) < 1024 * 1024 < stderr.total
        inspector = app.chat.query_one(Inspector)
        assert len(inspector._lines) <= KEEP
        await wait_until(pilot, lambda: any("flood over" in t for _, t in inspector._lines))
        still_there(app, prompt)
    peak_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Loose: nowhere near the 100 MB the agent wrote.
    assert peak_after - peak_before < 80 * 1024, (peak_before, peak_after)
    read_transcript(tmp_path / "transcript.jsonl")


async def test_a_resize_while_streaming_leaves_the_answer_intact(tmp_path: Path) -> None:
    async with started(tmp_path, speed=0.3) as (app, pilot):
        prompt = await ask(app, pilot, "/long 800")
        await wait_until(pilot, lambda: "1 2 3" in "".join(message_texts(app)))
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.02)
        await pilot.resize_terminal(120, 40)
        assert app.session is not None and app.session.busy, "the stream ended before the resize"
        await wait_until(pilot, lambda: finished(app), timeout=240)
        await wait_idle(app, pilot)
        text = "".join(message_texts(app))
        streamed = text[text.index("1 2 3") : text.index("Done:")]
        assert streamed.split() == [str(n) for n in range(1, 801)]
        assert "Done: **800** chunks." in text
        still_there(app, prompt)
    read_transcript(tmp_path / "transcript.jsonl")


async def test_a_full_disk_for_the_transcript_is_a_warning_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    async with started(tmp_path, transcript="/dev/full", argv=AGENTS["polite"].argv()) as (
        app,
        pilot,
    ):
        prompt = await ask(app, pilot, "a")
        await wait_until(pilot, lambda: finished(app))
        prompt.clear()
        await send(app, pilot, "b")
        prompt.insert(DRAFT)
        await wait_until(pilot, lambda: finished(app))
        await pilot.pause()
        assert message_texts(app).count("Hello from a polite agent") == 2
        warning = "transcript /dev/full not writable (No space left on device); recording stopped"
        # In the chat, where the user sees it, and in the inspector with the other problems.
        shown = [(line.item.severity, line.item.title) for line in app.chat.query(NoticeLine)]
        assert ("warning", warning) in shown
        inspector = app.chat.query_one(Inspector)
        problems = [text for kind, text in inspector._lines if kind == "problem"]
        assert problems == [warning]
        still_there(app, prompt)
