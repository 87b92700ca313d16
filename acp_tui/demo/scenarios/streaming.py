"""Scenarios that stream words: Markdown, thoughts, a plan, and long or slow turns."""

from __future__ import annotations

from acp_tui.demo import texts
from acp_tui.demo.turn import Turn


async def markdown(turn: Turn, arg: str) -> None:
    await turn.say(texts.MARKDOWN_SHOWCASE)
    if turn.v2:
        # A v2 `agent_message` replaces a message's whole content (here: fixing a typo).
        message = await turn.say("\nTeh end.")
        await message.replace(
            "\nThe end. *(This line was corrected by an `agent_message` upsert.)*"
        )


async def think(turn: Turn, arg: str) -> None:
    thought = await turn.think(texts.THOUGHT)
    if thought is None:
        await turn.say(texts.THOUGHTS_HIDDEN)
        return
    # v2 can replace a whole thought; real agents use this to swap reasoning for a summary.
    await thought.replace(texts.THOUGHT + "\n\n(Summary: thoughts are shown apart from answers.)")
    await turn.say(texts.AFTER_THOUGHT)


async def plan(turn: Turn, arg: str) -> None:
    await turn.say(texts.PLAN_INTRO + "\n\n")
    steps = [
        ("Read the relevant files", "high", "I read the files involved."),
        ("Sketch the change", "medium", "I sketched the change in my head."),
        ("Write the code", "high", "I wrote the code (pretend)."),
        ("Run the tests", "low", "The tests pass (pretend)."),
    ]
    the_plan = await turn.plan([(content, priority) for content, priority, _ in steps])
    for index, (_, _, done) in enumerate(steps):
        await the_plan.set(index, "in_progress")
        await turn.pause(0.5)
        await turn.say(f"**Step {index + 1}.** {done}\n\n")
        await the_plan.set(index, "completed")
    await turn.say(texts.PLAN_OUTRO)


async def long(turn: Turn, arg: str) -> None:
    count = _number(arg, 2000, 1, 200_000)
    await turn.say(texts.LONG_INTRO.format(count=count))
    chunks = (f"{i}{chr(10) if i % 20 == 0 else ' '}" for i in range(1, count + 1))
    await turn.stream("agent", chunks, delay=0.002)
    await turn.say(f"\n\nDone: **{count}** chunks.")


async def slow(turn: Turn, arg: str) -> None:
    seconds = _number(arg, 30, 1, 3600)
    await turn.say(texts.SLOW_INTRO.format(seconds=seconds))
    call = await turn.tool("Crunch numbers slowly", "other", raw_input={"seconds": seconds})
    await call.update(status="in_progress")

    # Real time, whatever `--speed` says: this is the turn to cancel.
    ticks = (f"⏳ {second}/{seconds} s\n" for second in range(1, seconds + 1))
    await turn.stream("agent", ticks, delay=1.0, real_time=True)
    await call.update(status="completed")
    await turn.say("\nFinished, and nobody cancelled me.")


def _number(arg: str, default: int, low: int, high: int) -> int:
    try:
        return max(low, min(high, int(arg.split()[0])))
    except (ValueError, IndexError):
        return default
