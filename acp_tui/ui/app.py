"""The Textual app: its screens and keys. One or more conversations, each a chat screen (the
base of its own screen mode) and a `Conversation` (`acp_tui.conversation`) that runs the agent;
the app starts them after the first frame, switches between them, and closes them.

`run_tui` is what `acp-tui` runs when no `-p` prompt is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.screen import Screen

from acp_tui.check.live import LiveCheck
from acp_tui.config import AgentConfig, Startup, load_config, options_beside
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.ui.chat_screen import ChatScreen
from acp_tui.ui.collector import CollectorPace
from acp_tui.ui.command_palette import app_commands
from acp_tui.ui.conversation import ConversationView
from acp_tui.ui.hangup import HangupSafeDriver, SignalWatch
from acp_tui.ui.history import PromptHistory, history_path
from acp_tui.ui.inbox import Inbox
from acp_tui.ui.render.lexers import warm_up
from acp_tui.ui.textual_fixes import mend
from acp_tui.ui.widgets.markdown_view import key_pressed, text_showing
from acp_tui.ui.widgets.prompt_input import PromptInput
from acp_tui.ui.widgets.session_header import SessionHeader

# What runs an agent (the conversation, its client and services, records, checkpoints, sign-in)
# is imported where it is first used, after the first frame: the first screen needs none of it
# (bench/README.md, "Lazy imports").
if TYPE_CHECKING:
    from acp_tui.conversation.conversation import Conversation
    from acp_tui.conversation.opening import SessionEntry
    from acp_tui.conversation.shared import Shared
    from acp_tui.session.options import ClientOptions
    from acp_tui.session.session import Session
    from acp_tui.ui.screens.changes import ChangesScreen

mend()

HERE = Path(__file__).parent


class AcpApp(App[int]):
    """acp-tui, full screen: one or more conversations, each with its own agent process."""

    # The chat screen's styles are beside it, loaded here: Textual 8 does not load a default
    # screen's own CSS_PATH.
    # Absolute, so that a subclass elsewhere (a test, a benchmark) finds them too.
    CSS_PATH: ClassVar[list[str | Path]] = [HERE / "app.tcss", HERE / "chat_screen.tcss"]
    TITLE = "acp-tui"

    BINDINGS: ClassVar[list[BindingType]] = [
        # Two bindings on Ctrl+C: the first applies (and shows) only while a turn runs.
        Binding("ctrl+c", "cancel_turn", "Cancel", priority=True),
        Binding("ctrl+c", "interrupt", "Cancel", priority=True, show=False),
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+r", "restart_agent", "Restart agent", priority=True),
        Binding("ctrl+o", "sessions", "Sessions", show=False),
        Binding("ctrl+n", "new_conversation", "New", priority=True, show=False),
        # Only with two or more conversations; else Ctrl+W stays the prompt's delete-word.
        Binding("ctrl+w", "close_conversation", "Close", priority=True, show=False),
        # Alt+arrows come through tmux, where Alt+digit arrives as another character.
        Binding(
            "alt+right,ctrl+pagedown", "switch_conversation(1)", "Next", priority=True, show=False
        ),
        Binding(
            "alt+left,ctrl+pageup", "switch_conversation(-1)", "Previous", priority=True, show=False
        ),
        Binding("ctrl+g", "next_waiting", "Next waiting", priority=True, show=False),
        *(
            Binding(f"alt+{n}", f"show_conversation({n})", f"Conversation {n}", show=False)
            for n in range(1, 10)
        ),
        Binding("f1", "help", "Keys"),
    ]

    def __init__(
        self,
        argv: list[str],
        options: ClientOptions,
        *,
        permission: str = "ask",
        history_dir: Path | None = None,
        config_dir: Path | None = None,
        startup: Startup | None = None,
        checkpoints: bool = True,
    ) -> None:
        super().__init__()
        self.startup = startup
        """What the command line and config asked for (agent, resume, records, sign-in,
        mode, model); None: a new session, no records (tests, scripts)."""
        self.argv = argv
        """The command line's agent command: the first conversation's."""
        self.options = options
        self.permission = permission
        self.history = PromptHistory(history_path(options.cwd, history_dir))
        self._checkpoints_enabled = checkpoints
        self._config_dir = config_dir
        self._shared: Shared | None = None
        self._shutting_down = False
        self._collector = CollectorPace(self._busy, self.set_interval, self.set_timer)
        first = ConversationView(self, "_default", 1, self._first_agent(argv, options), options)
        self.conversations: list[ConversationView] = [first]
        """Every open conversation, in the session bar's order; each with its own agent."""
        self.conversation = self.conversations[0]
        """The conversation shown."""
        self._opened_count = 1
        self.inbox = Inbox(self)
        """Who needs the user: the session bars' marks, Ctrl+G, the title, notifications."""
        # Textual knows its default mode only by its stack: name it, so it can be switched back
        # to (its screen, the first conversation's, is made once, by get_default_screen).
        self._modes.setdefault("_default", self.get_default_screen)

    def _first_agent(self, argv: list[str], options: ClientOptions) -> AgentConfig:
        """The agent the command line asked for (the config's, when it is that command)."""
        startup = self.startup
        if startup is not None and startup.agent.command == argv:
            return startup.agent
        return AgentConfig.for_command(argv, options.env)

    @property
    def shared(self) -> Shared:
        """What every conversation shares: the workspace's checkpoints, the saved permission
        rules, the records (made on first use, after the first frame)."""
        if self._shared is None:
            from acp_tui.conversation.shared import Shared

            self._shared = Shared(
                self.options.cwd,
                permission=self.permission,  # type: ignore[arg-type]
                checkpoints=self._checkpoints_enabled,
                ignore=[self.options.transcript],
                agent_state=self.startup.config.agent_state if self.startup else None,
                record=self.startup is not None and self.startup.record,
                rules_dir=self._config_dir,
                on_warning=lambda message: self.notify(message, severity="warning", timeout=8),
            )
        return self._shared

    # The shown conversation's agent and session (each conversation has its own).

    @property
    def session(self) -> Session | None:
        return self.conversation.session

    @property
    def agent_running(self) -> bool:
        """False once the agent exited or could not start: then it can be restarted."""
        return self.conversation.agent_running

    @property
    def agent_unresponsive(self) -> bool:
        """The agent ignored a cancel: it can be stopped (and restarted)."""
        return self.conversation.agent_unresponsive

    @property
    def started(self) -> asyncio.Event:
        """Set once the session is open (or the agent failed to start): for tests and tools."""
        return self.conversation.started

    @property
    def agent_name(self) -> str:
        """The shown conversation's agent's name in the records (its config name)."""
        return self.conversation.agent.name

    def get_default_screen(self) -> Screen[None]:
        chat = self.conversations[0].chat = ChatScreen(self.options.cwd, self.history)
        return chat

    @property
    def chat(self) -> ChatScreen:
        chat = self.conversation.chat
        assert chat is not None
        return chat

    def _core(self) -> Conversation | None:
        """The shown conversation's `Conversation` (None until its agent starts)."""
        return self.conversation.conversation

    def on_mount(self) -> None:
        # First paint before anything slow: the agent starts once the screen is up.
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        self._collector.start()
        self.inbox.start()
        if self.startup is not None:
            for warning in self.startup.warnings:
                self.notify(warning, title="Config", severity="warning")
        self.start_agent(self.conversation)
        self.run_worker(self._warm_up_once_started(), exit_on_error=False)
        self.run_worker(self.shared.warm_up(), group="checkpoints", exit_on_error=False)

    async def _warm_up_once_started(self) -> None:
        # Its thread holds the GIL for most of its time: not while the session opens.
        await self.conversation.started.wait()
        self._warm_up()

    @work(thread=True, exit_on_error=False)
    def _warm_up(self) -> None:
        # Markdown's modules, imported by the first message otherwise: its first frame.
        import acp_tui.ui.render.markdown  # noqa: F401

        warm_up()

    # -- the agent ----------------------------------------------------------------------------

    def start_agent(self, view: ConversationView) -> None:
        self.run_worker(self._start_agent(view), group=f"agent-{view.mode}", exit_on_error=False)

    async def _start_agent(self, view: ConversationView) -> None:
        from acp_tui.conversation.budget import budget_of
        from acp_tui.conversation.conversation import Conversation

        if view.live_check is None:
            view.live_check = LiveCheck(
                view.violation, on_behind=lambda message: view.inspect("note", message)
            )
        conversation = view.conversation = Conversation(
            view.agent,
            view.options,
            self.shared,
            view,
            opening=view.opening(self.startup),
            on_wire=view.live_check.feed,
            started=view.started,
            budget=budget_of(self.startup),
        )
        assert view.chat is not None
        view.chat.follow(conversation)
        await self._run(conversation, conversation.start())

    async def _run(self, conversation: Conversation, step: Awaitable[None]) -> None:
        """`step` (a start, a restart); a failure is said."""
        from acp_tui.conversation.agent_link import STARTUP_ERRORS

        try:
            await step
        except STARTUP_ERRORS as error:
            conversation.fail(error)
        finally:
            self.refresh_bindings()

    def restart_agent(self) -> None:
        """Stop the agent (if it still runs: it may be deaf) and start it again; reopen the
        session if the agent can (else a new one, the record of the old one kept above)."""
        view, conversation = self.conversation, self._core()
        if conversation is None or self._shutting_down:
            return
        self.run_worker(
            self._run(conversation, conversation.restart()),
            group=f"agent-{view.mode}",
            exclusive=True,
            exit_on_error=False,
        )

    def action_restart_agent(self) -> None:
        self.restart_agent()

    @work(group="stop", exclusive=True, exit_on_error=False)
    async def stop_agent(self) -> None:
        """Stop the agent process (its exit is then reported as any other)."""
        conversation = self._core()
        if conversation is not None:
            await conversation.stop()

    @property
    def can_sign_out(self) -> bool:
        conversation = self._core()
        return conversation is not None and conversation.signs_out

    async def sign_out(self) -> None:
        """`logout` (see `Conversation.sign_out`), said in a notification too."""
        conversation = self._core()
        if conversation is None:
            return
        try:
            message = await conversation.sign_out()
        except RpcError as error:
            self.notify(error.message, title="Could not sign out", severity="error")
            return
        self.notify(message, title="Signed out")

    # -- several conversations ----------------------------------------------------------------

    def action_new_conversation(self) -> None:
        """Ctrl+N: the agent picker; the agent chosen starts in a new conversation."""
        if self.picker_open:  # the palette's command does not pass `check_action`
            return
        from acp_tui.registry.choices import local_choices
        from acp_tui.ui.screens.agent_picker import AgentPickerScreen

        current = self.conversation
        config = self.startup.config if self.startup is not None else load_config()
        info = current.conversation.agent_info if current.conversation is not None else None
        label, version = (info.title or info.name, info.version) if info else ("", "")
        local = local_choices(current.agent, config, label, version)
        taken = {*config.agents, current.agent.name}
        in_use = [Path(c.agent.command[0]) for c in self.conversations if c.agent.command]
        picker = AgentPickerScreen(local, taken, in_use, config.max_download)
        self.push_screen(picker, self.new_conversation)

    def new_conversation(self, agent: AgentConfig | None) -> None:
        """A new conversation running `agent` (a new process, even for the same agent), shown."""
        if agent is None:
            return
        current = self.conversation
        options = options_beside(agent, self.options, current.agent, current.options)
        self._opened_count += 1
        number = self._opened_count
        view = ConversationView(self, f"conversation-{number}", number, agent, options)
        chat = view.chat = ChatScreen(self.options.cwd, self.history)
        self.conversations.append(view)
        self.add_mode(view.mode, lambda: chat)
        self._show(view)
        self.call_after_refresh(self.start_agent, view)

    def action_switch_conversation(self, step: int) -> None:
        """Show the next (`step` 1) or previous (-1) conversation, round the list."""
        index = self.conversations.index(self.conversation)
        self._show(self.conversations[(index + step) % len(self.conversations)])

    def action_show_conversation(self, number: int) -> None:
        """Show the `number`th conversation of the bar (1-based), if there is one."""
        if 0 < number <= len(self.conversations):
            self._show(self.conversations[number - 1])

    def _show(self, view: ConversationView) -> None:
        self.conversation = view
        self.switch_mode(view.mode)
        self.refresh_session_bars()
        self.refresh_bindings()

    def action_close_conversation(self) -> None:
        """Close the shown conversation (its session, its agent) and show its neighbour."""
        if len(self.conversations) < 2:
            return
        view = self.conversation
        index = self.conversations.index(view)
        if view.conversation is not None:
            view.conversation.closing = True
        self.conversations.remove(view)
        self._show(self.conversations[min(index, len(self.conversations) - 1)])
        self.run_worker(self._close(view), group="close", exit_on_error=False)

    async def _close(self, view: ConversationView) -> None:
        self.workers.cancel_group(self, f"agent-{view.mode}")
        await self._stop(view)
        if view.mode != "_default":
            # The default mode cannot be removed: its (idle) screen stays, unseen.
            with contextlib.suppress(Exception):
                await self.remove_mode(view.mode)
        self.refresh_session_bars()

    async def _stop(self, view: ConversationView) -> None:
        """Close `view`'s conversation: its session, its agent (its terminals too)."""
        if view.conversation is not None:
            await view.conversation.close()
        if view.live_check is not None:
            await view.live_check.close()

    def refresh_session_bars(self) -> None:
        """Every conversation's session bar lists them all with their state (`Inbox`)."""
        self.inbox.refresh()

    def watch_app_focus(self) -> None:
        self.inbox.focus_changed()  # looking again sees what happened in the one shown

    def action_next_waiting(self) -> None:
        self.inbox.jump()

    def on_session_header_changed(self, event: SessionHeader.Changed) -> None:
        self.refresh_session_bars()

    # -- sessions (of the shown conversation: see `ConversationView`) ------------------------

    def action_sessions(self) -> None:
        """The session picker; the chosen session replaces the one shown."""
        self.run_worker(
            self.conversation.pick_session(), group="sessions", exclusive=True, exit_on_error=False
        )

    async def switch_session(
        self, entry: SessionEntry, view: ConversationView | None = None
    ) -> None:
        """Open `entry` in `view`'s conversation (the shown one by default) instead of its
        session."""
        await (view or self.conversation).open_session(entry)

    @property
    def can_fork(self) -> bool:
        return self.conversation.can_fork

    def action_fork(self) -> None:
        """Go on in a fork of the shown session (`session/fork`): a new session that starts
        where this one is, with its history; this one stays as it is, for Ctrl+O."""
        self.conversation.fork_shown()

    def on_changes_screen_continue_before(self, event: ChangesScreen.ContinueBefore) -> None:
        """Rewound to before a turn: go on from there in a new session."""
        self.conversation.continue_before(event.turn)

    def on_changes_screen_tell(self, event: ChangesScreen.Tell) -> None:
        """A review's rejected hunks, reverted, and why: the next prompt of the conversation
        whose turn was reviewed."""
        for view in self.conversations:
            if view.session is event.session and view.chat is not None:
                view.chat.send(event.prompt)

    def action_export(self) -> None:
        """Write the session as Markdown in the workspace; a notification says where."""
        self.conversation.export()

    def action_cycle_mode(self) -> None:
        from acp_tui.ui.screens import next_mode

        if self.session is not None:
            next_mode(self, self.session)

    # -- screens ------------------------------------------------------------------------------

    def action_help(self) -> None:
        from acp_tui.ui.screens import HelpScreen

        self.push_screen(HelpScreen())

    def action_settings(self) -> None:
        from acp_tui.ui.screens import SettingsScreen

        if self.session is not None:
            self.push_screen(SettingsScreen(self.session))

    def action_search(self) -> None:
        from acp_tui.ui.screens import SearchScreen

        if self.session is not None:
            self.push_screen(SearchScreen(self.session, self.chat))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.screen_stack and isinstance(self.screen_stack[0], ChatScreen):
            yield from app_commands(self)

    @property
    def picker_open(self) -> bool:
        """Whether the agent picker is on the shown stack (under the palette, say): a second
        one must not stack on it."""
        # Asked for every frame's footer, the first included: importing the picker here would
        # load the registry's downloader (urllib, http, tarfile) before anything is on screen;
        # never imported, it is not open.
        picker = sys.modules.get("acp_tui.ui.screens.agent_picker")
        return picker is not None and any(
            isinstance(screen, picker.AgentPickerScreen) for screen in self.screen_stack
        )

    # -- keys ---------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            chat = self.conversation.chat
            return chat is not None and chat.cancellable and self.screen is chat
        if action == "restart_agent":
            down = not self.agent_running or self.agent_unresponsive
            started = self.conversation.conversation is not None
            return down and started and self.screen is self.chat
        if action in ("settings", "cycle_mode"):
            return self.session is not None
        if action in ("close_conversation", "switch_conversation"):
            return len(self.conversations) > 1
        if action == "new_conversation":
            return not self.picker_open
        return True

    def action_cancel_turn(self) -> None:
        self.chat.cancel_turn()

    def action_interrupt(self) -> None:
        """Ctrl+C: cancel the turn; on an empty idle prompt, offer to quit."""
        chat = self.chat
        if self.screen is not chat:
            self.pop_screen()  # Ctrl+C in a dialog closes the dialog
            return
        if chat.cancel_turn():
            return
        prompt = chat.query_one(PromptInput)
        if prompt.text:
            # Like a shell: Ctrl+C drops the draft (Up brings it back from the history).
            self.history.add(prompt.text)
            prompt.clear()
            return
        from acp_tui.ui.screens import QuitScreen

        def quit_if(confirmed: bool | None) -> None:
            if confirmed:
                self.run_worker(self.action_quit(), exit_on_error=False)

        self.push_screen(QuitScreen(), quit_if)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self._collector.input()
            self.inbox.touched()
            if isinstance(event, events.Key):
                key_pressed()
        await super().on_event(event)

    def _busy(self) -> bool:
        """A turn runs, or an answer is still appearing: no full collection (it would stall
        the text for a fifth of a second with a long answer in memory)."""
        turn = any(c.session is not None and c.session.busy for c in self.conversations)
        return turn or text_showing()

    # -- quitting -----------------------------------------------------------------------------

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit(0)

    async def shutdown(self) -> None:
        """Close every session and stop every agent (their terminals too)."""
        if self._shutting_down:
            return
        self._shutting_down = True
        for view in self.conversations:
            if view.conversation is not None:
                view.conversation.closing = True
        if self._shared is not None:
            self._shared.stop_checkpoints()  # git killed now, not waited for
        await asyncio.gather(*(self._stop(c) for c in self.conversations))
        if self._shared is not None:
            self._shared.close()

    async def on_unmount(self) -> None:
        await self.shutdown()
        self._collector.stop()


class _TerminalApp(AcpApp):
    """The app as `acp-tui` runs it: SIGTERM and SIGHUP (the terminal closed) end it the way
    Ctrl+Q does, so every agent and its commands are stopped and the record is complete; if
    that shutdown is stuck, `SignalWatch` ends it anyway (see `acp_tui.ui.hangup`)."""

    signals: SignalWatch | None = None

    def get_driver_class(self) -> type[Driver]:
        driver = super().get_driver_class()
        return HangupSafeDriver if driver is LinuxDriver else driver

    def on_mount(self) -> None:
        # No `super().on_mount()`: Textual calls every class's own handler along the MRO, so
        # calling it here too started the agent twice (two handshakes, two sessions).
        loop = asyncio.get_running_loop()

        def quit(status: int) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: acp-tui is ending
                loop.call_soon_threadsafe(self.exit, status)

        self.signals = SignalWatch(quit, hang_up=self._hang_up, record_busy=self._record_busy)
        self.signals.start()

    def _hang_up(self) -> None:
        if isinstance(self._driver, HangupSafeDriver):
            self._driver.hang_up()

    def _record_busy(self) -> bool:
        store = self._shared.store if self._shared is not None else None
        return store is not None and store.busy


def run_tui(
    command: list[str],
    client_options: ClientOptions,
    *,
    permission: str = "ask",
    startup: Startup | None = None,
    checkpoints: bool = True,
) -> int:
    """Run the TUI on `command` until the user quits; the exit status."""
    app = _TerminalApp(
        command, client_options, permission=permission, startup=startup, checkpoints=checkpoints
    )
    result = app.run()
    if app.signals is not None and app.signals.status is not None:
        return app.signals.status  # whatever the shutdown made of the app's own status
    return result if isinstance(result, int) else 0
