"""Budgets, headless: a stand-in agent that reports its cost and context as it streams
(`tests/agents/hostile/costly.py`, a real process). Reached, the turn is cancelled, no further
prompt is sent, and the run ends with status 6 saying why."""

from __future__ import annotations

from pathlib import Path

from tests.agents.hostile import AGENTS, HostileAgent
from tests.headless.test_faults import Headless, Run, jsonl


def costly(cost: str, context: str = "1") -> HostileAgent:
    return HostileAgent("costly", AGENTS["costly"].script, (cost, context))


async def run(tmp_path: Path, agent: HostileAgent, *args: str, prompts: list[str]) -> Run:
    async with Headless(tmp_path, agent, *args, prompts=prompts) as acp_tui:
        return await acp_tui.finish(timeout=60)


def budget_events(result: Run) -> list[dict[str, object]]:
    return [event for event in result.events() if event["type"] == "budget"]


async def test_a_cost_budget_reached_cancels_the_turn_and_ends_the_run(tmp_path: Path) -> None:
    result = await run(
        tmp_path, costly("0.05"), *jsonl("--max-cost", "1"), prompts=["go", "never sent"]
    )
    assert result.status == 6, result.err
    assert result.warnings()[-1] == "budget reached: $1.00 of $1.00"
    assert budget_events(result) == [
        {"type": "budget", "measure": "cost", "spent": 0.8, "limit": 1.0, "reached": False},
        {"type": "budget", "measure": "cost", "spent": 1.0, "limit": 1.0, "reached": True},
    ]
    sent = [m.get("method") for m in result.log.got_messages()]
    assert sent.count("session/prompt") == 1 and "session/cancel" in sent
    assert {"type": "status", "status": "idle", "stopReason": "cancelled"} in result.events()


async def test_a_context_budget_in_text_output(tmp_path: Path) -> None:
    result = await run(tmp_path, costly("none", "2"), "--max-context", "50", prompts=["go"])
    assert result.status == 6, result.err
    assert "Budget: 40% of the context window, of 50% allowed spent" in result.warnings()
    assert result.warnings()[-1] == "budget reached: 50% of the context window, of 50% allowed"


async def test_an_agent_that_reports_no_cost_is_said_to_and_runs(tmp_path: Path) -> None:
    result = await run(tmp_path, costly("none"), *jsonl("--max-cost", "1"), prompts=["short"])
    assert result.status == 0, result.err
    notices = [e["title"] for e in result.events() if e["type"] == "notice"]
    assert "The agent reports no cost: the cost budget cannot apply to it" in notices
    assert not budget_events(result)


async def test_the_budget_from_the_config(tmp_path: Path) -> None:
    config = tmp_path / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("max_cost = 0.5\n")
    result = await run(tmp_path, costly("0.05"), prompts=["go"])
    assert result.status == 6, result.err
    assert result.warnings()[-1] == "budget reached: $0.50 of $0.50"


async def test_a_budget_of_a_fraction_of_a_cent_says_its_figures(tmp_path: Path) -> None:
    # Claude (claude-agent-acp, through the interop kit) reports $0.0012 for a short turn: in
    # cents both sides of the message read $0.00.
    result = await run(tmp_path, costly("0.0004"), "--max-cost", "0.001", prompts=["go"])
    assert result.status == 6, result.err
    assert result.warnings()[-1] == "budget reached: $0.0012 of $0.0010"
