"""The changes view and rewinds in the TUI, on the real demo agent: what a person sees and
does after the agent edited files."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from acp_tui.conversation.prompt import Prompt
from acp_tui.session.state import Notice
from acp_tui.ui.screens.changes import ChangesScreen
from acp_tui.ui.screens.rewind import RewindScreen
from acp_tui.ui.widgets.diff_view import DiffView
from acp_tui.ui.widgets.notice import NoticeLine
from acp_tui.ui.widgets.prompt_input import PromptInput
from acp_tui.ui.widgets.queued_prompts import QueuedPrompts
from acp_tui.ui.widgets.transcript import Transcript
from tests.support.checkpoints import staging_held
from tests.support.pilot import send, wait_idle, wait_until
from tests.support.ui import message_texts, started_app

ORIGINAL = 'def greet(name):\n    print("Hello " + name)\n\n\ngreet("world")\n'


def notices(app, severity: str) -> list[Notice]:  # type: ignore[no-untyped-def]
    assert app.session is not None
    timeline = app.session.state.timeline
    return [i for i in timeline if isinstance(i, Notice) and i.severity == severity]


async def test_a_turn_that_edits_shows_its_changes_and_can_be_rewound(tmp_path: Path) -> None:
    async with started_app(tmp_path, permission="allow") as (app, pilot):
        workspace = app.options.cwd
        await send(app, pilot, "/edit app.py")
        await wait_idle(app, pilot)
        edited = (workspace / "app.py").read_text()
        assert edited != ORIGINAL
        [summary] = notices(app, "changes")
        assert summary.title == "1 file changed +1 -0"
        assert summary.detail == "M app.py  +1 -0"
        assert summary.turn == 1

        # Enter on the summary line opens the changes view on that turn.
        line = app.chat.query_one(Transcript).block_for(summary)
        assert isinstance(line, NoticeLine)
        line.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert isinstance(screen, ChangesScreen)
        await wait_until(pilot, lambda: bool(screen.query(DiffView)))
        assert screen.file is not None and screen.file.path == "app.py"
        diff = screen.query_one(DiffView)
        assert diff.rows.added == 1 and "Edited by the ACP demo agent" in diff.text()

        # R rewinds the turn, after saying which files go back.
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: (workspace / "app.py").read_text() == ORIGINAL)
        await wait_until(pilot, lambda: bool(notices(app, "rewind")))
        assert notices(app, "rewind")[0].title == "Rewound turn 1: 1 file put back"

        # And the rewind is undone with U.
        await wait_until(pilot, lambda: app.screen is screen)
        await pilot.press("U")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("enter")
        await wait_until(pilot, lambda: (workspace / "app.py").read_text() == edited)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.chat)


async def test_files_the_user_changed_since_are_asked_about(tmp_path: Path) -> None:
    async with started_app(tmp_path, permission="allow") as (app, pilot):
        workspace = app.options.cwd
        await send(app, pilot, "/edit app.py")
        await wait_idle(app, pilot)
        (workspace / "app.py").write_text("the user's own version\n")
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.file is not None)  # type: ignore[attr-defined]
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        dialog = app.screen
        assert isinstance(dialog, RewindScreen)
        assert [f.path for f in dialog.plan.conflicts] == ["app.py"]
        await pilot.press("k")  # keep the later changes: nothing is written
        await wait_until(pilot, lambda: app.screen is screen)
        await pilot.pause(0.2)
        assert (workspace / "app.py").read_text() == "the user's own version\n"


async def test_a_turn_that_changes_nothing_adds_no_line(tmp_path: Path) -> None:
    async with started_app(tmp_path) as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        assert notices(app, "changes") == []
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert isinstance(screen, ChangesScreen)
        await wait_until(pilot, lambda: screen.changes is not None)
        assert screen.changes is not None and screen.changes.files == []


@pytest.mark.parametrize("record", [False, True])
async def test_rewind_and_continue_from_there_in_a_new_session(
    tmp_path: Path, record: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded, the new session opens the way the first did (as `acp-tui` starts) and is
    recorded as a conversation of its own."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # records of its own
    async with started_app(tmp_path, permission="allow", record=record) as (app, pilot):
        workspace = app.options.cwd
        readme = (workspace / "README.md").read_text()
        await send(app, pilot, "/edit app.py")
        await wait_idle(app, pilot)
        await send(app, pilot, "/edit README.md")
        await wait_idle(app, pilot)
        edited_app = (workspace / "app.py").read_text()
        first = app.session
        assert first is not None
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.changes is not None)  # type: ignore[attr-defined]
        assert screen.changes.turn == 2  # type: ignore[attr-defined]
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        await pilot.press("c")
        await wait_until(pilot, lambda: app.session is not first and app.screen is app.chat)
        assert (workspace / "README.md").read_text() == readme
        assert (workspace / "app.py").read_text() == edited_app  # turn 1 is kept
        [notice] = notices(app, "info")
        assert notice.title == "A new session, from before turn 2 of the last one"
        context = app.conversation.conversation.context
        assert context is not None and "Turn 1. The user: /edit app.py" in context
        assert "README" not in context

        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        assert app.conversation.conversation.context is None
        prompt = next(m for m in app.session.state.timeline if getattr(m, "role", "") == "user")
        assert prompt.text.startswith("[Context from acp-tui]")  # type: ignore[union-attr]
        assert prompt.text.endswith("hello")  # type: ignore[union-attr]
        if record:
            assert app.shared.store is not None
            recorded = [c.session_id for c in app.shared.store.conversations()]
            assert recorded == [app.session.id, first.id]


def test_the_summary_of_kept_turns_is_short_and_says_what_is_forgotten() -> None:
    from acp_tui.protocol.content import text_block
    from acp_tui.session.state import Message, SessionState, ToolCallState
    from acp_tui.session.summary import TOTAL_CHARS, kept_turns_summary

    state = SessionState()
    for turn in range(1, 40):
        state.timeline.append(
            Message(f"u{turn}", "user", turn, [text_block(f"do thing {turn} " * 50)])
        )
        state.timeline.append(ToolCallState(f"t{turn}", turn, title=f"Edit f{turn}.py"))
    summary = kept_turns_summary(state, 30)
    assert len(summary) < TOTAL_CHARS + 200
    assert "You do not remember the earlier session" in summary
    assert "Turn 29. The user: do thing 29" in summary and "thing 30" not in summary
    assert "Edit f29.py (pending)" in summary
    empty = kept_turns_summary(SessionState(), 1)
    assert "nothing came before that turn" in empty


async def test_the_panes_are_as_tall_as_the_diff_up_to_the_screen(tmp_path: Path) -> None:
    """A short diff is not followed by a box of empty rows; a long one takes the screen."""
    async with started_app(tmp_path, permission="allow", size=(120, 45)) as (app, pilot):
        await send(app, pilot, "/edit app.py")
        await wait_idle(app, pilot)
        await send(app, pilot, "/run seq 1 100 > long.txt")
        await wait_idle(app, pilot)
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        room = screen.query_one("#changes-room")
        diff, files = screen.query_one("#changes-diff"), screen.query_one("#changes-files")

        def fitted(height: int) -> bool:
            return diff.outer_size.height == files.outer_size.height == height

        await wait_until(pilot, lambda: bool(screen.query(DiffView)))
        await wait_until(pilot, lambda: fitted(room.size.height))  # turn 2: 100 new lines
        await pilot.press("left")  # turn 1: one line added to app.py

        def short_diff_fitted() -> bool:
            view = screen.query(DiffView).first(None)
            return (
                view is not None
                and "Edited by the ACP demo agent" in view.text()
                and fitted(view.outer_size.height + 2)
            )

        await wait_until(pilot, short_diff_fitted)
        assert diff.outer_size.height < 12


async def test_a_prompt_held_for_its_checkpoint_shows_and_can_be_withdrawn(tmp_path: Path) -> None:
    """The first checkpoint of a big workspace copies every file: meanwhile the prompt shows
    above the input as not sent yet, Escape withdraws it (unsent, back in the prompt), and
    the prompt sent again is held again, then goes once the checkpoint is taken."""
    async with started_app(tmp_path) as (app, pilot):
        with staging_held() as release:
            queue = app.chat.query_one(QueuedPrompts)
            draft = app.chat.query_one(PromptInput)
            await send(app, pilot, "first words")
            await wait_until(pilot, lambda: queue.option_count == 1)
            row = str(queue.get_option_at_index(0).prompt)
            assert "checkpointing the workspace" in row and "first words" in row
            assert draft.text == ""
            assert app.check_action("cancel_turn", ()) is True  # the footer offers ^c Cancel
            assert app.conversation.state == "working"  # in the session bar too

            await pilot.press("escape")
            await wait_until(pilot, lambda: draft.text == "first words")
            await wait_until(pilot, lambda: queue.option_count == 0)
            assert app.session is not None
            assert app.session.state.turn == 0 and not message_texts(app)  # never sent

            await pilot.press("enter")
            await wait_until(pilot, lambda: queue.option_count == 1)
            release.set()
            await wait_until(pilot, lambda: queue.option_count == 0)
            await wait_idle(app, pilot)
            assert message_texts(app)[0] == "first words" and app.session.state.turn == 1
            assert not app.check_action("cancel_turn", ())


class _QueueApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.edited: list[int] = []

    def compose(self) -> ComposeResult:
        yield QueuedPrompts()

    def on_queued_prompts_edit(self, event: QueuedPrompts.Edit) -> None:
        self.edited.append(event.index)


async def test_the_queued_prompt_chosen_stays_chosen_as_a_held_one_comes_and_goes() -> None:
    queue = [Prompt("a"), Prompt("b"), Prompt("c")]
    async with _QueueApp().run_test() as pilot:
        prompts = pilot.app.query_one(QueuedPrompts)
        prompts.show(queue, Prompt("held"))
        assert prompts.get_option_at_index(0).disabled
        prompts.highlighted = 2  # "b", under the held row
        prompts.show(queue)  # the held prompt was sent
        assert prompts.highlighted == 1
        app = pilot.app
        assert isinstance(app, _QueueApp)
        prompts.action_edit()
        await wait_until(pilot, lambda: app.edited == [1])  # "b", as the user chose
        prompts.show(queue, Prompt("held again"))
        assert prompts.highlighted == 2
