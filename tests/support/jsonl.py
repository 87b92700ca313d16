"""Reading `acp-tui -p --output-format jsonl` as a script does."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def tool_calls(events: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each tool call as it stands after `events`, by id: the first event about a call has all
    of it, each later one what changed (`append`: one content item added)."""
    calls: dict[str, dict[str, Any]] = {}
    for event in events:
        if event["type"] != "tool_call":
            continue
        call = calls.setdefault(event["id"], {})
        fields = dict(event)
        if "append" in fields:
            call["content"] = [*call["content"], fields.pop("append")]
        call.update(fields)
    return calls


def terminals(events: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each terminal as it stands after `events`, by id: the first event about one has all of
    it, each later one what changed (`append`: output added to `output`)."""
    shown: dict[str, dict[str, Any]] = {}
    for event in events:
        if event["type"] != "terminal":
            continue
        terminal = shown.setdefault(event["id"], {})
        fields = dict(event)
        if "append" in fields:
            terminal["output"] += fields.pop("append")
        terminal.update(fields)
    return shown


def stop_reasons(events: Iterable[dict[str, Any]]) -> list[str | None]:
    """The stop reason of each turn's end (an idle `status` event, which may also carry the
    turn's `usage`)."""
    return [e["stopReason"] for e in events if e["type"] == "status" and e["status"] == "idle"]


def tool_call_statuses(events: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """(id, status) of each tool call event that set a status, in order."""
    return [(e["id"], e["status"]) for e in events if e["type"] == "tool_call" and "status" in e]
