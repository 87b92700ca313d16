"""The agent picker (Ctrl+N): which agent the new conversation runs. The current agent first
(so Ctrl+N Enter is "the same again"), the configured agents, the demo, then the ACP
Registry's agents, loaded in a worker while the others are already listed. Typing filters;
Enter starts the highlighted one, downloading a registry binary first with its progress shown
(choosing it is the user's consent); Esc cancels a download, else closes."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Collection
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option

from acp_tui.config import DEFAULT_MAX_DOWNLOAD, AgentConfig
from acp_tui.registry import InstallError, LaunchPlan, install_binary, load_registry_async
from acp_tui.registry.choices import AgentChoice, registry_choices
from acp_tui.registry.start import approve, downloaded
from acp_tui.text import shorten
from acp_tui.ui.screens.dialog import Dialog

NAME_WIDTH = 24
VERSION_WIDTH = 10
STATUS_WIDTH = 19
DESCRIPTION_WIDTH = 52
READINESS_STYLES = {"ready": "$text-success", "install": "$text-accent", "missing": "$text-warning"}
HEADINGS = {"configured": "Configured", "registry": "ACP Registry"}
LOADING = "Loading the ACP Registry…"


class AgentPickerScreen(Dialog[AgentConfig | None]):
    """Pick the agent of a new conversation; dismissed with it (installed), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "escape", "Close"),
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
    ]

    DEFAULT_CSS = """
    AgentPickerScreen > Vertical { width: 114; }
    AgentPickerScreen Input, AgentPickerScreen Input:focus {
        height: 1; border: none; background: $surface; padding: 0 1; margin: 1 0;
    }
    AgentPickerScreen OptionList, AgentPickerScreen OptionList:focus {
        height: auto; max-height: 22; border: none; background: $surface; padding: 0;
    }
    AgentPickerScreen OptionList > .option-list--option-highlighted { background: $accent 25%; }
    AgentPickerScreen OptionList > .option-list--option-disabled { color: $text-muted; }
    AgentPickerScreen .picker--line { color: $text-muted; padding: 1 1 0 1; }
    AgentPickerScreen .picker--warning { color: $text-warning; padding: 0 1; }
    AgentPickerScreen .picker--error { color: $text-error; padding: 1 1 0 1; }
    AgentPickerScreen ProgressBar { margin: 1 1 0 1; display: none; }
    AgentPickerScreen ProgressBar Bar { width: 60; }
    AgentPickerScreen ProgressBar Bar > .bar--bar { background: $foreground 15%; }
    AgentPickerScreen.-installing ProgressBar { display: block; }
    """

    def __init__(
        self,
        local: list[AgentChoice],
        taken: set[str],
        in_use: Collection[Path] = (),
        max_download: int = DEFAULT_MAX_DOWNLOAD,
    ) -> None:
        super().__init__()
        self.local = local
        """The current, configured and demo agents: listed at once."""
        self.taken = taken
        """Ids a registry entry may not use (a configured agent of that name wins)."""
        self.registry: list[AgentChoice] = []
        self.shown: list[AgentChoice] = []
        """The rows after filtering, by option id."""
        self.in_use = in_use
        """The commands conversations run now: an update never removes their version."""
        self.max_download = max_download
        """Bytes: a larger archive is not downloaded (the config's `max_download`)."""
        self.installing: LaunchPlan | None = None
        self._cancel = threading.Event()
        """Set to stop the download under way (Esc, the picker closing, the app quitting)."""
        self._source_line = LOADING
        """What the line under the list says when no download is under way."""
        self._received: tuple[int, int | None] = (0, None)
        """Written by the download thread, read by a timer: no call across threads."""

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "New conversation with…"
            box.border_subtitle = "type to filter · ↑↓ choose · enter start · esc close"
            yield Input(placeholder="filter by name, id or description")
            yield OptionList()
            yield Static(LOADING, id="picker-source", classes="picker--line")
            yield Static("", id="picker-problems", classes="picker--warning")
            yield ProgressBar(show_eta=False)
            yield Static("", id="picker-error", classes="picker--error")

    def on_mount(self) -> None:
        self._show_rows()
        self.query_one("#picker-problems").display = False
        self.query_one("#picker-error").display = False
        self.query_one(Input).focus()
        self._load_registry()

    # -- the rows -------------------------------------------------------------------------

    @work(group="registry", exclusive=True, exit_on_error=False)
    async def _load_registry(self) -> None:
        try:
            loaded = await load_registry_async()
            rows = await asyncio.to_thread(registry_choices, loaded.index, self.taken)
        except Exception as error:
            # Never expected (a bad index falls back to the snapshot), never fatal either: the
            # local agents stay listed, and the line says why the registry's are not.
            self._say_source(f"The ACP Registry could not be read: {error or type(error).__name__}")
            return
        self.registry = rows
        described = loaded.describe()
        self._say_source(described[:1].upper() + described[1:])
        problems = loaded.index.problems
        if problems:
            count = "1 entry" if len(problems) == 1 else f"{len(problems)} entries"
            warning = self.query_one("#picker-problems", Static)
            warning.update(f"{count} of the index could not be read and left out: {problems[0]}")
            warning.display = True
        self._show_rows()

    @on(Input.Changed)
    def _filter(self) -> None:
        self._show_rows()

    def _show_rows(self) -> None:
        text = self.query_one(Input).value.strip().lower()
        choices = [c for c in [*self.local, *self.registry] if c.matches(text)]
        options: list[Option | None] = []
        group = None
        for index, choice in enumerate(choices):
            heading = HEADINGS.get(choice.group)
            if heading and choice.group != group:
                if options:
                    options.append(None)  # OptionList draws None as a rule: groups stand apart
                options.append(Option(Content.styled(heading, "bold"), disabled=True))
            group = choice.group
            options.append(Option(_row(choice), id=str(index)))
        if not choices:
            options.append(Option(f"No agent matches {text!r}.", disabled=True))
        self.shown = choices
        listing = self.query_one(OptionList)
        highlighted = listing.highlighted_option
        listing.set_options(options)
        ids = [o.id for o in listing.options]
        keep = highlighted is not None and text == "" and highlighted.id in ids
        if keep:
            listing.highlighted = ids.index(highlighted.id)  # type: ignore[union-attr]
        else:
            listing.action_first()

    def action_move(self, step: int) -> None:
        listing = self.query_one(OptionList)
        if step > 0:
            listing.action_cursor_down()
        else:
            listing.action_cursor_up()

    # -- choosing -------------------------------------------------------------------------

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self._choose(self.query_one(OptionList).highlighted_option)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._choose(event.option)

    def _choose(self, option: Option | None) -> None:
        if option is None or option.id is None or self.installing is not None:
            return
        choice = self.shown[int(option.id)]
        if choice.readiness == "missing" or choice.agent is None:
            self._error(choice.problem or f"{choice.name} cannot be started here")
            return
        if choice.readiness == "install" and choice.plan is not None:
            self.installing = choice.plan
            self._cancel = threading.Event()
            self._install(choice.plan, choice.agent)
            return
        if choice.plan is not None:
            _approve(choice.plan)
        self.dismiss(choice.agent)

    @work(group="install", exclusive=True, exit_on_error=False)
    async def _install(self, plan: LaunchPlan, agent: AgentConfig) -> None:
        self._received = (0, None)
        self._error("")
        self.add_class("-installing")
        self._show_progress()
        timer = self.set_interval(0.1, self._show_progress)
        try:
            await asyncio.to_thread(
                install_binary,
                plan,
                self._progress,
                cancel=self._cancel,
                in_use=self.in_use,
                max_size=self.max_download,
            )
        except Exception as error:
            # InstallError says what went wrong; anything else is a bug, still said plainly.
            why = str(error) if isinstance(error, InstallError) else repr(error)
            self._error(f"{plan.agent.name} was not installed: {why}")
            self.remove_class("-installing")
            self.query_one(ProgressBar).update(total=None, progress=0)
            self.query_one("#picker-source", Static).update(self._source_line)
            return
        finally:
            timer.stop()
            self.installing = None
        # The timer may have last looked before the final chunk: the bar ends full.
        self._show_progress()
        _approve(plan)
        self.dismiss(agent)

    def _progress(self, received: int, total: int | None) -> None:
        """From the download thread."""
        self._received = (received, total)

    def _show_progress(self) -> None:
        plan = self.installing
        received, total = self._received
        self.query_one(ProgressBar).update(total=total, progress=received)
        if plan is not None:
            named = f"{plan.agent.name} {plan.agent.version}"
            size = downloaded(received, total)
            source = self.query_one("#picker-source", Static)
            source.update(f"Downloading {named} into {plan.install_dir}: {size}")

    def _say_source(self, line: str) -> None:
        """The line under the list: where the registry came from (restored after a failed
        download, which borrows it)."""
        self._source_line = line
        if self.installing is None:
            self.query_one("#picker-source", Static).update(line)

    def _error(self, message: str) -> None:
        error = self.query_one("#picker-error", Static)
        error.update(message)
        error.display = bool(message)

    def action_escape(self) -> None:
        """Cancel the download under way (the picker stays, saying so); else close."""
        if self.installing is not None:
            self._cancel.set()
            return
        self.dismiss(None)

    def on_unmount(self) -> None:
        # Closed, or the app quits: the download thread stops at its next chunk rather than
        # running on (quitting would wait for it).
        self._cancel.set()


def _row(choice: AgentChoice) -> Content:
    """Name, version, status and description in aligned columns."""
    mark = "● " if choice.group == "current" else "  "
    return Content.assemble(
        (mark, "$text-accent"),
        (_fit(choice.name, NAME_WIDTH), "bold"),
        (_fit(choice.version, VERSION_WIDTH), "$foreground-muted"),
        (_fit(choice.status, STATUS_WIDTH), READINESS_STYLES[choice.readiness]),
        (_fit(choice.description, DESCRIPTION_WIDTH).rstrip(), "$foreground-muted"),
    )


def _fit(text: str, width: int) -> str:
    """`text` in a column of `width` (one space kept before the next column)."""
    return f"{shorten(' '.join(text.split()), width - 1):<{width}}"


def _approve(plan: LaunchPlan) -> None:
    """Choosing a registry agent is the consent the command line asks for: it will not ask
    again for this version and source (once installed: a failed install approves nothing)."""
    with contextlib.suppress(OSError):
        approve(plan)
