"""Budgets in the TUI: reached, the turn is cancelled and the conversation says why; a prompt
sent then waits in the queue (and the user is told) until the budget is raised from the
command palette, when it goes."""

from __future__ import annotations

from pathlib import Path

from acp_tui.conversation.budget import Budget
from acp_tui.ui.command_palette import app_commands
from tests.agents.hostile import AGENTS
from tests.support.pilot import core, demo_app, demo_workspace, send, wait_started, wait_until
from tests.support.ui import message_texts


async def test_a_reached_budget_holds_prompts_until_it_is_raised(tmp_path: Path) -> None:
    app = demo_app(
        demo_workspace(tmp_path / "workspace"), tmp_path / "state", argv=AGENTS["costly"].argv()
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        conversation = core(app)
        app.chat.raise_budget(Budget(max_cost=0.5))
        session = app.session
        assert session is not None
        await send(app, pilot, "go")
        await wait_until(pilot, lambda: session.state.stop_reason == "cancelled")
        titles = [getattr(item, "title", "") for item in session.state.timeline]
        assert "Budget reached: $0.50 of $0.50" in titles
        toasts = [str(n.message) for n in app._notifications]
        assert "$0.40 of $0.50 spent" in toasts  # the warning, at 80%

        await send(app, pilot, "short")  # held: the budget is reached
        await wait_until(pilot, lambda: app.chat.queue)
        assert [p.text for p in app.chat.queue] == ["short"]
        assert any("the prompt waits until you raise the budget" in str(n.message)
                   for n in app._notifications)  # fmt: skip

        commands = {c.title: c for c in app_commands(app)}
        assert commands["Raise the budget"].help == "Let the session go on: cost $0.75"
        # The agent went on a little after the cancel: half as much again may still be short
        # of what was spent, and the prompt still waits; without a budget it goes.
        commands["Remove the budget"].callback()
        await wait_until(pilot, lambda: message_texts(app)[-1] == "word0 ")
        assert not app.chat.queue
        assert conversation.budget == Budget()
