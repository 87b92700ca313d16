"""The status line under the prompt: it always fits, shortening its items as the width asks
and never cutting off the last one (OpenCode's model, effort and mode at 160 columns)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from textual.content import Content

from acp_tui.protocol.updates import TurnUsage
from acp_tui.ui.widgets.usage_bar import (
    SETTING,
    TURN,
    VALUES_ONLY,
    Item,
    UsageBar,
    fit,
    turn_summary,
)
from tests.support import TEST_AGENTS
from tests.support.pilot import send, wait_idle, wait_until
from tests.support.ui import started_app

REAL_SHAPES = [sys.executable, str(TEST_AGENTS / "real_shapes.py")]


def item(*forms: tuple[int, str], **fields: Any) -> Item:
    return Item(tuple((step, Content(text)) for step, text in forms), **fields)


def test_the_line_closes_up_then_shortens_step_by_step_then_cuts_names() -> None:
    turn = turn_summary(TurnUsage(31_540, 1200, 340, cached_read_tokens=30_000))
    model = ((0, "model Claude Sonnet"), (VALUES_ONLY, "Claude Sonnet"))
    line = [
        item(*turn, drop=TURN),
        item(*model, cut=True, drop=SETTING),
        item((0, "mode build"), (VALUES_ONLY, "build"), tight=True, cut=True, drop=SETTING + 1),
    ]
    whole = "turn 1.2k in (30k cached) / 340 out"
    assert fit(line, 80).plain == f"{whole}  ·  model Claude Sonnet · mode build"
    assert fit(line, 70).plain == f"{whole} · model Claude Sonnet · mode build"
    assert fit(line, 62).plain == "turn 1.2k in / 340 out · model Claude Sonnet · mode build"
    assert fit(line, 50).plain == "turn 1.2k in / 340 out · Claude Sonnet · build"
    assert fit(line, 40).plain == "turn 1.2k/340 · Claude Sonnet · build"
    # Nothing shorter to say: what matters least goes, and names (not the last) are cut.
    assert fit(line, 30).plain == "Claude Sonnet · build"
    assert fit(line, 16).plain == "Claude … · build"
    assert fit(line, 3).plain == "build"


async def test_opencodes_status_line_fits_at_160_columns_and_below(
    tmp_path: Path,
) -> None:
    """OpenCode's context, turn, cost, model ("Provider/Model"), effort and session mode: cut
    at 160 columns before, the mode now ends the line whole at every width, each showing as
    much as fits."""
    async with started_app(tmp_path, argv=REAL_SHAPES, size=(160, 40)) as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        bar = app.chat.query_one(UsageBar)
        await wait_until(pilot, lambda: bar.cost and bar.turn)
        for width, shown in (
            (
                160,
                "context ━━━━━━━━━━ 23k / 200k 12% · turn 12k in / 1.2k out · $0.0123"
                " · model Anthropic/Claude Sonnet 4.5 (latest) · effort Default"
                " · session mode build",
            ),
            (
                100,
                "context 23k / 200k 12% · turn 12k/1.2k · $0.0123"
                " · Anthropic/Claude Sonnet 4.… · Default · build",
            ),
            (80, "context 23k / 200k 12% · $0.0123 · Anthropic/Claude Sonne… · Default · build"),
        ):
            await pilot.resize_terminal(width, 40)
            await wait_until(pilot, lambda width=width: bar.outer_size.width == width)
            assert bar.render().plain == shown
            assert len(shown) <= bar.size.width
