"""What the command palette (Ctrl+P) offers: every action of the app, and each mode, model and
setting value the agent offers, so any of them is a few keystrokes away."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.session.summary import last_answer

if TYPE_CHECKING:
    from acp_tui.conversation.conversation import Conversation
    from acp_tui.session.session import Session
    from acp_tui.ui.app import AcpApp
    from acp_tui.ui.chat_screen import ChatScreen


def app_commands(app: AcpApp) -> Iterator[SystemCommand]:
    chat = app.chat
    busy = app.session is not None and app.session.busy
    if busy:
        yield SystemCommand(
            "Cancel the turn", "Stop the agent (your draft stays)", chat.cancel_turn
        )
    if not app.agent_running or app.agent_unresponsive:
        yield SystemCommand(
            "Restart the agent",
            "Start the agent again and reopen the session (Ctrl+R)",
            app.action_restart_agent,
        )
    if app.agent_running:
        yield SystemCommand(
            "Stop the agent", "End the agent process (Ctrl+R starts it again)", app.stop_agent
        )
    if app.can_sign_out:
        yield SystemCommand(
            "Sign out",
            "Sign out of the agent (`logout`)",
            lambda: app.run_worker(app.sign_out(), exit_on_error=False),
        )
    conversation = chat.conversation if chat is not None else None
    if chat is not None and conversation is not None and conversation.budget.set:
        yield from _budget_commands(chat, conversation)
    yield SystemCommand(
        "Mode and settings", "The agent's modes, models and options (F2)", app.action_settings
    )
    yield SystemCommand(
        "Next mode", "Switch to the agent's next mode (Shift+Tab)", app.action_cycle_mode
    )
    yield SystemCommand(
        "Search the session", "Find text in every block (Ctrl+F)", app.action_search
    )
    yield SystemCommand(
        "Protocol inspector",
        "Show or hide the JSON-RPC traffic (F12)",
        chat.action_toggle_inspector,
    )
    yield SystemCommand(
        "Follow the stream", "Scroll to the end and stay there (Ctrl+End)", chat.action_follow
    )
    yield SystemCommand(
        "Browse blocks", "Focus the last block; then ↑ ↓ (Alt+↑)", chat.action_browse
    )
    yield SystemCommand(
        "Sessions", "Open an earlier session in this workspace (Ctrl+O)", app.action_sessions
    )
    if app.can_fork and not busy:
        yield SystemCommand(
            "Fork the session",
            "Go on in a new session that starts from here; this one stays as it is (Ctrl+O)",
            app.action_fork,
        )
    if not app.picker_open:
        yield SystemCommand(
            "New conversation",
            "Pick an agent (this one, configured, or from the ACP Registry) for another "
            "conversation, with its own process (Ctrl+N)",
            app.action_new_conversation,
        )
    yield from app.inbox.commands()
    if len(app.conversations) > 1:
        yield SystemCommand(
            "Next conversation",
            "Show the next conversation (Ctrl+PgDn, Alt+1…9)",
            partial(app.action_switch_conversation, 1),
        )
        yield SystemCommand(
            "Previous conversation",
            "Show the previous conversation (Ctrl+PgUp)",
            partial(app.action_switch_conversation, -1),
        )
        yield SystemCommand(
            "Close the conversation",
            "End its session and stop its agent (Ctrl+W)",
            app.action_close_conversation,
        )
    yield SystemCommand(
        "Export to Markdown", "Write this session to a .md file in the workspace", app.action_export
    )
    yield SystemCommand(
        "Copy the last answer", "To the clipboard (OSC 52)", partial(copy_last_answer, app)
    )
    yield SystemCommand(
        "Changes", "What each turn changed in the workspace; undo it (F3)", chat.action_changes
    )
    yield SystemCommand(
        "Undo the last rewind",
        "Put back the files the last rewind replaced",
        partial(_undo_rewind, app),
    )
    yield SystemCommand("Keys", "Every key acp-tui knows (F1)", app.action_help)
    if app.session is not None:
        yield from setting_commands(app, app.session)


def _undo_rewind(app: AcpApp) -> None:
    from acp_tui.ui.screens.rewind import undo_last_rewind

    conversation = app.conversation.conversation
    changes = conversation.changes() if conversation is not None else None
    if changes is not None:
        app.run_worker(undo_last_rewind(app, changes), group="rewind", exit_on_error=False)


def setting_commands(app: AcpApp, session: Session) -> Iterator[SystemCommand]:
    """One command per value: "Model: Demo Smart", "Mode: Code", "Show thoughts: off"."""
    state = session.state
    has_mode_option = any(o.category == "mode" for o in state.config_options)
    if state.modes and not has_mode_option:
        for mode in state.modes:
            if mode.id != state.current_mode:
                yield SystemCommand(
                    f"Mode: {mode.name}",
                    mode.description or "Switch the agent's mode",
                    partial(_apply, app, mode.id, None, None),
                    discover=False,
                )
    for option in state.config_options:
        if option.type == "boolean":
            value = option.current_value is not True
            yield SystemCommand(
                f"{option.name}: {'on' if value else 'off'}",
                option.description if isinstance(option.description, str) else "",
                partial(_apply, app, None, option, value),
                discover=False,
            )
        elif option.type == "select":
            for choice in option.choices():
                if choice.value == option.current_value:
                    continue
                description = choice.description if isinstance(choice.description, str) else ""
                yield SystemCommand(
                    f"{option.name}: {choice.name}",
                    description or f"Set {option.name.lower()}",
                    partial(_apply, app, None, option, str(choice.value)),
                    discover=False,
                )


def _apply(app: AcpApp, mode: str | None, option: object, value: object) -> None:
    async def run() -> None:
        target = app.session
        if target is None:
            return
        try:
            if mode is not None:
                await target.set_mode(mode)
            else:
                await target.set_config_option(option, value)  # type: ignore[arg-type]
        except RpcError as error:
            app.notify(error.message, title="Not changed", severity="error")

    app.run_worker(run(), exit_on_error=False)


def copy_last_answer(app: AcpApp) -> None:
    session = app.session
    if session is None:
        return
    answer = last_answer(session.state)
    if answer is not None:
        app.copy_to_clipboard(answer.text)
        app.notify(f"Copied {len(answer.text)} characters", timeout=2)


def _budget_commands(chat: ChatScreen, conversation: Conversation) -> Iterator[SystemCommand]:
    from acp_tui.conversation.budget import Budget  # the palette is built after the first frame

    budget = conversation.budget
    cost, context = budget.max_cost, budget.max_context
    more = Budget(
        cost * 1.5 if cost is not None else None,
        min(context * 1.25, 100) if context is not None else None,
    )
    said = [f"cost ${more.max_cost:.2f}"] if more.max_cost is not None else []
    said += [f"context {more.max_context:g}%"] if more.max_context is not None else []
    yield SystemCommand(
        "Raise the budget",
        f"Let the session go on: {', '.join(said)}",
        partial(chat.raise_budget, more),
    )
    yield SystemCommand(
        "Remove the budget",
        "No cost or context limit for this conversation",
        partial(chat.raise_budget, Budget()),
    )
