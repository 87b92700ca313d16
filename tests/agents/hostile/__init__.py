"""Hostile ACP agents: small standard-library scripts, one per misbehaviour, each saying in its
docstring what it does wrong. `AGENTS` is the one list of them (with their arguments) that the
headless suite (`tests/headless/test_faults.py`) and the TUI's take their cases from.

Every agent logs what it sent and what it got back (see `_acp.py`); `AgentLog` reads that log
and `check_transcript` holds acp-tui's transcript against it: every line the agent wrote must
be in the transcript, in order, and everything the agent got must be what the transcript says
acp-tui sent.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LOG_ENV = "HOSTILE_AGENT_LOG"
"""Where an agent appends its log (see `_acp.py`): set it in acp-tui's environment."""
SESSION_ID = "hostile-session"


@dataclass(frozen=True)
class HostileAgent:
    name: str
    script: str
    args: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return HERE / self.script

    def argv(self) -> list[str]:
        return [sys.executable, str(self.path), *self.args]

    @property
    def misbehaviour(self) -> str:
        """The script's docstring, with the arguments it runs with."""
        doc = ast.get_docstring(ast.parse(self.path.read_text())) or ""
        return f"{doc}\n(argv: {' '.join(self.args) or 'none'})"


AGENTS: dict[str, HostileAgent] = {
    agent.name: agent
    for agent in [
        HostileAgent("exits-before-initialize", "exits.py", ("before",)),
        HostileAgent("exits-during-initialize", "exits.py", ("during",)),
        HostileAgent("exits-after-initialize", "exits.py", ("after",)),
        HostileAgent("crashes-mid-turn", "exits.py", ("mid-turn",)),
        HostileAgent("crashes-once-then-loads", "crash_once.py"),
        HostileAgent("never-answers-initialize", "hangs.py", ("initialize",)),
        HostileAgent("answers-initialize-with-wrong-id", "hangs.py", ("initialize-wrong-id",)),
        HostileAgent("never-answers-session-new", "hangs.py", ("session-new",)),
        HostileAgent("never-answers-prompt", "hangs.py", ("prompt",)),
        HostileAgent("slow-turn", "slow_turn.py", ("2.5",)),
        HostileAgent("deaf-to-cancel", "deaf_to_cancel.py"),
        HostileAgent("stdout-noise", "stdout_noise.py"),
        HostileAgent("protocol-junk", "protocol_junk.py"),
        HostileAgent("malformed-answer", "malformed_answer.py"),
        HostileAgent("huge-line", "huge_line.py", ("50",)),
        HostileAgent("update-burst", "burst.py", ("100000",)),
        HostileAgent("update-stream", "burst.py", ("20000",)),
        HostileAgent("stderr-flood", "stderr_flood.py", ("100",)),
        HostileAgent("deeply-nested", "nested.py", ("100000",)),
        HostileAgent("invalid-utf8", "bad_utf8.py"),
        HostileAgent("late-updates", "late_updates.py"),
        HostileAgent("permission-after-cancel", "permission_after_cancel.py"),
        HostileAgent("long-command", "long_command.py"),
        HostileAgent("polite", "polite.py"),
        HostileAgent("never-asks", "unasked.py"),
        HostileAgent("odd-permissions", "odd_permissions.py"),
        HostileAgent("big-write", "big_write.py", ("200",)),
        HostileAgent("costly", "costly.py", ("0.05", "1")),
    ]
}


# -- what the agent saw -------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    length: int
    text: str | None
    """The line (bad UTF-8 replaced), or None if it was too long to log."""

    @property
    def blank(self) -> bool:
        return self.text is not None and not self.text.strip()

    def json(self) -> Any:
        assert self.text is not None
        return json.loads(self.text)


@dataclass
class AgentLog:
    pids: list[int] = field(default_factory=list)
    """One per process that logged (an agent started again logs again)."""
    sent: list[Line] = field(default_factory=list)
    got: list[Line] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> AgentLog:
        log = cls()
        if not path.exists():
            return log
        for raw in path.read_text().splitlines():
            entry = json.loads(raw)
            if entry["dir"] == "pid":
                log.pids.append(entry["pid"])
            elif entry["dir"] == "sent-many":
                log.sent.extend(Line(len(text.encode()), text) for text in entry["texts"])
            else:
                line = Line(entry["len"], entry["text"])
                (log.sent if entry["dir"] == "sent" else log.got).append(line)
        return log

    def got_messages(self) -> list[dict[str, Any]]:
        return [line.json() for line in self.got]

    def answers(self) -> list[dict[str, Any]]:
        """acp-tui's responses to the agent (results and errors), in order."""
        return [m for m in self.got_messages() if "method" not in m]

    def error_codes(self) -> dict[Any, int]:
        """The error code acp-tui answered each of the agent's request ids with."""
        return {m["id"]: m["error"]["code"] for m in self.answers() if "error" in m}

    def methods(self) -> list[str]:
        return [m["method"] for m in self.got_messages() if "method" in m]


def process_gone(pid: int) -> bool:
    """Whether no process with this pid is running (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


# -- acp-tui's transcript -----------------------------------------------------------------------


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """Every entry of a transcript, each checked for the documented shape; the file must end
    with a complete line."""
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), "the transcript ends in the middle of a line"
    entries = []
    for number, raw in enumerate(data.splitlines(), 1):
        entry = json.loads(raw)
        assert entry["dir"] in ("send", "recv"), f"line {number}: {entry['dir']!r}"
        assert isinstance(entry["ts"], float), f"line {number}: ts {entry['ts']!r}"
        if entry["msg"] is None:
            assert entry["dir"] == "recv" and isinstance(entry["raw"], str), f"line {number}"
            assert isinstance(entry["error"], str), f"line {number}"
        entries.append(entry)
    return entries


def check_transcript(
    entries: list[dict[str, Any]], log: AgentLog, *, agent_read_all: bool = True
) -> None:
    """The transcript holds every line the agent wrote (as a message, or kept raw when it was
    none), in order, and what it sent is what the agent got: all of it, or (when the agent died
    or was killed before reading its input) a prefix."""
    received = [e for e in entries if e["dir"] == "recv"]
    written = [line for line in log.sent if not line.blank]
    assert len(received) == len(written), (len(received), len(written))
    for number, (entry, line) in enumerate(zip(received, written, strict=True)):
        if line.text is None:
            continue  # too long to log: the count and the transcript's own parse must do
        if entry["msg"] is None:
            assert entry["raw"] == line.text.strip(), f"received line {number}"
        else:
            assert entry["msg"] == line.json(), f"received line {number}"
    sent = [e["msg"] for e in entries if e["dir"] == "send"]
    got = log.got_messages()
    if agent_read_all:
        assert got == sent
    else:
        assert got == sent[: len(got)]
