"""A short account of a conversation's first turns, for an agent that was not there.

After the files are rewound to before turn N, the conversation can go on in a new session
(ACP has no way to make an agent forget turns): its first prompt carries this summary of
turns 1 to N-1, what the user asked, what the agent answered and which tools it used, so the
agent knows where things stand. Plain text, bounded in size; no I/O.
"""

from __future__ import annotations

from acp_tui.session.state import Message, PlanState, SessionState, ToolCallState
from acp_tui.text import shorten

MESSAGE_CHARS = 600
TOTAL_CHARS = 6000
CONTEXT_MARK = "[Context from acp-tui]"
"""How the summary starts: what tells it from what the user wrote."""
CONTEXT_END = "\n\n[The user's message follows.]\n"


def _cut(text: str, limit: int) -> str:
    return shorten(" ".join(text.split()), limit)


def kept_turns_summary(state: SessionState, before_turn: int) -> str:
    """The context for a new session that continues `state` from before turn `before_turn`."""
    turns: dict[int, dict[str, list[str]]] = {}
    for item in state.timeline:
        if isinstance(item, PlanState) or item.turn >= before_turn or item.turn < 1:
            continue  # a plan belongs to no turn
        entry = turns.setdefault(item.turn, {"user": [], "agent": [], "tools": []})
        if isinstance(item, Message) and item.role in ("user", "agent") and item.text.strip():
            entry[item.role].append(item.text)
        elif isinstance(item, ToolCallState) and item.title:
            entry["tools"].append(f"{item.title} ({item.status})")
    head = (
        f"{CONTEXT_MARK} This conversation continues an earlier session with you, "
        f"from before its turn {before_turn}: the workspace's files were put back as they were "
        "then, and what came after is undone. You do not remember the earlier session; "
    )
    if not turns:
        return head + "nothing came before that turn." + CONTEXT_END
    lines = [head + "in short, it went:"]
    for number in sorted(turns):
        entry = turns[number]
        lines.append(f"\nTurn {number}. The user: {_cut(' '.join(entry['user']), MESSAGE_CHARS)}")
        if entry["tools"]:
            lines.append(f"Tools used: {_cut('; '.join(entry['tools']), MESSAGE_CHARS)}")
        if entry["agent"]:
            lines.append(f"You answered: {_cut(' '.join(entry['agent']), MESSAGE_CHARS)}")
    text = "\n".join(lines)
    if len(text) > TOTAL_CHARS:
        # The latest turns matter most: keep the head and the end.
        text = lines[0] + "\n…\n" + text[-(TOTAL_CHARS - len(lines[0])) :]
    return text + CONTEXT_END


def last_answer(state: SessionState) -> Message | None:
    """The agent's latest message in `state`, if it sent one."""
    for item in reversed(state.timeline):
        if isinstance(item, Message) and item.role == "agent":
            return item
    return None


def typed_text(text: str) -> str:
    """A prompt's text as the user typed it: without the summary acp-tui put before it."""
    if text.startswith(CONTEXT_MARK):
        _context, end, typed = text.partition(CONTEXT_END)
        if end:
            return typed
    return text
