"""The Textual app: starts the agent after the first frame, owns its lifecycle, answers its
permission requests through the user (or the `--permission` policy), and shuts it down.

`run_tui` is what `acp-tui` runs when no `-p` prompt is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import shlex
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import msgspec
from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from acp_tui.config import AgentConfig, AgentPolicy, Startup, load_config, load_policy
from acp_tui.protocol.jsonrpc import AUTH_REQUIRED, ConnectionClosed, RpcError
from acp_tui.services.permissions import PermissionPolicy, PermissionRulesError, Rule
from acp_tui.session.state import SessionState
from acp_tui.ui.chat_screen import ChatScreen
from acp_tui.ui.command_palette import app_commands
from acp_tui.ui.conversation import Conversation
from acp_tui.ui.history import PromptHistory, history_path
from acp_tui.ui.render.lexers import warm_up
from acp_tui.ui.textual_fixes import mend
from acp_tui.ui.widgets.inspector import Inspector
from acp_tui.ui.widgets.session_bar import SessionBar
from acp_tui.ui.widgets.session_header import SessionHeader

# What runs an agent (the controller, its connection and services, records, checkpoints,
# sign-in) is imported where it is first used, after the first frame: the first screen needs
# none of it, and it is a third of acp-tui's own code.
if TYPE_CHECKING:
    from acp_tui.checkpoints.checkpointer import Checkpointer
    from acp_tui.conversation.opening import Opened, SessionEntry
    from acp_tui.conversation.sign_in import AuthChoice
    from acp_tui.records import RecordStore
    from acp_tui.session.client import AgentClient
    from acp_tui.session.elicitation import PendingElicitation
    from acp_tui.session.options import ClientOptions
    from acp_tui.session.session import PendingPermission, Session

mend()

HERE = Path(__file__).parent
IDLE_BEFORE_FULL_COLLECTION = 2.0
"""Seconds without a key press or mouse event (and no turn running) before a full collection
may run."""
FULL_COLLECTION_EVERY = 30.0
NEVER = 1_000_000_000
"""A full-collection threshold Python never reaches: those run when the user is idle."""
STARTUP_COLLECTION_DELAY = 0.5
"""Seconds from the first frame to the collection of what start-up left, when the app started
with the collector off (`cli.main`): the frame is on its way to the terminal by then (a
collection holds the interpreter lock that Textual's writer thread needs)."""
YOUNG_COLLECTION_EVERY = 5_000
"""Allocations between young collections (Python's default: 700). Scrolling mounts and
releases blocks whose cycles, collected young, are not promoted to wait for a full collection:
3,000 items scrolled through, RSS 100-169 -> 91-137 MB, worst stall 1.4 -> 0.74 s
(bench_transcript). Not more: at 50,000 a young collection mid-stream delayed a keystroke by
68 ms (bench_tui_stream --typing; 31 ms at 5,000, 22 ms at 700, single 30 s runs)."""


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
        Binding("ctrl+pagedown", "switch_conversation(1)", "Next", priority=True, show=False),
        Binding("ctrl+pageup", "switch_conversation(-1)", "Previous", priority=True, show=False),
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
        self.store: RecordStore | None = None
        self.argv = argv
        """The command line's agent command: the first conversation's."""
        self.options = options
        self.permission = permission
        self.history = PromptHistory(history_path(options.cwd, history_dir))
        self._checkpoints: Checkpointer | None = None
        self._checkpoints_enabled = checkpoints
        self._config_dir = config_dir
        self._shutting_down = False
        self._thresholds: tuple[int, int, int] | None = None
        self._last_input = time.monotonic()
        self._last_full_collection = time.monotonic()
        first = Conversation("_default", 1, self._first_agent(argv, options), options)
        self.conversations: list[Conversation] = [first]
        """Every open conversation, in the session bar's order; each with its own agent."""
        self.conversation = self.conversations[0]
        """The conversation shown."""
        self._opened_count = 1
        # Textual knows its default mode only by its stack: name it, so it can be switched back
        # to (its screen, the first conversation's, is made once, by get_default_screen).
        self._modes.setdefault("_default", self.get_default_screen)

    def _first_agent(self, argv: list[str], options: ClientOptions) -> AgentConfig:
        """The agent the command line asked for (the config's, when it is that command)."""
        startup = self.startup
        if startup is not None and startup.agent.command == argv:
            return startup.agent
        return AgentConfig(shlex.join(argv), list(argv), env=dict(options.env), adhoc=True)

    @property
    def checkpoints(self) -> Checkpointer:
        """The workspace's checkpoints, taken around every turn of every conversation (made
        on first use, after the first frame)."""
        if self._checkpoints is None:
            from acp_tui.checkpoints.checkpointer import Checkpointer

            self._checkpoints = Checkpointer(
                self.options.cwd,
                enabled=self._checkpoints_enabled,
                ignore=[self.options.transcript],
                on_warning=lambda message: self.notify(
                    message, title="Checkpoints", severity="warning", timeout=8
                ),
                on_wait=lambda: self.notify(
                    "The prompt is sent once the workspace is checkpointed (the first checkpoint "
                    "copies every file).",
                    title="Taking a checkpoint",
                    timeout=4,
                ),
            )
        return self._checkpoints

    # The shown conversation's agent and session (each conversation has its own).

    @property
    def client(self) -> AgentClient | None:
        return self.conversation.client

    @property
    def session(self) -> Session | None:
        return self.conversation.session

    @property
    def opened(self) -> Opened | None:
        return self.conversation.opened

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

    def get_default_screen(self) -> Screen[None]:
        chat = self.conversations[0].chat = ChatScreen(self.options.cwd, self.history)
        return chat

    @property
    def policy(self) -> PermissionPolicy | None:
        """The shown conversation's permission rules (None until its agent starts)."""
        return self.conversation.policy

    @property
    def chat(self) -> ChatScreen:
        chat = self.conversation.chat
        assert chat is not None
        return chat

    def on_mount(self) -> None:
        # First paint before anything slow: the agent starts once the screen is up.
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        self._pace_collector()
        self.start_agent(self.conversation)
        self.run_worker(self._warm_up_once_started(), exit_on_error=False)
        self.run_worker(self.checkpoints.warm_up(), group="checkpoints", exit_on_error=False)

    async def _warm_up_once_started(self) -> None:
        # Its thread holds the GIL for most of its time: not while the session opens.
        await self.conversation.started.wait()
        self._warm_up()

    @work(thread=True, exit_on_error=False)
    def _warm_up(self) -> None:
        warm_up()

    # -- the agent ----------------------------------------------------------------------------

    def start_agent(self, conversation: Conversation) -> None:
        self.run_worker(
            self._start_agent(conversation),
            group=f"agent-{conversation.mode}",
            exit_on_error=False,
        )

    async def _start_agent(self, conversation: Conversation) -> None:
        chat = conversation.chat
        assert chat is not None
        conversation.policy = self._load_policy(conversation.agent)
        # Here, not at the top: its JSON Schema validator is a tenth of the start-up's imports,
        # and nothing before the first frame needs it.
        from acp_tui.check.live import LiveCheck
        from acp_tui.session.client import AgentClient

        if conversation.live_check is None:
            conversation.live_check = LiveCheck(
                partial(self._violation, chat),
                on_behind=lambda message: self._inspect(chat, "note", message),
            )
        live_check = conversation.live_check
        client = conversation.client = AgentClient(
            conversation.agent.command,
            conversation.options,
            decide_permission=partial(self._decide_permission, conversation),
            decide_elicitation=partial(self._decide_elicitation, conversation),
            on_problem=lambda message: self._inspect(chat, "problem", message),
            on_traffic=lambda direction, line: self._inspect(
                chat, direction, line.decode("utf-8", errors="replace")
            ),
            on_wire=live_check.feed,
            on_stderr=lambda chunk: self._inspect(
                chat, "stderr", chunk.decode("utf-8", errors="replace")
            ),
        )
        if conversation.agent.starting:
            chat.query_one(SessionHeader).agent = conversation.agent.starting
        try:
            info = await client.start()
            chat.agent_started(info.label, info.protocol_version)
            session = conversation.session = await self._open_session(conversation)
        except startup_errors() as error:
            instead = await self._new_session_instead(conversation, error)
            if instead is None:
                self._agent_down(conversation, self._failure(conversation, error))
                return
            session = conversation.session = instead
        chat.attach(session)
        conversation.started.set()
        await self._watch(conversation)

    async def _watch(self, conversation: Conversation) -> None:
        """Until the agent exits; then say how (unless acp-tui stopped it to quit or close)."""
        client = conversation.client
        assert client is not None and conversation.chat is not None
        await client.exited.wait()
        if not self._shutting_down and not conversation.closing:
            description = client.process.exit_description() if client.process else "agent exited"
            conversation.agent_running = False
            conversation.chat.agent_exited(description)
            self.refresh_bindings()

    def _agent_down(self, conversation: Conversation, message: str) -> None:
        conversation.agent_running = False
        assert conversation.chat is not None
        conversation.chat.agent_failed(message)
        conversation.started.set()
        self.refresh_bindings()

    def restart_agent(self) -> None:
        """Stop the agent (if it still runs: it may be deaf) and start it again; reopen the
        session if the agent can (else a new one, the record of the old one kept above)."""
        conversation = self.conversation
        self.run_worker(
            self._restart_agent(conversation),
            group=f"agent-{conversation.mode}",
            exclusive=True,
            exit_on_error=False,
        )

    async def _restart_agent(
        self, conversation: Conversation, restart: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        """Restart the agent (`restart`: how, when not just `client.restart()`) and reopen
        its session."""
        client, old = conversation.client, conversation.session
        if client is None or self._shutting_down:
            return
        chat = conversation.chat
        assert chat is not None
        conversation.agent_running = True
        conversation.agent_unresponsive = False
        self.refresh_bindings()
        chat.agent_restarting()
        if conversation.opened is not None:
            conversation.opened.close()
            conversation.opened = None
        try:
            await (restart() if restart is not None else client.restart())
            chat.agent_started(client.info.label, client.info.protocol_version)
            session = conversation.session = await self._reopen(conversation, old)
        except startup_errors() as error:
            self._agent_down(conversation, self._failure(conversation, error))
            return
        chat.attach(session)
        await self._watch(conversation)

    async def _reopen(self, conversation: Conversation, old: Session | None) -> Session:
        client = conversation.client
        assert client is not None
        if old is None:
            return await self._open_session(conversation)
        if self.startup is not None:
            from acp_tui.conversation.opening import open_conversation

            conversation.opened = await open_conversation(
                client, self.store, conversation.agent.name, session_id=old.id
            )
            return conversation.opened.session
        if client.reopen_method(replay=False) is not None:
            try:
                return await client.open_session(old.id, replay=False, state=old.state)
            except RpcError as error:
                if isinstance(error, ConnectionClosed):
                    raise
                reason = error.message
        else:
            reason = "it cannot reopen sessions"
        session = await client.new_session(state=old.state)
        session.notice(
            "warning",
            f"The agent could not reopen the session ({reason}): the conversation goes on in "
            "a new session, and the agent does not remember what is above.",
        )
        return session

    def action_restart_agent(self) -> None:
        self.restart_agent()

    def agent_ignored_cancel(self, chat: ChatScreen | None = None) -> None:
        """The agent did not confirm a cancel in time: offer to stop it (and restart it)."""
        conversation = next((c for c in self.conversations if c.chat is chat), self.conversation)
        conversation.agent_unresponsive = True
        self.refresh_bindings()
        if conversation.session is not None:
            conversation.session.notice(
                "warning",
                "The agent may be stuck: Ctrl+R stops and restarts it (your draft stays); "
                "Ctrl+P, Stop the agent: only stops it",
            )
        self.notify("Ctrl+R stops and restarts it.", title="The agent ignored the cancel")

    @work(group="stop", exclusive=True, exit_on_error=False)
    async def stop_agent(self) -> None:
        """Stop the agent process (its exit is then reported as any other)."""
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()

    @property
    def can_sign_out(self) -> bool:
        client = self.client
        return client is not None and self.agent_running and client.info.supports("logout")

    async def sign_out(self) -> None:
        """`logout`: the agent ends the signed-in state; acp-tui forgets the remembered
        method, so the next start asks rather than signing straight back in."""
        client, session, name = self.client, self.session, self.agent_name
        if client is None:
            return
        try:
            await client.logout()
        except RpcError as error:
            self.notify(error.message, title="Could not sign out", severity="error")
            return
        if self.store is not None:
            self.store.forget_auth(name)
        message = f"Signed out of {client.info.label}."
        if session is not None:
            session.notice("info", message, "New sessions may ask you to sign in again.")
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
        info = current.client.info if current.client is not None else None
        label, version = (info.title or info.name, info.version) if info else ("", "")
        local = local_choices(current.agent, config, label, version)
        taken = {*config.agents, current.agent.name}
        in_use = [Path(c.agent.command[0]) for c in self.conversations if c.agent.command]
        self.push_screen(AgentPickerScreen(local, taken, in_use), self.new_conversation)

    def new_conversation(self, agent: AgentConfig | None) -> None:
        """A new conversation running `agent` (a new process, even for the same agent), shown."""
        if agent is None:
            return
        current = self.conversation
        if agent is current.agent:
            # What the user signed in with (an `env_var` method) goes along.
            options = msgspec.structs.replace(current.options, env=dict(current.options.env))
        else:
            options = msgspec.structs.replace(
                self.options,
                env=dict(agent.env),
                mcp_servers=agent.mcp_servers,
                providers=agent.providers,
            )
        if agent.startup_timeout is not None:
            timeout = max(options.startup_timeout, agent.startup_timeout)
            options = msgspec.structs.replace(options, startup_timeout=timeout)
        self._opened_count += 1
        number = self._opened_count
        conversation = Conversation(f"conversation-{number}", number, agent, options)
        chat = conversation.chat = ChatScreen(self.options.cwd, self.history)
        self.conversations.append(conversation)
        self.add_mode(conversation.mode, lambda: chat)
        self._show(conversation)
        self.call_after_refresh(self.start_agent, conversation)

    def action_switch_conversation(self, step: int) -> None:
        """Show the next (`step` 1) or previous (-1) conversation, round the list."""
        index = self.conversations.index(self.conversation)
        self._show(self.conversations[(index + step) % len(self.conversations)])

    def action_show_conversation(self, number: int) -> None:
        """Show the `number`th conversation of the bar (1-based), if there is one."""
        if 0 < number <= len(self.conversations):
            self._show(self.conversations[number - 1])

    def _show(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.switch_mode(conversation.mode)
        self.refresh_session_bars()
        self.refresh_bindings()

    def action_close_conversation(self) -> None:
        """Close the shown conversation (its session, its agent) and show its neighbour."""
        if len(self.conversations) < 2:
            return
        conversation = self.conversation
        index = self.conversations.index(conversation)
        conversation.closing = True
        self.conversations.remove(conversation)
        self._show(self.conversations[min(index, len(self.conversations) - 1)])
        self.run_worker(self._close(conversation), group="close", exit_on_error=False)

    async def _close(self, conversation: Conversation) -> None:
        self.workers.cancel_group(self, f"agent-{conversation.mode}")
        await self._stop(conversation)
        if conversation.mode != "_default":
            # The default mode cannot be removed: its (idle) screen stays, unseen.
            with contextlib.suppress(Exception):
                await self.remove_mode(conversation.mode)
        self.refresh_session_bars()

    async def _stop(self, conversation: Conversation) -> None:
        """Close `conversation`'s session and stop its agent (its terminals too)."""
        client, session = conversation.client, conversation.session
        if session is not None and session.busy:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.cancel(), 1.0)
        if conversation.opened is not None:
            conversation.opened.close()
            conversation.opened = None
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.close(), 10.0)
        if conversation.live_check is not None:
            await conversation.live_check.close()

    def refresh_session_bars(self) -> None:
        """Every conversation's session bar lists them all with their state."""
        items = [(c.label, c.state, c is self.conversation) for c in self.conversations]
        for conversation in self.conversations:
            chat = conversation.chat
            if chat is not None and chat.is_mounted:
                chat.query_one(SessionBar).show(items)

    def on_session_header_changed(self, event: SessionHeader.Changed) -> None:
        self.refresh_session_bars()

    def _load_policy(self, agent: AgentConfig) -> PermissionPolicy:
        """The saved rules with `agent`'s own from the config: an agent's rules apply to the
        conversations that run it, never to another agent picked beside it."""
        mode = self.permission
        try:
            return load_policy(mode, agent, self._config_dir)  # type: ignore[arg-type]
        except PermissionRulesError as error:
            self.notify(str(error), title="Permission rules ignored", severity="warning")
        return AgentPolicy(mode, agent_rules=agent.rules)  # type: ignore[arg-type]

    async def _open_session(self, conversation: Conversation, *, again: bool = False) -> Session:
        """A new session, or the one `--resume` names (the first conversation only), signed
        in, in the mode and model the command line (for its own agent) or the config asked
        for (what the agent does not offer: a notice). `again`: another session on the
        conversation's running client (after a rewind), so a new one, and not signed in twice."""
        from acp_tui.conversation.opening import start_conversation
        from acp_tui.records import RecordStore

        client = conversation.client
        assert client is not None
        startup = self.startup
        if startup is None:
            return await client.new_session()
        first = conversation.number == 1 and not again
        if first:
            for warning in startup.warnings:
                self.notify(warning, title="Config", severity="warning")
        if startup.record and self.store is None:
            self.store = RecordStore.open(
                on_warning=lambda message: self.notify(message, severity="warning")
            )
        agent = conversation.agent
        # --auth, --mode and --model name the command line's agent, not one picked later.
        asked = agent is startup.agent
        opened = conversation.opened = await start_conversation(
            client,
            self.store,
            agent.name,
            resume=startup.resume if first else None,
            fork=startup.fork and first,
            auth=startup.auth if asked and not again else None,
            choose=self._choose_sign_in,
            run_terminal=self._run_terminal,
            # The config's defaults, unless the command line names them (then as asked).
            mode=None if asked and startup.mode else agent.mode,
            model=None if asked and startup.model else agent.model,
        )
        session = opened.session
        for category, value in (("mode", startup.mode), ("model", startup.model)):
            if value and asked:
                try:
                    await session.select(category, value)
                except (ValueError, RpcError) as error:
                    session.notice("warning", f"{category} {value!r} not set", str(error))
        return session

    async def _new_session_instead(
        self, conversation: Conversation, error: Exception
    ) -> Session | None:
        """The session `--resume` named could not be opened (or forked), but the agent runs: a
        new session, which says why at its top, rather than no session at all. None if that
        is not the case, or a new session fails too."""
        startup, client = self.startup, conversation.client
        process = client.process if client is not None else None
        first = conversation.number == 1 and conversation.session is None
        if startup is None or startup.resume is None or not first:
            return None
        if process is None or process.returncode is not None:  # the agent is gone too
            return None
        try:
            session = await self._open_session(conversation, again=True)
        except startup_errors():
            return None
        what = "fork" if startup.fork else "open"
        named = f" {startup.resume}" if startup.resume else ""
        session.notice(
            "error",
            f"Could not {what} the session{named}",
            f"{self._failure(conversation, error)}. This is a new session: Ctrl+O lists this "
            "workspace's sessions.",
        )
        return session

    async def sign_in_again(self, session: Session) -> None:
        """The agent answered a prompt with -32000 mid-session (a lapsed token, a sign-out):
        sign in again (the remembered method, else the dialog). An agent method signs this
        process in; a key or a login command restarts the agent, and the session is reopened,
        as Ctrl+R does. The prompt is not sent again by itself: the user sends it (↑)."""
        from acp_tui.conversation.sign_in import AuthFailed, pick_sign_in, sign_in

        conversation = next((c for c in self.conversations if c.session is session), None)
        client = session.client
        if conversation is None or conversation.client is not client:
            return  # the conversation went on to another session meanwhile
        name = self._agent_name(conversation)
        try:
            choice = await pick_sign_in(
                client, agent=name, store=self.store, choose=self._choose_sign_in
            )
        except AuthFailed as error:
            session.notice("error", "Not signed in", str(error))
            return

        async def signed_in() -> None:
            await sign_in(client, choice, run_terminal=self._run_terminal)
            if self.store is not None:
                self.store.remember_auth(name, choice.id)

        again = "send your prompt again (↑ brings it back)"
        if choice.type != "agent":
            session.notice(
                "info",
                f"Signing in with {choice.name or choice.id}",
                f"The agent restarts with it and the session is reopened: then {again}.",
            )
            self.run_worker(
                self._restart_agent(conversation, signed_in),
                group=f"agent-{conversation.mode}",
                exclusive=True,
                exit_on_error=False,
            )
            return
        try:
            await signed_in()
        except AuthFailed as error:
            session.notice("error", "Not signed in", str(error))
            return
        session.notice("info", f"Signed in again: {again}")

    async def _choose_sign_in(
        self, choices: list[AuthChoice], remembered: str | None
    ) -> AuthChoice | None:
        """Ask which method to sign in with (from the worker opening the session: the
        dialog is waited for there); None when the user gives up."""
        from acp_tui.ui.screens import SignInScreen

        return await self.push_screen(SignInScreen(choices, remembered), wait_for_dismiss=True)

    async def _run_terminal(self, argv: list[str], env: dict[str, str]) -> int:
        """Run a sign-in command on the real terminal, the app suspended around it."""
        from acp_tui.conversation.sign_in import run_in_terminal

        with self.suspend():
            return await asyncio.to_thread(run_in_terminal, argv, env, self.options.cwd)

    def _failure(self, conversation: Conversation, error: Exception) -> str:
        from acp_tui.conversation.sign_in import AuthRequired

        client = conversation.client
        if isinstance(error, AuthRequired):
            return f"{error} (start acp-tui with --auth METHOD)"
        if isinstance(error, RpcError) and error.code == AUTH_REQUIRED:
            return "the agent requires sign-in (start acp-tui with --auth METHOD)"
        message = getattr(error, "message", None) or str(error) or type(error).__name__
        process = client.process if client is not None else None
        gone = process is not None and process.returncode is not None
        if isinstance(error, ConnectionClosed | RpcError) and gone:
            return process.exit_description()  # type: ignore[union-attr]
        return message

    def _violation(self, chat: ChatScreen, problem: str) -> None:
        """The live check found a message that breaks the schema: shown in the inspector and
        counted in the status line, never in the conversation itself."""
        with contextlib.suppress(Exception):
            chat.protocol_violation(problem)

    def _inspect(self, chat: ChatScreen, kind: str, text: str) -> None:
        with contextlib.suppress(Exception):
            chat.query_one(Inspector).add(kind, text)

    async def _decide_permission(
        self, conversation: Conversation, pending: PendingPermission
    ) -> None:
        """Ask the user in `conversation`'s own dialog, shown or not: the request waits
        there, and the session bar says the conversation waits for you."""
        if not self.answer_by_policy(pending) and conversation.chat is not None:
            conversation.chat.ask_permission(pending)

    async def _decide_elicitation(
        self, conversation: Conversation, pending: PendingElicitation
    ) -> None:
        """Ask the user in `conversation`'s own question dialog; there is no policy for
        questions: only the user can answer them (or dismiss them)."""
        if conversation.chat is not None:
            conversation.chat.ask_question(pending)
        else:
            pending.cancel()

    def answer_by_policy(self, pending: PendingPermission) -> bool:
        """Answer `pending` by a saved rule or the `--permission` mode, with a dim notice
        saying which; False when the user is to decide."""
        conversation = next(
            (c for c in self.conversations if c.session is pending.session), self.conversation
        )
        policy = conversation.policy
        if policy is None:
            return False
        call = pending.tool_call
        kind = call.kind if call is not None else None
        decision = policy.decide(pending.request, kind, workspace=self.options.cwd)
        if decision.ask:
            return False
        if decision.outcome == "selected" and decision.option_id is not None:
            pending.select(decision.option_id)
        else:
            pending.cancel()
        allowed = decision.option_id is not None and any(
            o.option_id == decision.option_id and (o.kind or "").startswith("allow")
            for o in pending.request.options
        )
        verb = "allowed" if allowed else "rejected"
        if decision.rule is not None:
            title = f"{verb} by rule: {decision.rule.describe()}"
        else:
            title = f"Permission answered: {decision.reason}"
        pending.session.notice("auto", title)
        return True

    def save_rule(self, rule: Rule) -> None:
        """Add `rule` to the saved rules and write them (a failure: a warning). The saved rules
        are every conversation's: each one's policy gets it, beside its own agent's rules."""
        policy = self.conversation.policy
        if policy is None:
            return
        for conversation in self.conversations:
            if conversation.policy is not None:
                conversation.policy.add_rule(rule)
        try:
            policy.save()
        except OSError as error:
            self.notify(str(error), title="Rule not saved", severity="error")
            return
        if self.session is not None:
            self.session.notice("auto", f"rule saved: {rule.describe()}", str(policy.path))

    # -- quitting -----------------------------------------------------------------------------

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit(0)

    async def shutdown(self) -> None:
        """Close every session and stop every agent (their terminals too)."""
        if self._shutting_down:
            return
        self._shutting_down = True
        if self._checkpoints is not None:
            self._checkpoints.close()
        await asyncio.gather(*(self._stop(c) for c in self.conversations))
        if self.store is not None:
            self.store.close()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.session is not None and self.session.busy and self.screen is self.chat
        if action == "restart_agent":
            down = not self.agent_running or self.agent_unresponsive
            return down and self.client is not None and self.screen is self.chat
        if action in ("close_conversation", "switch_conversation"):
            return len(self.conversations) > 1
        if action == "new_conversation":
            return not self.picker_open
        return True

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
        from acp_tui.ui.widgets.prompt_input import PromptInput

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

    async def on_unmount(self) -> None:
        await self.shutdown()
        self._restore_collector()

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

    @property
    def agent_name(self) -> str:
        """The shown conversation's agent's name in the records (its config name)."""
        return self._agent_name(self.conversation)

    def _agent_name(self, conversation: Conversation) -> str:
        if self.startup is not None:
            return conversation.agent.name
        return conversation.client.info.name if conversation.client is not None else "agent"

    @work(group="sessions", exclusive=True, exit_on_error=False)
    async def action_sessions(self) -> None:
        """The session picker; the chosen session replaces the one shown."""
        from acp_tui.conversation.opening import (
            agent_deletes,
            delete_session,
            fork_history,
            list_sessions,
        )
        from acp_tui.ui.screens import SessionsScreen

        # Read before the first await: the user may show another conversation meanwhile.
        conversation = self.conversation
        client = conversation.client if conversation.agent_running else None
        name = self._agent_name(conversation)
        entries = await list_sessions(client, self.store, name, self.options.cwd)
        session = conversation.session
        current = session.id if session is not None else None

        async def delete(doomed: SessionEntry) -> None:
            await delete_session(client, self.store, name, self.options.cwd, doomed)

        elsewhere = frozenset(
            c.session.id
            for c in self.conversations
            if c.session is not None and c is not conversation
        )
        picker = SessionsScreen(
            entries,
            current,
            delete=delete,
            agent_deletes=agent_deletes(client),
            open_elsewhere=elsewhere,
            forks=_forks(conversation),
        )
        picked = await self.push_screen_wait(picker)
        if picked is None:
            return
        entry, shown = picked.entry, conversation.session
        if picked.fork:
            history = (
                shown.state
                if shown is not None and shown.id == entry.session_id
                else await fork_history(self.store, entry.record, entry.session_id)
            )
            self._fork(conversation, entry.session_id, history)
        elif entry.session_id != current:
            await self.switch_session(entry, conversation)

    async def switch_session(
        self, entry: SessionEntry, conversation: Conversation | None = None
    ) -> None:
        """Open `entry` in `conversation` (the shown one by default) instead of its session."""
        from acp_tui.conversation.opening import open_conversation

        conversation = conversation or self.conversation
        chat = conversation.chat
        assert chat is not None
        name = self._agent_name(conversation)
        client, old = conversation.client, conversation.session
        if client is None or not conversation.agent_running:
            self.notify("Restart the agent first (Ctrl+R).", title="The agent is not running")
            return
        if old is not None and old.busy:
            self.notify("Wait for the turn to end, or cancel it.", title="A turn is running")
            return
        if conversation.opened is not None:
            conversation.opened.close()
            conversation.opened = None
        if old is not None:
            with contextlib.suppress(Exception):
                await client.close_session(old)
        try:
            opened = await open_conversation(
                client,
                self.store,
                name,
                session_id=entry.session_id,
                record=entry.record,
            )
        except RpcError as error:
            self.notify(error.message, title="The session could not be opened", severity="error")
            if old is not None:
                conversation.session = await self._reopen(conversation, old)
                chat.attach(conversation.session)
            return
        self._show_opened(conversation, opened)

    @property
    def can_fork(self) -> bool:
        return self.session is not None and _forks(self.conversation)

    def action_fork(self) -> None:
        """Go on in a fork of the shown session (`session/fork`): a new session that starts
        where this one is, with its history; this one stays as it is, for Ctrl+O."""
        session = self.session
        if session is not None:
            self._fork(self.conversation, session.id, session.state)

    # A worker of its own: opening the session picker (the "sessions" group's) must not
    # cancel a fork the agent is making.
    @work(group="fork", exit_on_error=False)
    async def _fork(
        self, conversation: Conversation, source_id: str, history: SessionState
    ) -> None:
        """Show a fork of session `source_id` (the one shown, or one picked in Ctrl+O, open or
        not), with `history`, in place of `conversation`'s session, which stays as it is."""
        from acp_tui.conversation.opening import fork_conversation

        chat, client, shown = conversation.chat, conversation.client, conversation.session
        assert chat is not None
        if client is None or not conversation.agent_running:
            self.notify("Restart the agent first (Ctrl+R).", title="The agent is not running")
            return
        if not client.info.supports("fork"):
            self.notify("This agent cannot fork sessions.", title="No fork")
            return
        if conversation.forking:
            self.notify("One fork at a time: it is on its way.", title="Forking")
            return
        if shown is not None and (shown.busy or chat.sending):
            self.notify("Wait for the turn to end, or cancel it.", title="A turn is running")
            return
        name = self._agent_name(conversation)
        conversation.forking = True
        try:
            opened = await fork_conversation(client, self.store, name, source_id, history)
        except RpcError as error:
            self.notify(error.message, title="The session could not be forked", severity="error")
            return
        finally:
            conversation.forking = False
        busy = shown is not None and (shown.busy or chat.sending)
        if busy or conversation.session is not shown:
            # A prompt went to the session (or another was opened) while the agent forked.
            opened.close()
            with contextlib.suppress(Exception):
                await client.close_session(opened.session)
            self.notify("The fork is kept: Ctrl+O opens it.", title="Not switched to the fork")
            return
        left = conversation.opened
        self._show_opened(conversation, opened)
        if left is not None:
            left.close()
        if shown is not None:
            with contextlib.suppress(Exception):
                await client.close_session(shown)

    def _show_opened(self, conversation: Conversation, opened: Opened) -> None:
        """Make `opened` the conversation's session, on its screen."""
        conversation.opened = opened
        conversation.session = opened.session
        assert conversation.chat is not None
        conversation.chat.attach(opened.session)

    async def continue_before(self, turn: int) -> None:
        """After a rewind to before `turn`: go on in a new session with the same agent (ACP
        cannot make an agent forget turns), its first prompt carrying a summary of the turns
        kept."""
        from acp_tui.session.summary import kept_turns_summary

        conversation, chat = self.conversation, self.chat
        client, old = conversation.client, conversation.session
        if client is None or old is None or not self.agent_running:
            self.notify("Restart the agent first (Ctrl+R).", title="The agent is not running")
            return
        summary = kept_turns_summary(old.state, turn)
        if conversation.opened is not None:
            conversation.opened.close()
            conversation.opened = None
        with contextlib.suppress(Exception):
            await client.close_session(old)
        try:
            session = await self._open_session(conversation, again=True)
        except startup_errors() as error:
            message = self._failure(conversation, error)
            self.notify(message, title="No new session", severity="error")
            return
        conversation.session = session
        chat.attach(session)
        chat.context = summary
        kept = f"turns 1 to {turn - 1}" if turn > 2 else "turn 1" if turn == 2 else "no turn"
        session.notice(
            "info",
            f"A new session, from before turn {turn} of the last one",
            f"The files are as they were before that turn. The agent does not remember the "
            f"earlier session: your next prompt carries a short summary of {kept} (what you "
            "asked, the tools it used, what it answered). Ctrl+O opens the earlier session.",
        )

    def action_export(self) -> None:
        """Write the session as Markdown in the workspace; a notice says where."""
        from acp_tui.records.export import export_path, session_markdown

        session = self.session
        if session is None:
            return
        state = session.state
        label = self.client.info.label if self.client is not None else None
        text = session_markdown(state, agent=label, workspace=str(self.options.cwd))
        path = export_path(self.options.cwd, state.title, state.session_id)
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as error:
            self.notify(str(error), title="Not exported", severity="error")
            return
        session.notice("info", f"Exported to {path}")
        self.notify(str(path), title="Exported to Markdown", timeout=4)

    def cycle_mode(self) -> None:
        from acp_tui.ui.screens import next_mode

        if self.session is not None:
            next_mode(self, self.session)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.screen_stack and isinstance(self.screen_stack[0], ChatScreen):
            yield from app_commands(self)

    def set_terminal_title(self, title: str) -> None:
        """Set the terminal window's title (OSC 2): it tells the user the agent waits."""
        driver = self._driver
        if driver is not None and not self.is_headless:
            safe = title.replace("\x07", "").replace("\x1b", "")
            driver.write(f"\x1b]2;{safe}\x07")

    # -- the cycle collector ------------------------------------------------------------------

    def _pace_collector(self) -> None:
        """Keep Python's full collections out of the middle of a frame.

        A full collection walks every object alive; run by Python on its own schedule it lands
        mid-stream and stalls the UI for 100 ms or more. So: freeze what startup created (it
        lives as long as the app), let the young generations be collected as usual (small and
        quick), and collect the whole heap only when the user is idle.

        `cli.main` starts the app with the collector off: start-up makes objects that live as
        long as the app, and Python's collections walked them over and over before the first
        frame (50 ms of its CPU time). The few cycles start-up dropped are collected once,
        shortly after the first frame, before the freeze (frozen, they would never be freed)."""
        self._thresholds = gc.get_threshold()
        gc.set_threshold(YOUNG_COLLECTION_EVERY, self._thresholds[1], NEVER)
        self.set_interval(1.0, self._collect_when_idle)
        if gc.isenabled():
            gc.freeze()
        else:
            self.set_timer(STARTUP_COLLECTION_DELAY, self._collect_startup)

    def _collect_startup(self) -> None:
        gc.collect()
        gc.freeze()
        gc.enable()

    def _collect_when_idle(self) -> None:
        now = time.monotonic()
        busy = any(c.session is not None and c.session.busy for c in self.conversations)
        idle = now - self._last_input > IDLE_BEFORE_FULL_COLLECTION
        if not busy and idle and now - self._last_full_collection > FULL_COLLECTION_EVERY:
            gc.collect()
            self._last_full_collection = now

    def _restore_collector(self) -> None:
        gc.unfreeze()
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.InputEvent):
            self._last_input = time.monotonic()
        await super().on_event(event)


TERMINATING = (signal.SIGTERM, signal.SIGHUP)


def _forks(conversation: Conversation) -> bool:
    """Whether `conversation`'s agent runs and forks sessions (`session/fork`)."""
    client = conversation.client
    return client is not None and conversation.agent_running and client.info.supports("fork")


def startup_errors() -> tuple[type[Exception], ...]:
    """What starting an agent and opening its session may fail with, shown to the user."""
    from acp_tui.conversation.opening import NothingToResume
    from acp_tui.conversation.sign_in import AuthFailed
    from acp_tui.session.handshake import ProtocolMismatch
    from acp_tui.transport.launcher import LaunchError

    return (LaunchError, ProtocolMismatch, RpcError, OSError, AuthFailed, NothingToResume)


class _TerminalApp(AcpApp):
    """The app as `acp-tui` runs it: SIGTERM and SIGHUP (the terminal closed) end it the way
    Ctrl+Q does, so every agent and its commands are stopped and the record is complete."""

    def on_mount(self) -> None:
        # No `super().on_mount()`: Textual calls every class's own handler along the MRO, so
        # calling it here too started the agent twice (two handshakes, two sessions).
        loop = asyncio.get_running_loop()
        for sig in TERMINATING:
            loop.add_signal_handler(sig, self.exit, 128 + sig)


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
    return result if isinstance(result, int) else 0
