"""The changes view (F3, or Enter on a turn's `3 files changed` line): what each turn of the
session changed in the workspace, whoever wrote it, from the checkpoints taken before and
after it; a file's diff; undo: a hunk, a file, or the whole turn; and a review: each hunk
accepted or rejected, the rejected ones reverted and the agent told why (`review`).

Everything git does runs off the event loop (the checkpointer's threads); the screen only
shows what comes back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from acp_tui.checkpoints.hunks import Hunk, hunks, line_now
from acp_tui.checkpoints.rewind import RewindPlan, plan_rewind
from acp_tui.checkpoints.store import FileChange
from acp_tui.checkpoints.turns import SessionCheckpoints, TurnChanges, TurnCheckpoint, counts
from acp_tui.conversation.changes import FAILURES, SessionChanges
from acp_tui.conversation.prompt import Prompt
from acp_tui.conversation.review import Review, Verdict
from acp_tui.protocol.content import ToolCallContent
from acp_tui.text import human_size, shorten
from acp_tui.ui.render.changes import LETTER_STYLES, counted
from acp_tui.ui.screens.review import edit_in_editor, send_review
from acp_tui.ui.screens.rewind import RewindChoice, confirm_and_apply, report, undo_last_rewind
from acp_tui.ui.widgets.diff_view import DiffView
from acp_tui.ui.widgets.review_diff import SIGNS, ReviewDiff

if TYPE_CHECKING:
    from acp_tui.session.session import Session


@dataclass(slots=True)
class FileTexts:
    """A file before and after the turn, as text (None: not text, or a link)."""

    old: str | None
    new: str | None
    note: str = ""
    """What to show instead of a diff."""


class ChangesScreen(Screen[None]):
    """One turn's changed files on the left, the chosen file's diff on the right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("left,[", "turn(-1)", "Turn", key_display="← →"),
        Binding("right,]", "turn(1)", "Later turn", show=False),
        Binding("n,j", "hunk(1)", "Next hunk", show=False),
        Binding("p,k", "hunk(-1)", "Previous hunk", show=False),
        Binding("a", "judge('accepted')", "Accept", key_display="a/A"),
        Binding("x", "judge('rejected')", "Reject", key_display="x/X"),
        Binding("A", "judge_file('accepted')", "Accept file", show=False),
        Binding("X", "judge_file('rejected')", "Reject file", show=False),
        Binding("s", "send_review", "Send review"),
        Binding("e", "edit", "Edit"),
        Binding("h", "revert_hunk", "Revert hunk", show=False),
        Binding("u", "revert_file", "Revert file"),
        Binding("R", "rewind", "Rewind turn"),
        Binding("U", "undo", "Undo a rewind"),
        Binding("pageup", "scroll_diff(-1)", "Page up", show=False),
        Binding("pagedown", "scroll_diff(1)", "Page down", show=False),
    ]

    DEFAULT_CSS = """
    ChangesScreen { background: $background; }
    ChangesScreen #changes-title {
        height: auto;
        padding: 0 1;
        background: $panel;
    }
    ChangesScreen #changes-room { height: 1fr; }
    ChangesScreen #changes-body { height: auto; max-height: 100%; }
    ChangesScreen #changes-files {
        width: 44;
        max-width: 40%;
        height: auto;
        max-height: 100%;
        border: round $foreground 20%;
        border-title-color: $text-muted;
        padding: 0 0;
        background: transparent;
    }
    ChangesScreen #changes-files:focus { border: round $accent; }
    ChangesScreen #changes-diff {
        width: 1fr;
        height: auto;
        max-height: 100%;
        border: round $foreground 20%;
        border-title-color: $text-muted;
        border-subtitle-color: $text-muted;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    ChangesScreen #changes-diff DiffView { margin: 0; }
    ChangesScreen .changes--note { color: $text-muted; padding: 1 0; }
    """

    class ContinueBefore(Message):
        """Rewound to before `turn`: go on from there in a new session (the app's work, not
        this screen's: dismissing it cancels its workers)."""

        def __init__(self, turn: int) -> None:
            super().__init__()
            self.turn = turn

    class Tell(Message):
        """The review's rejected hunks were reverted: `prompt` tells the agent (the next one
        of `session`'s conversation)."""

        def __init__(self, session: Session, prompt: Prompt) -> None:
            super().__init__()
            self.session = session
            self.prompt = prompt

    def __init__(self, changes: SessionChanges, turn: int | None = None):
        super().__init__()
        self.session_changes = changes
        self.turn_number = turn
        self.turns: list[TurnCheckpoint] = []
        self.changes: TurnChanges | None = None
        self.texts: FileTexts | None = None
        self.seen: dict[tuple[int, str], FileTexts] = {}
        """The text files shown, by turn and path: what a review reverts and tells of."""
        self.reviews: dict[int, Review] = {}
        """The verdicts given, by turn (kept while the view is open)."""
        self.hunks: list[Hunk] = []
        self.hunks_of: str | None = None
        """The file `hunks` are of: until the one chosen is read, the one shown before."""
        self.hunk = 0
        self._landing = 0
        """The hunk to show first in the next file shown: its first, or (-1) its last."""

    def compose(self) -> ComposeResult:
        yield Static(id="changes-title")
        with Vertical(id="changes-room"), Horizontal(id="changes-body"):
            yield OptionList(id="changes-files")
            with VerticalScroll(id="changes-diff"):
                yield Static("", classes="changes--note", id="changes-note")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#changes-files").border_title = "Files"
        self.query_one("#changes-diff").border_title = "Diff"
        self.query_one(OptionList).focus()
        self.load()

    # -- loading ------------------------------------------------------------------------------

    @work(group="changes-load", exclusive=True, exit_on_error=False)
    async def load(self) -> None:
        """Read the turns, then the chosen one's changes (the latest turn by default)."""
        title = self.query_one("#changes-title", Static)
        session_changes = self.session_changes
        if session_changes.unavailable is not None:
            title.update(Content.styled(session_changes.unavailable, "$text-warning"))
            self._show_files([])
            return
        try:
            shown = (self.changes.turn, self.file.path) if self.file and self.changes else None
            self.turns, self.changes = await session_changes.read(self.turn_number)
        except FAILURES as error:
            title.update(Content.styled(f"Checkpoints could not be read: {error}", "$text-error"))
            return
        if self.changes is None:
            reason = session_changes.unavailable or (
                "No checkpoints yet: one is taken before and after every turn."
            )
            title.update(Content.styled(reason, "$text-muted"))
            self._show_files([])
            return
        self.turn_number = self.changes.turn
        title.update(self._title())
        # Read again (after an undo, an edit, a review): the file shown stays shown.
        kept = shown[1] if shown is not None and shown[0] == self.changes.turn else None
        self._show_files(self.changes.files, kept)

    def _title(self) -> Content:
        changes = self.changes
        assert changes is not None
        checkpoint = changes.checkpoint
        numbers = [t.turn for t in self.turns]
        parts: list[tuple[str, str] | str] = [(f"Turn {checkpoint.turn}", "bold")]
        if numbers == list(range(1, len(numbers) + 1)):
            parts.append((f" of {len(numbers)}", "$text-muted"))
        else:
            position = numbers.index(checkpoint.turn) + 1
            parts.append((f"  ({position} of {len(numbers)} here)", "$text-muted"))
        if checkpoint.prompt:
            parts.append(("  ·  ", "$text-muted"))
            prompt = checkpoint.prompt
            parts.append((shorten(prompt, 60), "italic"))
        parts.append(("  ·  ", "$text-muted"))
        parts += list(summary_parts(changes))
        if changes.running:
            parts.append(("  (so far: the turn has no checkpoint after it)", "$text-muted"))
        for skipped in changes.skipped[:3]:
            parts.append((f"\n  not kept: {skipped.path} ({skipped.reason})", "$text-muted"))
        return Content.assemble(*parts)

    @property
    def review(self) -> Review | None:
        if self.changes is None:
            return None
        return self.reviews.setdefault(self.changes.turn, Review(self.changes.turn))

    def _label(self, change: FileChange) -> Content:
        """The file's line in the list: what changed, whether you edited it since, and the
        verdicts given to its hunks."""
        parts: list[Content | tuple[str, str]] = [file_label(change)]
        if self.changes is not None and change.path in self.changes.edited:
            parts.append(("  ✎ you", "$text-accent"))
        review = self.review
        if review is not None:
            for verdict, (sign, style) in SIGNS.items():
                count = review.count(change.path, verdict)
                parts.append((f"  {sign}{count}" if count else "", f"bold {style}"))
        return Content.assemble(*parts)

    def _show_files(self, files: list[FileChange], chosen: str | None = None) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(self._label(f), id=str(i)) for i, f in enumerate(files)])
        if files:
            paths = [f.path for f in files]
            options.highlighted = paths.index(chosen) if chosen in paths else 0
        else:
            self._show_note("Nothing changed in this turn." if self.changes else "")
        self.refresh_bindings()
        self.call_after_refresh(self._fit_panes)

    def _show_note(self, text: str) -> None:
        diff = self.query_one("#changes-diff", VerticalScroll)
        diff.remove_children()
        diff.mount(Static(text, classes="changes--note", markup=False))
        diff.border_title = "Diff"
        diff.border_subtitle = ""
        self.texts, self.hunks, self.hunks_of = None, [], None
        self._landing = 0  # a landing meant for a text file is not the next one's
        self.call_after_refresh(self._fit_panes)

    def _fit_panes(self) -> None:
        """Both panes as tall as the longer of the file list and the diff, up to the screen's
        height: a short diff is not followed by a box of empty rows."""
        files = self.query_one(OptionList)
        diff = self.query_one("#changes-diff", VerticalScroll)
        shown = sum(child.outer_size.height + child.styles.margin.height for child in diff.children)
        height = max(files.option_count, shown) + 2  # their borders
        for pane in (files, diff):
            pane.styles.height = height

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_panes)  # a diff's long lines wrap anew

    @property
    def file(self) -> FileChange | None:
        options = self.query_one(OptionList)
        if self.changes is None or options.highlighted is None:
            return None
        index = options.highlighted
        return self.changes.files[index] if index < len(self.changes.files) else None

    @on(OptionList.OptionHighlighted)
    def _file_chosen(self, event: OptionList.OptionHighlighted) -> None:
        if self.file is not None:
            self.show_file(self.file)

    @work(group="changes-file", exclusive=True, exit_on_error=False)
    async def show_file(self, change: FileChange) -> None:
        try:
            versions = await self.session_changes.versions(change)
        except FAILURES as error:
            self._show_note(f"Could not read the file from the checkpoint: {error}")
            return
        if versions is None:
            return
        texts = file_texts(change, *versions)
        if self.file is not change:
            return
        diff = self.query_one("#changes-diff", VerticalScroll)
        if texts.old is None or texts.new is None:
            self._show_note(texts.note)
            diff.border_title = change.path
            return
        diff.border_title = "Diff"
        self.texts = texts
        self.hunks, self.hunks_of = hunks(texts.old, texts.new), change.path
        self.hunk = self._landing % len(self.hunks) if self.hunks else 0
        self._landing = 0
        if self.changes is not None:
            self.seen[(self.changes.turn, change.path)] = texts
        content = ToolCallContent(
            type="diff", path=change.path, old_text=texts.old, new_text=texts.new
        )
        view = ReviewDiff(content, self.hunks)
        view.set_expanded(True)
        await diff.remove_children()
        await diff.mount(view)
        diff.scroll_home(animate=False)
        self._show_hunk()
        self.refresh_bindings()
        self.call_after_refresh(self._fit_panes)

    def _show_hunk(self) -> None:
        diff = self.query_one("#changes-diff", VerticalScroll)
        if not self.hunks:
            diff.border_subtitle = ""
            return
        hunk = self.hunks[self.hunk]
        diff.border_subtitle = (
            f"hunk {self.hunk + 1} of {len(self.hunks)} · lines {hunk.new_start + 1}"
            f"-{max(hunk.new_end, hunk.new_start + 1)} · n/p move · a accept · x reject"
        )
        view = diff.query(ReviewDiff).first(None)
        if view is not None and self.file is not None and self.review is not None:
            view.mark(self.review.verdicts.get(self.file.path, {}), self.hunk)
            diff.scroll_to(y=hunk_row(view, self.hunk), animate=False)

    # -- moving -------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("revert_file",):
            return self.file is not None
        if action in ("judge", "judge_file"):  # a running turn's hunks are still renumbered
            return bool(self.hunks) and self.changes is not None and not self.changes.running
        if action in ("hunk", "revert_hunk"):
            return bool(self.hunks)
        if action == "send_review":  # not while the turn reviewed still runs
            review, changes = self.review, self.changes
            return review is not None and bool(review.rejected()) and not changes.running
        if action == "edit":
            return self.file is not None and self.file.status != "deleted"
        if action == "rewind":
            return self.changes is not None
        if action == "turn":
            return len(self.turns) > 1
        return True

    def action_close(self) -> None:
        self.dismiss()

    def action_turn(self, step: int) -> None:
        numbers = [t.turn for t in self.turns]
        if self.turn_number not in numbers:
            return
        index = numbers.index(self.turn_number) + step
        if 0 <= index < len(numbers):
            self.turn_number = numbers[index]
            self.load()

    def action_hunk(self, step: int) -> None:
        """The next (or previous) hunk, in the next file past this one's last."""
        if not self.hunks:
            return
        if 0 <= self.hunk + step < len(self.hunks) or not self._next_file(step):
            self.hunk = (self.hunk + step) % len(self.hunks)
            self._show_hunk()

    def _next_file(self, step: int) -> bool:
        """Show the next (or previous) file, at its first (or last) hunk; False at the end
        of the list."""
        options = self.query_one(OptionList)
        at = (options.highlighted or 0) + step
        if not 0 <= at < options.option_count:
            return False
        self._landing = 0 if step > 0 else -1
        options.highlighted = at
        return True

    def action_judge(self, verdict: Verdict) -> None:
        """This hunk accepted (or rejected), then on to the next one not judged yet."""
        change, review = self.file, self.review
        if change is None or review is None or not self.hunks or change.path != self.hunks_of:
            return
        review.judge(change.path, self.hunk, verdict)
        verdicts = review.verdicts.get(change.path, {})
        later = [i for i in range(self.hunk + 1, len(self.hunks)) if i not in verdicts]
        self._judged(change)
        if later:
            self.hunk = later[0]
            self._show_hunk()
        elif review.verdict(change.path, self.hunk) is not None:
            self._next_file(1)

    def action_judge_file(self, verdict: Verdict) -> None:
        """Every hunk of this file accepted (or rejected), then on to the next file."""
        change, review = self.file, self.review
        if change is None or review is None or not self.hunks or change.path != self.hunks_of:
            return
        review.judge_file(change.path, len(self.hunks), verdict)
        self._judged(change)
        if review.verdict(change.path, 0) is not None:
            self._next_file(1)

    def _judged(self, change: FileChange) -> None:
        assert self.changes is not None
        options = self.query_one(OptionList)
        index = self.changes.files.index(change)
        options.replace_option_prompt_at_index(index, self._label(change))
        self._show_hunk()
        self.refresh_bindings()

    def action_scroll_diff(self, step: int) -> None:
        diff = self.query_one("#changes-diff", VerticalScroll)
        if step < 0:
            diff.scroll_page_up(animate=False)
        else:
            diff.scroll_page_down(animate=False)

    # -- undo ---------------------------------------------------------------------------------

    def _idle(self) -> bool:
        if self.session_changes.busy:
            self.app.notify("Wait for the turn to end, or cancel it.", title="A turn is running")
            return False
        return True

    @work(group="changes-act", exclusive=True, exit_on_error=False)
    async def action_rewind(self) -> None:
        if self.changes is None or not self._idle():
            return
        turn = self.changes.turn
        answer = await self._rewind(
            f"Rewind turn {turn}?", lambda c: plan_rewind(c, turn), can_continue=True
        )
        if answer is not None and answer.go_on:
            self.post_message(self.ContinueBefore(turn))
            self.dismiss()

    @work(group="changes-act", exclusive=True, exit_on_error=False)
    async def action_revert_file(self) -> None:
        change = self.file
        if change is None or self.changes is None or not self._idle():
            return
        turn = self.changes.turn
        await self._rewind(f"Revert {change.path}?", lambda c: plan_rewind(c, turn, [change.path]))

    @work(group="changes-act", exclusive=True, exit_on_error=False)
    async def action_revert_hunk(self) -> None:
        change = self.file
        if change is None or self.changes is None or not self.hunks or not self._idle():
            return
        turn, index = self.changes.turn, self.hunk
        try:
            result = await self.session_changes.revert_hunks(turn, {change.path: [index]})
        except FAILURES as error:
            self.app.notify(str(error), title="Hunk not reverted", severity="warning")
            return
        if result is not None and result.failed and not result.restored:
            self.app.notify(result.failed[0][1], title="Hunk not reverted", severity="warning")
        elif result is not None:
            what = f"hunk {index + 1} of {change.path}"
            report(self.app, self.session_changes, result, what, "Reverted", f"turn {turn}")
        self.load()

    @work(group="changes-act", exclusive=True, exit_on_error=False)
    async def action_send_review(self) -> None:
        """Revert the rejected hunks and tell the agent, with the user's reason."""
        review = self.review
        if review is None or not review.rejected():
            return
        versions = {}
        for path in review.rejected():
            texts = self.seen[(review.turn, path)]
            assert texts.old is not None and texts.new is not None  # only text has hunks
            versions[path] = (texts.old, texts.new)
        prompt = await send_review(self.app, self.session_changes, review, versions)
        if prompt is not None:
            self.post_message(self.Tell(self.session_changes.session, Prompt(prompt)))
        self.load()

    @work(group="changes-act", exclusive=True, exit_on_error=False)
    async def action_edit(self) -> None:
        """The file in the user's editor, at this hunk's first changed line."""
        change = self.file
        # Not while a turn runs: what the agent wrote meanwhile would be filed as the user's.
        if change is None or not self._idle():
            return
        line = 1
        if self.hunks and change.path == self.hunks_of and self.texts and self.texts.new:
            old, new, hunk = self.texts.old or "", self.texts.new, self.hunks[self.hunk]
            path = self.session_changes.workspace / change.path
            try:  # where its lines are now: the file may have changed since the turn
                current = await asyncio.to_thread(path.read_text, encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                current = new
            line = line_now(current, old, new, hunk)
        await edit_in_editor(self.app, self.session_changes, change.path, line)
        self._landing = self.hunk  # back where the user was
        self.load()

    @work(group="changes-act", exclusive=True, exit_on_error=False)
    async def action_undo(self) -> None:
        await undo_last_rewind(self.app, self.session_changes)
        self.load()

    async def _rewind(
        self,
        title: str,
        plan_for: Callable[[SessionCheckpoints], RewindPlan],
        *,
        can_continue: bool = False,
    ) -> RewindChoice | None:
        """Plan, ask, rewind and say so; the answer (None when nothing was done)."""
        try:
            plan = await self.session_changes.plan(plan_for)
        except FAILURES as error:
            self.app.notify(str(error), title="Not rewound", severity="error")
            return None
        if plan is None:
            return None
        answer, result = await confirm_and_apply(
            self.app, self.session_changes, plan, title, can_continue=can_continue
        )
        if result is not None:
            if plan.paths:  # a file reverted: said as such, not as a rewind of its turn
                what = ", ".join(plan.paths)
                report(self.app, self.session_changes, result, what, "Reverted", plan.label)
            else:
                report(self.app, self.session_changes, result, plan.label)
        self.load()
        return answer if result is not None else None


def summary_parts(changes: TurnChanges) -> list[tuple[str, str]]:
    """`3 files changed +40 -12`, coloured."""
    if not changes.files:
        return [("no files changed", "$text-muted")]
    return counted(changes.summary())


def file_label(change: FileChange) -> Content:
    letter = change.letter
    line = f"{change.path}  binary" if change.binary else f"{change.path}  {counts(change)}"
    return Content.assemble((f"{letter} ", f"bold {LETTER_STYLES[letter]}"), *counted(line))


def file_texts(change: FileChange, old: bytes, new: bytes) -> FileTexts:
    """The file's two versions as text, or what to say instead of a diff."""
    if change.old_is_link or change.new_is_link:
        before = f"a link to {old.decode(errors='replace')}" if change.old_is_link else "a file"
        after = f"a link to {new.decode(errors='replace')}" if change.new_is_link else "a file"
        if change.status == "added":
            return FileTexts(None, None, f"New: {after}.")
        if change.status == "deleted":
            return FileTexts(None, None, f"Deleted: {before}.")
        return FileTexts(None, None, f"Was {before}; now {after}.")
    try:
        if b"\0" in old or b"\0" in new:
            raise UnicodeDecodeError("utf-8", b"", 0, 1, "NUL")
        return FileTexts(old.decode("utf-8"), new.decode("utf-8"))
    except UnicodeDecodeError:
        before, after = human_size(len(old)), human_size(len(new))
        return FileTexts(None, None, f"A binary file: {before} before, {after} after.")


def hunk_row(view: DiffView, index: int) -> int:
    """About where hunk `index` starts in the diff view (rows before it; long rows that wrap
    are counted once)."""
    kinds = view.rows.kinds
    starts = [i for i, kind in enumerate(kinds) if kind == "hunk"]
    if kinds and kinds[0] != "hunk":
        starts.insert(0, 0)  # the first hunk at the top of the file has no header row
    row = starts[index] if index < len(starts) else 0
    return row + 1  # the summary line above the rows
