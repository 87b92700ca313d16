"""Reading `acp-tui -p --output-format jsonl` as a script does."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def tool_calls(events: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each tool call as it stands after `events`, by id: the first event about a call has all
    of it, each later one what changed (`append`: one content item added)."""
    return _folded(events, "tool_call", "content", lambda content, item: [*content, item])


def terminals(events: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each terminal as it stands after `events`, by id: the first event about one has all of
    it, each later one what changed (`append`: output added to `output`)."""
    return _folded(events, "terminal", "output", lambda output, text: output + text)


def _folded(
    events: Iterable[dict[str, Any]], kind: str, grows: str, add: Callable[[Any, Any], Any]
) -> dict[str, dict[str, Any]]:
    """The `kind` events folded by id: fields replace, `append` is added to `grows`."""
    folded: dict[str, dict[str, Any]] = {}
    for event in events:
        if event["type"] != kind:
            continue
        item = folded.setdefault(event["id"], {})
        fields = dict(event)
        if "append" in fields:
            item[grows] = add(item[grows], fields.pop("append"))
        item.update(fields)
    return folded


def stop_reasons(events: Iterable[dict[str, Any]]) -> list[str | None]:
    """The stop reason of each turn's end (an idle `status` event, which may also carry the
    turn's `usage`)."""
    return [e["stopReason"] for e in events if e["type"] == "status" and e["status"] == "idle"]


def tool_call_statuses(events: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """(id, status) of each tool call event that set a status, in order."""
    return [(e["id"], e["status"]) for e in events if e["type"] == "tool_call" and "status" in e]
