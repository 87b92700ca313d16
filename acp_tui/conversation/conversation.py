"""A conversation: one agent process, its session, and what the user holds with them.

`Conversation` owns the agent's client and its session, the permission policy (the app's saved
rules plus the agent's own), the record and the checkpoints around each turn. It starts,
restarts and closes the agent (`AgentLink`, its base); opens other sessions (picked, forked,
new after a rewind); signs in again and out; runs a prompt turn; saves rules. Front ends drive
it and hear from it: through `subscribe` (every `Change` of the session shown, across sessions)
and through their `FrontEnd`. It never imports Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import msgspec

from acp_tui.conversation import opening as o
from acp_tui.conversation.agent_link import STARTUP_ERRORS, AgentLink, NotNow
from acp_tui.conversation.attention import Attention
from acp_tui.conversation.budget import Budget, BudgetWatch, Spent, spent
from acp_tui.conversation.changes import SessionChanges
from acp_tui.conversation.prompt import Prompt, prompt_content
from acp_tui.conversation.sign_in import (
    AuthFailed,
    pick_sign_in,
    sign_in,
)
from acp_tui.protocol.jsonrpc import AUTH_REQUIRED, ConnectionClosed, RpcError
from acp_tui.session.change import Change
from acp_tui.session.session import Session
from acp_tui.session.state import SessionState
from acp_tui.session.summary import kept_turns_summary


class TurnEnd(msgspec.Struct):
    """How a prompt turn ended."""

    stop_reason: str | None
    """The agent's stop reason (`cancelled` after a cancel); None when it gave none."""
    error: RpcError | None = None
    """The agent failed the prompt (or went away: `ConnectionClosed`)."""
    changes: Any = None
    """What the turn changed in the workspace (`TurnChanges`), when checkpointed."""
    withdrawn: bool = False
    """The user withdrew the prompt while it waited for its checkpoint: it was never sent."""


HELD = 0.5
"""Seconds a prompt waits for its checkpoint (the first of a big workspace copies every
file) before its front end is told it is held (`FrontEnd.prompt_held`)."""

BUDGET_CANCEL_GRACE = 5.0
"""Seconds an agent gets to confirm the cancel a reached budget sent, before its turn is
ended without it."""


class Conversation(AgentLink):
    """What the user holds: an agent, its session, and the turns run in it."""

    def __init__(self, *args: Any, budget: Budget | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.attention = Attention(self)
        self.budget = budget or Budget()
        self._budgets: dict[str, BudgetWatch] = {}
        """What each session was told of its budgets, by session id."""
        self._withdraw: asyncio.Future[None] | None = None
        """While a prompt waits for its checkpoint: set, the prompt is withdrawn."""
        self.subscribe(self._watch_budget)

    # -- budgets ------------------------------------------------------------------------------

    def budget_reached(self) -> Spent | None:
        """The budget the shown session has reached, if any: no prompt goes until raised."""
        session = self.session
        watch = self._budgets.get(session.id) if session is not None else None
        return watch.reached if watch is not None else None

    def raise_budget(self, budget: Budget) -> None:
        """The user's new budget; prompts go again if nothing is past it."""
        self.budget = budget
        session = self.session
        if session is None:
            return
        watch = self._budgets.setdefault(session.id, BudgetWatch())
        watch.raised(session.state, budget)
        stands = "; ".join(x.describe() for x in spent(session.state, budget)) or "no limit"
        session.notice("info", f"Budget raised: {stands}")

    def _watch_budget(self, session: Session, change: Change) -> None:
        if change.kind != "usage" or not self.budget.set:
            return
        watch = self._budgets.setdefault(session.id, BudgetWatch())
        if watch.cost_unknown(session.state, self.budget):
            session.notice("info", "The agent reports no cost: the cost budget cannot apply to it")
        warnings, reached = watch.check(session.state, self.budget)
        for stand in warnings:
            # Said aside, not in the transcript: a notice there would cut the answer in two.
            self.front_end.warn(f"{stand.describe()} spent", title="Budget")
            self.front_end.budget(stand)
        if reached is not None:
            session.notice(
                "error",
                f"Budget reached: {reached.describe()}",
                "The turn is cancelled, and no prompt is sent until you raise the budget.",
            )
            self.front_end.budget(reached)
            if session is self.session:
                self.cancel(BUDGET_CANCEL_GRACE)

    async def list_sessions(self) -> list[o.SessionEntry]:
        """This agent's sessions in the workspace: its own list (if it runs) and the records."""
        client = self.client if self.running else None
        return await o.list_sessions(client, self.shared.store, self.name, self.workspace)

    async def delete_session(self, entry: o.SessionEntry) -> None:
        """Delete `entry` from the agent's list (if it can) and from the records. RpcError."""
        client = self.client if self.running else None
        await o.delete_session(client, self.shared.store, self.name, self.workspace, entry)

    @property
    def deletes_sessions(self) -> bool:
        return self.running and o.agent_deletes(self.client)

    @property
    def forks(self) -> bool:
        """Whether the agent runs and forks sessions (`session/fork`)."""
        client = self.client
        return client is not None and self.running and client.info.supports("fork")

    @property
    def signs_out(self) -> bool:
        client = self.client
        return client is not None and self.running and client.info.supports("logout")

    async def open(self, entry: o.SessionEntry) -> None:
        """Open `entry` instead of the conversation's session. Raises NotNow; RpcError when
        the agent cannot open it (the session before is then reopened)."""
        client = self._check_ready()
        old = self.session
        self._leave()
        if old is not None:
            with contextlib.suppress(Exception):
                await client.close_session(old)
        try:
            opened = await o.open_conversation(
                client,
                self.shared.store,
                self.name,
                session_id=entry.session_id,
                record=entry.record,
            )
        except RpcError:
            if old is not None:
                await self._reopen(old)
            raise
        self._show_opened(opened)

    async def fork_history(self, entry: o.SessionEntry) -> SessionState:
        """What a fork of `entry` shows of its history: the session shown's, or the record's."""
        shown = self.session
        if shown is not None and shown.id == entry.session_id:
            return shown.state
        return await o.fork_history(self.shared.store, entry.record, entry.session_id)

    async def fork(self, source_id: str, history: SessionState) -> bool:
        """Go on in a fork of session `source_id` (the one shown, or another), showing
        `history`; the source stays as it is. False when the fork is kept but not shown (a
        prompt went to the session meanwhile). Raises NotNow, RpcError."""
        client = self._check_ready()
        if not client.info.supports("fork"):
            raise NotNow("No fork", "This agent cannot fork sessions.")
        if self.forking:
            raise NotNow("Forking", "One fork at a time: it is on its way.")
        shown = self.session
        self.forking = True
        try:
            opened = await o.fork_conversation(
                client, self.shared.store, self.name, source_id, history
            )
        finally:
            self.forking = False
        if self.busy or self.session is not shown:
            # A prompt went to the session (or another was opened) while the agent forked.
            opened.close()
            with contextlib.suppress(Exception):
                await client.close_session(opened.session)
            return False
        left = self.opened
        self._show_opened(opened)
        if left is not None:
            left.close()
        if shown is not None:
            with contextlib.suppress(Exception):
                await client.close_session(shown)
        return True

    async def continue_before(self, turn: int) -> None:
        """After a rewind to before `turn`: go on in a new session with the same agent (ACP
        cannot make an agent forget turns), its first prompt carrying a summary of the turns
        kept. Raises NotNow, or one of `STARTUP_ERRORS`."""
        client, old = self.client, self.session
        if client is None or old is None or not self.running:
            raise NotNow("The agent is not running", "Restart the agent first (Ctrl+R).")
        summary = kept_turns_summary(old.state, turn)
        self._leave()
        with contextlib.suppress(Exception):
            await client.close_session(old)
        opened = await self._open(self.opening.again())
        self.context = summary
        kept = f"turns 1 to {turn - 1}" if turn > 2 else "turn 1" if turn == 2 else "no turn"
        opened.session.notice(
            "info",
            f"A new session, from before turn {turn} of the last one",
            f"The files are as they were before that turn. The agent does not remember the "
            f"earlier session: your next prompt carries a short summary of {kept} (what you "
            "asked, the tools it used, what it answered). Ctrl+O opens the earlier session.",
        )

    def changes(self) -> SessionChanges | None:
        """What each turn of the session changed in the workspace, to see and undo."""
        if self.session is None:
            return None
        return SessionChanges(self.shared.checkpoints, self.session)

    def export(self) -> Path:
        """Write the session as Markdown in the workspace; where. Raises OSError."""
        from acp_tui.records.export import export_path, session_markdown  # only when asked

        session = self.session
        if session is None:
            raise NotNow("Nothing to export", "No session is open yet.")
        state = session.state
        label = self.client.info.label if self.client is not None else None
        text = session_markdown(state, agent=label, workspace=str(self.workspace))
        path = export_path(self.workspace, state.title, state.session_id)
        path.write_text(text, encoding="utf-8")
        session.notice("info", f"Exported to {path}")
        return path

    # -- signing in and out ---------------------------------------------------------------------

    async def sign_in_again(self) -> None:
        """The agent answered a prompt with -32000 mid-session (a lapsed token, a sign-out):
        sign in again (the remembered method, else the front end's choice). An agent method
        signs this process in; a key or a login command restarts the agent, and the session
        is reopened. The prompt is not sent again by itself: the user sends it (↑)."""
        session, client = self.session, self.client
        if session is None or client is None:
            return
        choose, run_terminal = self._sign_in_hooks()
        store = self.shared.store
        try:
            choice = await pick_sign_in(client, agent=self.name, store=store, choose=choose)
        except AuthFailed as error:
            session.notice("error", "Not signed in", str(error))
            return

        async def signed_in() -> None:
            await sign_in(client, choice, run_terminal=run_terminal)
            if store is not None:
                store.remember_auth(self.name, choice.id)

        again = "send your prompt again (↑ brings it back)"
        if choice.type != "agent":
            session.notice(
                "info",
                f"Signing in with {choice.name or choice.id}",
                f"The agent restarts with it and the session is reopened: then {again}.",
            )
            try:
                await self.restart(signed_in)
            except STARTUP_ERRORS as error:
                self.fail(error)
            return
        try:
            await signed_in()
        except AuthFailed as error:
            session.notice("error", "Not signed in", str(error))
            return
        session.notice("info", f"Signed in again: {again}")

    async def sign_out(self) -> str:
        """`logout`: the agent ends the signed-in state; acp-tui forgets the remembered
        method, so the next start asks rather than signing straight back in. What happened,
        in words. Raises RpcError."""
        client, session = self.client, self.session
        if client is None:
            raise NotNow("The agent is not running", "Restart the agent first (Ctrl+R).")
        await client.logout()
        store = self.shared.store
        if store is not None:
            store.forget_auth(self.name)
        message = f"Signed out of {client.info.label}."
        if session is not None:
            session.notice("info", message, "New sessions may ask you to sign in again.")
        return message

    # -- turns ----------------------------------------------------------------------------------

    async def run_turn(self, prompt: Prompt) -> TurnEnd:
        """One prompt turn: its blocks, a checkpoint before, the prompt, a checkpoint after.
        The agent failing the prompt is said in the session and returned, not raised."""
        session, client = self.session, self.client
        if session is None or client is None:
            raise NotNow("No session", "The agent has no session open.")
        reached = self.budget_reached()
        if reached is not None:
            raise NotNow(
                "Budget reached", f"{reached.describe()}: raise the budget to send a prompt."
            )
        self.sending = True
        self.attention.turn_started()
        checkpoints = self.shared.checkpoints
        end = TurnEnd(None)
        try:
            content = prompt_content(prompt, self.workspace, client.info, context=self.context)
            self.context = None
            for problem in content.problems:
                self.front_end.say("warning", problem)
            if not await self._checkpoint_before(session, prompt):
                end.withdrawn = True
                return end
            try:
                end.stop_reason = await session.prompt(content.blocks)
            except ConnectionClosed as error:
                end.error = error  # the agent is gone; the session has said so
            except RpcError as error:
                end.error = error
                if error.code == AUTH_REQUIRED:
                    session.notice("warning", "The agent asks you to sign in again", error.message)
                else:
                    session.notice("error", "The agent failed the prompt", error.message)
            finally:
                task = asyncio.current_task()
                if task is None or not task.cancelling():  # a second Ctrl+C stops at once
                    end.changes = await checkpoints.after_turn(session)
        finally:
            self.sending = False
        self.attention.turn_ended(end)
        auth = isinstance(end.error, RpcError) and end.error.code == AUTH_REQUIRED
        if auth and not isinstance(end.error, ConnectionClosed) and self.front_end.chooses_sign_in:
            await self.sign_in_again()
        return end

    @property
    def preparing(self) -> bool:
        """A prompt waits for the checkpoint before its turn: not sent yet (`cancel`
        withdraws it)."""
        return self._withdraw is not None

    async def _checkpoint_before(self, session: Session, prompt: Prompt) -> bool:
        """Take the checkpoint before `prompt`'s turn; False when the user withdrew the prompt
        meanwhile (`cancel`). Held `HELD` seconds, the front end shows it held."""
        checkpoints = self.shared.checkpoints
        checkpoint = asyncio.ensure_future(checkpoints.before_turn(session, prompt.text))
        loop = asyncio.get_running_loop()
        withdraw = self._withdraw = loop.create_future()
        told: list[Prompt] = []

        def hold() -> None:
            told.append(prompt)
            self.front_end.prompt_held(prompt)

        held = loop.call_later(HELD, hold)
        try:
            await asyncio.wait((checkpoint, withdraw), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._withdraw = None
            held.cancel()
            checkpoint.cancel()  # withdrawn (or this turn cancelled): its staging is let go
            if told:
                self.front_end.prompt_held(None)
        if withdraw.done():  # even if the checkpoint was taken meanwhile: the user said no
            checkpoints.discard(session)
            return False
        checkpoint.result()  # what it raised, as awaiting it raised
        return True

    def cancel(self, grace: float) -> bool:
        """Cancel the running turn (`session/cancel`); an agent that has not confirmed within
        `grace` seconds has its turn ended without it. A prompt still waiting for its
        checkpoint is withdrawn instead. False if no turn runs."""
        if self._withdraw is not None:
            if not self._withdraw.done():
                self._withdraw.set_result(None)
            return True
        session = self.session
        if session is None or not session.busy:
            return False
        if session.state.status != "cancelling":
            self._spawn(session.cancel())
            asyncio.get_running_loop().call_later(grace, self._cancel_ignored, session, grace)
        return True

    def _cancel_ignored(self, session: Session, grace: float) -> None:
        if session.busy and session.state.status == "cancelling":
            session.abandon_turn(f"The agent ignored the cancel for {grace:g} s")
            self.unresponsive = True
            self.front_end.cancel_ignored()

    def _spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
