"""The guard, headless: an agent that writes and runs commands without asking permission
(`tests/agents/hostile/unasked.py`, a real process) gets what `--permission` says, not
everything; `--guard off` (or `guard = false` in the config) lets it through as before."""

from __future__ import annotations

from pathlib import Path

from tests.headless.test_faults import Run, headless
from tests.support.jsonl import tool_calls

STEPS = "write a.txt from-the-agent\nrun echo ran > b.txt"


def said(run: Run) -> str:
    """What the agent said it got back: one line per step."""
    return "".join(event["append"]["text"] for event in run.events() if "append" in event)


def permission_events(run: Run) -> list[dict[str, object]]:
    return [event for event in run.events() if event.get("type") == "permission"]


async def test_under_reject_an_unasked_write_and_command_are_refused(tmp_path: Path) -> None:
    run = await headless(
        tmp_path, "never-asks", "--permission", "reject", "--output-format", "jsonl",
        prompts=[STEPS],
    )  # fmt: skip
    assert run.status == 0, run.err
    assert not (run.workspace / "a.txt").exists() and not (run.workspace / "b.txt").exists()
    refusal = "refused: the agent did not ask for permission to"
    assert f"write a.txt: {refusal} write this file" in said(run)
    assert f"run echo ran > b.txt: {refusal} run this command" in said(run)
    # Each was asked as a request of acp-tui's own, about a card of its own, and refused.
    answers = permission_events(run)
    assert [a["optionId"] for a in answers] == ["reject", "reject"]
    calls = tool_calls(run.events())
    assert [calls[str(a["toolCallId"])]["status"] for a in answers] == ["failed", "failed"]
    assert [calls[str(a["toolCallId"])]["title"] for a in answers] == [
        "Write a.txt",
        "echo ran > b.txt",
    ]


async def test_headless_has_no_one_to_ask_so_ask_refuses(tmp_path: Path) -> None:
    run = await headless(tmp_path, "never-asks", prompts=[STEPS])
    assert run.status == 0, run.err
    assert not (run.workspace / "a.txt").exists() and not (run.workspace / "b.txt").exists()
    assert "permission for Write a.txt (the agent did not ask): reject" in run.err
    assert "permission for echo ran > b.txt (the agent did not ask): reject" in run.err


async def test_under_allow_they_go_through_and_the_command_is_said(tmp_path: Path) -> None:
    run = await headless(tmp_path, "never-asks", "--permission", "allow", prompts=[STEPS])
    assert run.status == 0, run.err
    assert (run.workspace / "a.txt").read_text() == "from-the-agent"
    assert (run.workspace / "b.txt").read_text() == "ran\n"
    assert "write a.txt: ok" in run.out and "run echo ran > b.txt: ok, exit 0" in run.out
    # A command outside any tool call is never unseen: a line on stderr says it ran.
    assert "echo ran > b.txt: a command the agent runs outside any tool call" in run.err


async def test_guard_off_lets_them_through_and_still_says_the_command(tmp_path: Path) -> None:
    run = await headless(tmp_path, "never-asks", "--permission", "reject", "--guard", "off",
                         prompts=[STEPS])  # fmt: skip
    assert run.status == 0, run.err
    assert (run.workspace / "a.txt").read_text() == "from-the-agent"
    assert (run.workspace / "b.txt").read_text() == "ran\n"
    assert "(the agent did not ask)" not in run.err
    assert "echo ran > b.txt: a command the agent runs outside any tool call" in run.err


async def test_the_config_turns_the_guard_off(tmp_path: Path) -> None:
    config = tmp_path / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("guard = false\n")
    run = await headless(tmp_path, "never-asks", "--permission", "reject", prompts=[STEPS])
    assert run.status == 0, run.err
    assert (run.workspace / "a.txt").is_file() and (run.workspace / "b.txt").is_file()
    # The command line wins over the config.
    (run.workspace / "a.txt").unlink()
    run = await headless(tmp_path, "never-asks", "--permission", "reject", "--guard", "on",
                         prompts=[STEPS])  # fmt: skip
    assert not (run.workspace / "a.txt").exists()


async def test_a_write_the_agent_asked_about_is_asked_once(tmp_path: Path) -> None:
    """Gemini CLI's way: a permission request for its edit, then `fs/write_text_file` with no
    tool call. The answer covers the write: no second question."""
    run = await headless(
        tmp_path, "never-asks", "--permission", "allow", "--output-format", "jsonl",
        prompts=["asked-write c.txt allowed"],
    )  # fmt: skip
    assert run.status == 0, run.err
    assert (run.workspace / "c.txt").read_text() == "allowed"
    assert [a["toolCallId"] for a in permission_events(run)] == ["edit-1"]


async def test_a_saved_rule_answers_for_an_unasked_write(tmp_path: Path) -> None:
    rules = tmp_path / "config" / "acp-tui" / "permissions.toml"
    rules.parent.mkdir(parents=True)
    rules.write_text('[[rule]]\nkind = "edit"\ndecision = "allow"\n')
    run = await headless(tmp_path, "never-asks", "--permission", "reject", prompts=[STEPS])
    assert run.status == 0, run.err
    assert (run.workspace / "a.txt").read_text() == "from-the-agent"  # the rule: edits allowed
    assert not (run.workspace / "b.txt").exists()  # no rule for commands: --permission reject
    assert "permission for Write a.txt (the agent did not ask): allow (rule:" in run.err
