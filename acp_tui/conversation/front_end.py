"""What a conversation asks of the front end that shows it: the one interface both the TUI
and headless mode implement.

A conversation calls these as things happen to its agent; everything about the session's
content comes as `Change`s to its subscribers instead. The defaults are those of a front end
with nobody to ask (headless): a permission request the policy leaves to the user is refused,
questions are not offered to the agent, sign-in cannot be chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acp_tui.conversation.attention import Call
    from acp_tui.conversation.budget import Spent
    from acp_tui.conversation.prompt import Prompt
    from acp_tui.conversation.sign_in import AuthChoice
    from acp_tui.session.agent_info import AgentInfo
    from acp_tui.session.elicitation import PendingElicitation
    from acp_tui.session.session import PendingPermission, Session


class FrontEnd:
    """How a conversation reaches the person using it (see the module docstring)."""

    asks_permission = False
    """Whether a request the policy leaves to the user is shown to them (else refused)."""
    answers_questions = False
    """Whether the agent's questions (elicitation) are offered, and shown (`ask_question`)."""
    chooses_sign_in = False
    """Whether the user is asked which method to sign in with (`choose_sign_in`)."""
    runs_terminal = False
    """Whether a `terminal` sign-in can run in the user's terminal (`run_terminal`)."""
    inspects_traffic = False
    """Whether every line both ways, and the agent's stderr, go to `inspect` (decoded: a cost
    per line, for a front end that shows them)."""

    # -- the agent ----------------------------------------------------------------------------

    def agent_starting(self, label: str) -> None:
        """The agent process is starting (again); `label` names it, when known."""

    def agent_started(self, info: AgentInfo) -> None:
        """The agent answered `initialize`."""

    def agent_down(self, message: str) -> None:
        """The agent could not start (or restart), or no session could be opened: why."""

    def agent_exited(self, description: str) -> None:
        """The agent stopped by itself (not when acp-tui stopped it): how."""

    def connection_lost(self, description: str) -> None:
        """A remote agent's connection dropped (not when acp-tui closed it): how. acp-tui
        connects again by itself and reopens the session (`say` tells when it is back)."""

    def cancel_ignored(self) -> None:
        """The agent ignored a cancel: its turn was ended without it; it may be stuck."""

    def prompt_held(self, prompt: Prompt | None) -> None:
        """`prompt` has waited a while for the checkpoint before its turn (the first of a big
        workspace): it is not sent yet, and a cancel withdraws it. None: it no longer waits."""

    def session_shown(self, session: Session) -> None:
        """`session` is now the conversation's (opened, reopened, forked, or new after a
        rewind): show it instead of the one before."""

    # -- what acp-tui has to say ----------------------------------------------------------------

    def budget(self, stand: Spent) -> None:
        """A budget passed its warning, or was reached (`stand.reached`): the session says
        so already; a front end that keeps score (headless: its exit status) hears it here."""

    def needs_you(self, call: Call) -> None:
        """Something newly needs the user: a turn ended, the agent asks, the agent failed
        (`acp_tui.conversation.attention`). A front end that notifies hears it here; headless
        mode has nobody to notify."""

    def say(self, severity: str, title: str, detail: str | None = None) -> None:
        """Something acp-tui (not the agent) wants the user to know, about the session."""

    def warn(self, message: str, *, title: str | None = None) -> None:
        """A problem outside any session (the config, the records, the checkpoints)."""

    def inspect(self, kind: str, text: str) -> None:
        """A line for the protocol inspector: `problem`, `note`, `stderr`, or a direction of
        traffic (`in`, `out`)."""

    # -- asking -------------------------------------------------------------------------------

    async def ask_permission(self, pending: PendingPermission) -> None:
        """Show a request the policy leaves to the user (only if `asks_permission`)."""
        pending.cancel()

    async def ask_question(self, pending: PendingElicitation) -> None:
        """Show the agent's question (only if `answers_questions`)."""
        pending.cancel()

    async def choose_sign_in(
        self, choices: list[AuthChoice], remembered: str | None
    ) -> AuthChoice | None:
        """Which method to sign in with (only if `chooses_sign_in`); None: give up."""
        return None

    async def run_terminal(self, argv: list[str], env: dict[str, str]) -> int:
        """Run a sign-in command in the user's terminal (only if `runs_terminal`)."""
        raise NotImplementedError
