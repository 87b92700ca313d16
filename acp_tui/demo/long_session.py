"""A long made-up session for the demo agent's store: what a client shows after weeks of work.

`long_session(updates, cwd)` builds a `SessionRecord` whose replay (v1 `session/load`) is
`updates` session updates of mixed kinds: prompts, thoughts, Markdown answers, edits with
diffs, commands with their output, plans. Benchmarks and tests of long histories write it
into a demo data directory (`write_long_session`) and let the real demo agent replay it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_tui.demo import wire
from acp_tui.demo.store import SessionRecord, SessionStore
from acp_tui.demo.texts import MARKDOWN_SHORT, THOUGHT

ANSWER = MARKDOWN_SHORT.strip()
SOURCE = "\n".join(f"def step_{n}(value):\n    return value + {n}\n" for n in range(6))


def _turn(number: int) -> list[dict[str, Any]]:
    """One turn's history entries: a prompt, a thought, an edit, a command, an answer and,
    every fourth turn, a plan."""
    tag = f"{number:05d}"
    new_source = SOURCE.replace("value + 3", f"value * {number % 7 + 2}")
    terminal = wire.terminal_item(f"term_{tag}", f"pytest -q tests/test_{number % 40}.py", ".")
    terminal |= {"output": f"{number % 9 + 3} passed in 0.{number % 90:02d}s\n", "exitCode": 0}
    entries: list[dict[str, Any]] = [
        {"type": "user", "messageId": f"u_{tag}", "content": [wire.text_block(f"turn {tag}")]},
        {"type": "thought", "messageId": f"t_{tag}", "text": THOUGHT.strip()},
        {
            "type": "tool",
            "toolCallId": f"edit_{tag}",
            "title": f"Edit `src/module_{number % 50}.py`",
            "kind": "edit",
            "status": "completed",
            "content": [wire.diff_item("edit", f"src/module_{number % 50}.py", SOURCE, new_source)],
            "locations": [{"path": f"src/module_{number % 50}.py", "line": 7}],
        },
        {
            "type": "tool",
            "toolCallId": f"run_{tag}",
            "title": f"Run `{terminal['command']}`",
            "kind": "execute",
            "status": "completed",
            "content": [terminal],
            "raw_input": {"command": terminal["command"]},
        },
        {"type": "agent", "messageId": f"a_{tag}", "text": f"Answer {tag}.\n\n{ANSWER}"},
    ]
    if number % 4 == 0:
        steps = [("Read the code", "high"), ("Change it", "medium"), ("Run the tests", "low")]
        plan = [
            {"content": f"{text} ({tag})", "priority": priority, "status": "completed"}
            for text, priority in steps
        ]
        entries.insert(2, {"type": "plan", "planId": f"plan_{tag}", "entries": plan})
    return entries


def long_session(updates: int, cwd: str, session_id: str = "sess_long") -> SessionRecord:
    """A session whose v1 replay is exactly `updates` session updates (one per history entry,
    the last being its title)."""
    record = SessionRecord(session_id, cwd, title="A long session")
    history: list[dict[str, Any]] = []
    number = 0
    while len(history) < updates - 1:
        history.extend(_turn(number))
        number += 1
    record.history = history[: updates - 1]
    return record


def write_long_session(
    data_dir: Path, updates: int, cwd: Path, session_id: str = "sess_long"
) -> str:
    """Store a long session where `python -m acp_tui.demo --data-dir data_dir` finds it;
    returns its id."""
    SessionStore(data_dir).save(long_session(updates, str(cwd), session_id))
    return session_id
