"""Headless mode: run prompt turns against an agent from a script, print what happens.

`text` prints the agent's message text as it streams; `jsonl` prints one JSON object per state
change. Exit status: 0 when every turn ended `end_turn`, 130 when the user cancelled, and
otherwise non-zero with a one-line reason on stderr.
"""

from __future__ import annotations

import asyncio
import shlex
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import msgspec

from acp_tui.config import AgentConfig
from acp_tui.conversation.agent_link import STARTUP_ERRORS, NotSelected, Opening
from acp_tui.conversation.budget import Budget, Spent
from acp_tui.conversation.conversation import Conversation
from acp_tui.conversation.front_end import FrontEnd
from acp_tui.conversation.prompt import Prompt
from acp_tui.conversation.shared import Checkpointer, Shared
from acp_tui.conversation.sign_in import AuthRequired, run_in_terminal
from acp_tui.headless.events import JsonPrinter, TextPrinter
from acp_tui.headless.output import Output
from acp_tui.protocol.jsonrpc import ConnectionClosed, RpcError
from acp_tui.services.permissions import Mode, PermissionPolicy, PermissionRulesError
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.elicitation import PendingElicitation
from acp_tui.session.options import ClientOptions

if TYPE_CHECKING:
    from acp_tui.check.live import LiveCheck

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_REFUSED = 3
EXIT_LIMIT = 4
EXIT_OTHER_STOP = 5
EXIT_BUDGET = 6

LIVE_CHECK_PATIENCE = 30.0
"""Seconds the live check gets, once the run is over, to check the messages it has left."""
EXIT_CANCELLED = 130
CANCEL_GRACE = 10.0
"""Seconds an agent gets to confirm a cancel before acp-tui stops waiting and stops it."""

_TERMINATING = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end a headless run at once, the agent shut down first."""

_STOP_EXITS = {
    "end_turn": EXIT_OK,
    "cancelled": EXIT_CANCELLED,
    "refusal": EXIT_REFUSED,
    "max_tokens": EXIT_LIMIT,
    "max_turn_requests": EXIT_LIMIT,
}


class HeadlessOptions(msgspec.Struct):
    prompts: list[str]
    output_format: str = "text"
    permission: str = "ask"
    elicitation: str = "off"
    """Whether the agent may ask questions (`elicitation/create`), and how they are answered:
    off (not advertised: nobody is there to answer), decline or cancel."""
    auth: str | None = None
    mode: str | None = None
    model: str | None = None
    cancel_grace: float = CANCEL_GRACE
    agent: AgentConfig | None = None
    """The configured agent being run: its name files the record and the remembered sign-in;
    its rules, mode and model apply. None: an unnamed agent (the command line is its name)."""
    resume: str | None = None
    """Continue a session: its id (or a prefix), "" for the most recent one; None: a new one."""
    fork: bool = False
    """Go on in a fork of the `resume` session (`session/fork`), which stays as it was."""
    record: bool = True
    """Keep a local record of the conversation (see `acp_tui.records`)."""
    live_check: bool = False
    """Check every message against the schema as the run goes (`--live-check`); a violation is
    said (stderr, or a jsonl `violation` event) and changes nothing else."""
    max_cost: float | None = None
    max_context: float | None = None
    """The budgets (see `acp_tui.conversation.budget`): reached, the run ends with status 6."""
    checkpoints: Checkpointer | None = None
    """What checkpoints the workspace around each turn (see `acp_tui.checkpoints`), made by
    the caller so that the first turn's can begin as the agent starts; None: no checkpoints."""
    out: TextIO = msgspec.field(default_factory=lambda: sys.stdout)
    err: TextIO = msgspec.field(default_factory=lambda: sys.stderr)


class Failure(Exception):
    """A reason to stop, with the exit status it calls for."""

    def __init__(self, reason: str, status: int = EXIT_FAILED) -> None:
        super().__init__(reason)
        self.status = status


class HeadlessRun(FrontEnd):
    """One headless run: a conversation driven from the command line, printed as it goes."""

    def __init__(
        self, argv: list[str], client_options: ClientOptions, options: HeadlessOptions
    ) -> None:
        self.options = options
        self.out = Output(options.out, self._output_closed)
        self.json = JsonPrinter(self.out) if options.output_format == "jsonl" else None
        self.text = TextPrinter(self.out, self._warn) if self.json is None else None
        self.answers_questions = options.elicitation != "off"
        self.runs_terminal = bool(sys.stdin and sys.stdin.isatty())
        self.agent = options.agent or AgentConfig.for_command(argv)
        # Nobody is there to ask: "ask" rejects, and so does a rule that says to ask.
        mode: Mode = "reject" if options.permission == "ask" else options.permission  # type: ignore[assignment]
        self.rules_error: PermissionRulesError | None = None
        try:
            rules = PermissionPolicy.load(mode)
        except PermissionRulesError as error:
            self.rules_error = error
            rules = PermissionPolicy(mode)
        self.shared = Shared(
            client_options.cwd,
            permission=mode,
            checkpoints=options.checkpoints or False,
            record=options.record,
            rules=rules,
            on_warning=self._warn,
        )
        self.shared.checkpoints.on_warning = self._warn
        opening = Opening(
            options.resume,
            options.fork,
            options.auth,
            options.mode,
            options.model,
            strict=True,
        )
        budget = Budget(options.max_cost, options.max_context)
        self.live: LiveCheck | None = None
        if options.live_check:
            from acp_tui.check.live import LiveCheck  # only when asked: most runs do without

            self.live = LiveCheck(self._violation, on_behind=self._warn)
        self.conversation = Conversation(
            self.agent,
            client_options,
            self.shared,
            self,
            opening=opening,
            budget=budget,
            on_wire=self.live.feed if self.live is not None else None,
        )
        self.reached: Spent | None = None
        self.conversation.subscribe(self.json or self.text)  # type: ignore[arg-type]
        self.interrupted = False
        self._agent_started = False
        self._terminated: signal.Signals | None = None
        self._closing = False
        self._main: asyncio.Task[Any] | None = None

    async def run(self) -> int:
        if self.rules_error is not None:
            self.options.err.write(f"acp-tui: {self.rules_error}\n")
            return EXIT_FAILED
        loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        loop.add_signal_handler(signal.SIGINT, self._interrupt)
        for sig in _TERMINATING:
            loop.add_signal_handler(sig, self._terminate, sig)
        try:
            return await self._run()
        except asyncio.CancelledError:
            if self._terminated == signal.SIGPIPE:
                return 128 + signal.SIGPIPE  # quietly, as `| head` expects of a program
            if self._terminated is not None:
                self._warn(f"stopped by {self._terminated.name}")
                return 128 + self._terminated
            self._warn("interrupted")
            return EXIT_CANCELLED
        except Failure as failure:
            if self.text is not None:
                self.text.end_turn()  # the reason goes on a line of its own
            self.out.flush()
            self.options.err.write(f"acp-tui: {failure}\n")
            return failure.status
        finally:
            # Signals stay caught until the agent (and every terminal it started) is gone:
            # a second one must not cut the shutdown short and leave them running.
            self._closing = True
            try:
                self.shared.checkpoints.close()
                await self.conversation.close()
                if self.live is not None:
                    await self.live.finish(LIVE_CHECK_PATIENCE)
            finally:
                self.shared.close()
                for sig in (signal.SIGINT, *_TERMINATING):
                    loop.remove_signal_handler(sig)
                self.out.flush()

    async def _run(self) -> int:
        await self._open()
        conversation = self.conversation
        cut_short = 0
        for prompt in self.options.prompts:
            end = await conversation.run_turn(Prompt(prompt))
            if isinstance(end.error, ConnectionClosed) and await conversation.back():
                cut_short += 1  # a remote agent's connection dropped: the next turns go on
                continue
            if isinstance(end.error, ConnectionClosed):
                raise Failure(end.error.message) from end.error
            if end.error is not None:
                raise Failure(f"the agent failed the prompt: {end.error.message}") from end.error
            changes = end.changes
            if changes is not None and changes.files and self.text is not None:
                session_id = conversation.session.id if conversation.session else ""
                # Not here (the demo agent's own folder, --cwd): the command says where.
                workspace = conversation.workspace
                where = (
                    ""
                    if workspace == Path.cwd().resolve()
                    else f" --cwd {shlex.quote(str(workspace))}"
                )
                self._warn(
                    f"turn {changes.turn}: {changes.summary()} "
                    f"(acp-tui changes {session_id} --turn {changes.turn}{where})"
                )
            if self.text is not None:
                self.text.end_turn()
            if self.reached is not None:
                raise Failure(f"budget reached: {self.reached.describe()}", EXIT_BUDGET)
            stop_reason = end.stop_reason
            client = conversation.client
            if stop_reason is None and client is not None and client.exited.is_set():
                raise Failure(client.process.exit_description() if client.process else "")
            status = _STOP_EXITS.get(stop_reason or "", EXIT_OTHER_STOP)
            if self.interrupted or stop_reason == "cancelled":
                return EXIT_CANCELLED
            if status != EXIT_OK:
                raise Failure(f"the turn stopped: {stop_reason or 'no stop reason'}", status)
        if cut_short:
            turns = "a turn" if cut_short == 1 else f"{cut_short} turns"
            raise Failure(f"{turns} cut short by a lost connection (the session went on after)")
        return EXIT_OK

    async def _open(self) -> None:
        options = self.options
        try:
            await self.conversation.start()
        except AuthRequired as error:
            methods = ", ".join(f"{c.id} ({c.type_label})" for c in error.choices)
            raise Failure(
                f"the agent requires sign-in; pass --auth with one of: {methods or 'none listed'}"
            ) from error
        except RpcError as error:
            started = self._agent_started
            what = (
                "open the session" if started and options.resume is not None else "start a session"
            )
            raise Failure(f"could not {what}: {error.message}") from error
        except (*STARTUP_ERRORS, NotSelected) as error:  # launch, version, sign-in, no session
            raise Failure(str(error)) from error
        opened = self.conversation.opened
        if opened is not None:
            for message in [opened.notice, *opened.warnings]:
                if message:
                    self._warn(message)

    # -- the front end --------------------------------------------------------------------------

    def agent_started(self, info: AgentInfo) -> None:
        self._agent_started = True

    def connection_lost(self, description: str) -> None:
        self._warn(f"{description}; reconnecting")

    def cancel_ignored(self) -> None:
        grace = self.options.cancel_grace
        self._warn(f"the agent ignored the cancel for {grace:g} s; stopping it")

    def _violation(self, problem: str) -> None:
        if self.json is not None:
            self.json.emit({"type": "violation", "problem": problem})
        else:
            self._warn(f"protocol violation: {problem}")

    def budget(self, stand: Spent) -> None:
        if stand.reached:
            self.reached = stand
        if self.json is not None:
            event = {
                "type": "budget",
                "measure": stand.measure,
                "spent": stand.spent,
                "limit": stand.limit,
                "reached": stand.reached,
            }
            self.json.emit(event)

    def say(self, severity: str, title: str, detail: str | None = None) -> None:
        self._warn(title)

    def warn(self, message: str, *, title: str | None = None) -> None:
        self._warn(f"{title}: {message}" if title else message)

    def inspect(self, kind: str, text: str) -> None:
        if kind == "problem":
            self._warn(text)

    async def run_terminal(self, argv: list[str], env: dict[str, str]) -> int:
        self._warn(f"signing in: running {' '.join(argv)}")
        return await asyncio.to_thread(run_in_terminal, argv, env, self.conversation.workspace)

    async def ask_question(self, pending: PendingElicitation) -> None:
        """Nobody is there to answer: the `--elicitation` policy does, and says so."""
        action = "cancel" if self.options.elicitation == "cancel" else "decline"
        pending.answer(action)
        request = pending.request
        if self.json is not None:
            event = {
                "type": "elicitation",
                "mode": request.mode,
                "message": request.message,
                "toolCallId": request.tool_call_id,
                "url": request.url,
                "fields": [f.name for f in pending.form.fields],
                "action": action,
            }
            self.json.emit({k: v for k, v in event.items() if v is not None})
        else:
            answered = {"decline": "declined", "cancel": "cancelled"}[action]
            self._warn(f"the agent asked {pending.about!r}: {answered} (--elicitation {action})")

    # -- signals --------------------------------------------------------------------------------

    def _terminate(self, sig: signal.Signals) -> None:
        """SIGTERM or SIGHUP: stop now; `run` shuts the agent down and exits 128 + signal."""
        if self._closing or self._terminated is not None:
            return
        self._terminated = sig
        if self._main is not None:
            self._main.cancel()

    def _output_closed(self) -> None:
        """Nobody reads the output any more: stop the agent and end, as on SIGPIPE."""
        self._terminate(signal.SIGPIPE)

    def _interrupt(self) -> None:
        if self._closing:
            return
        session = self.conversation.session
        if self.interrupted or session is None or not session.busy:
            # A second Ctrl+C, or nothing to cancel: stop now.
            if self._main is not None:
                self._main.cancel()
            return
        self.interrupted = True
        self.conversation.cancel(self.options.cancel_grace)

    def _warn(self, message: str) -> None:
        self.out.flush()  # what came before the warning is printed before it
        self.options.err.write(f"acp-tui: {message}\n")
        self.options.err.flush()


async def run_headless(
    argv: list[str], client_options: ClientOptions, options: HeadlessOptions
) -> int:
    return await HeadlessRun(argv, client_options, options).run()
