"""The `tour` scenario: every feature in one turn, a plan whose steps run other scenarios."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from acp_tui.demo import texts
from acp_tui.demo.scenarios.files import edit, read
from acp_tui.demo.scenarios.session_info import usage
from acp_tui.demo.scenarios.streaming import long, think
from acp_tui.demo.scenarios.terminals import run
from acp_tui.demo.scenarios.tool_calls import tools
from acp_tui.demo.turn import Turn


async def tour(turn: Turn, arg: str) -> None:
    await turn.say(texts.TOUR_INTRO + "\n")
    steps: list[tuple[str, str, Callable[[], Awaitable[Any]]]] = [
        ("Say hello in Markdown", "high", lambda: turn.say(texts.MARKDOWN_SHORT)),
        ("Think out loud", "medium", lambda: think(turn, "")),
        ("Use a tool of every kind", "high", lambda: tools(turn, "")),
        ("Read a file", "medium", lambda: read(turn, "")),
        ("Edit a file, with permission", "high", lambda: edit(turn, "")),
        ("Run a command", "medium", lambda: run(turn, "")),
        ("Stream a burst of chunks", "low", lambda: long(turn, "300")),
        ("Report usage and set a title", "low", lambda: _usage_and_title(turn)),
    ]
    the_plan = await turn.plan([(content, priority) for content, priority, _ in steps])
    for index, (content, _, action) in enumerate(steps):
        await the_plan.set(index, "in_progress")
        await turn.say(f"\n### {index + 1}. {content}\n\n")
        await action()
        await the_plan.set(index, "completed")
    await turn.say("\n" + texts.TOUR_OUTRO)


async def _usage_and_title(turn: Turn) -> None:
    await usage(turn, "")
    await turn.set_title("Tour of the ACP demo agent")
    await turn.say("\n" + texts.TITLE_SET.format(title="Tour of the ACP demo agent"))
