"""A conversation as Markdown: `acp-tui export ID` and the TUI's export key.

Works from a `SessionState`, live or restored from the record, so a conversation exports the
same whether or not its agent is running. The user's prompts and the agent's answers are
sections; thoughts are quoted, tool calls show their status, locations, output and diffs,
plans are task lists, and notices are quoted with their severity.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from acp_tui.protocol.content import (
    ContentBlock,
    DiffPatch,
    EmbeddedResource,
    ToolCallContent,
    block_label,
)
from acp_tui.records.codec import recorded_state
from acp_tui.records.store import ConversationRecord, RecordStore, parse_time
from acp_tui.session.state import (
    Message,
    Notice,
    PlanState,
    SessionState,
    TerminalState,
    ToolCallState,
)
from acp_tui.session.summary import typed_text

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)")
_PLAN_MARKS = {"completed": "[x]", "in_progress": "[-]"}


def session_markdown(
    state: SessionState,
    *,
    title: str | None = None,
    agent: str | None = None,
    workspace: str | None = None,
    created: str | None = None,
    updated: str | None = None,
    earlier: Sequence[str] = (),
) -> str:
    """The conversation in `state` as a Markdown document; `earlier`: the session ids it had
    before its own."""
    heading = title or state.title or _first_prompt(state) or "Conversation"
    parts = [f"# {_one_line(heading)}\n"]
    facts = [
        ("Agent", agent),
        ("Workspace", f"`{workspace}`" if workspace else None),
        ("Session", f"`{state.session_id}`" if state.session_id else None),
        ("Earlier sessions", ", ".join(f"`{e}`" for e in earlier)),
        ("Started", _time(created)),
        ("Updated", _time(updated or state.updated_at)),
    ]
    listed = [f"- {name}: {value}" for name, value in facts if value]
    if listed:
        parts.append("\n".join(listed) + "\n")
    side = None
    for item in state.timeline:
        if isinstance(item, Message) and item.role == "user":
            parts.append("## You\n")
            parts.append(_blocks(item.content))
            side = "user"
            continue
        if side != "agent":
            parts.append("## Agent\n")
            side = "agent"
        if isinstance(item, Message):
            text = _blocks(item.content)
            parts.append(_quote(text, "Thinking") if item.role == "thought" else text)
        elif isinstance(item, ToolCallState):
            parts.append(_tool_call(item, state.terminals))
        elif isinstance(item, PlanState):
            parts.append(_plan(item))
        elif isinstance(item, Notice):
            parts.append(_quote(item.detail or "", f"{item.severity}: {item.title}"))
    return "\n".join(part.rstrip("\n") + "\n" for part in parts if part.strip())


def record_markdown(store: RecordStore, record: ConversationRecord) -> str:
    """A recorded conversation as Markdown."""
    return session_markdown(
        recorded_state(store, record),
        title=record.title,
        agent=record.agent,
        workspace=record.workspace,
        created=record.created_at,
        updated=record.updated_at,
        earlier=store.earlier_sessions().get(record.id, ()),
    )


def export_path(directory: Path, title: str | None, session_id: str) -> Path:
    """A file name for an export in `directory`: the title as a slug, and the session id."""
    slug = re.sub(r"[^a-z0-9]+", "-", (title or "conversation").lower()).strip("-")[:50]
    safe_id = re.sub(r"[^A-Za-z0-9_.-]+", "-", session_id)[:40]
    return directory / f"{slug or 'conversation'}-{safe_id}.md"


# -- pieces -----------------------------------------------------------------------------------


def _blocks(blocks: list[ContentBlock]) -> str:
    out: list[str] = []
    for block in blocks:
        if block.type == "text" and isinstance(block.text, str):
            out.append(block.text)
        elif block.type == "resource_link" and isinstance(block.uri, str):
            out.append(f"\n[{block.name or block.uri}]({block.uri})\n")
        elif isinstance(block.resource, EmbeddedResource) and isinstance(block.resource.text, str):
            out.append(f"\n`{block.resource.uri}`:\n\n{_fence(block.resource.text)}\n")
        else:
            out.append(f"\n_[{block_label(block)}]_\n")
    return "".join(out).strip("\n") + "\n"


def _tool_call(call: ToolCallState, terminals: dict[str, TerminalState]) -> str:
    title = _one_line(call.title or call.name or call.id)
    lines = [f"**Tool call: {title}** ({call.kind}, {call.status})\n"]
    for location in call.locations:
        line = f":{location.line}" if isinstance(location.line, int) else ""
        lines.append(f"- `{location.path}{line}`")
    if call.locations:
        lines.append("")
    for content in call.content:
        lines.append(_tool_content(content, terminals))
    if not call.content and call.raw_output not in (None, "", {}):
        lines.append(_fence(_json(call.raw_output), "json"))
    return "\n".join(lines)


def _tool_content(content: ToolCallContent, terminals: dict[str, TerminalState]) -> str:
    if content.type == "content" and isinstance(content.content, ContentBlock):
        return _blocks([content.content])
    if content.type == "diff":
        if isinstance(content.patch, DiffPatch):
            return _fence(content.patch.text, "diff")
        if isinstance(content.path, str) and isinstance(content.new_text, str):
            old = content.old_text if isinstance(content.old_text, str) else ""
            diff = difflib.unified_diff(
                old.splitlines(keepends=True),
                content.new_text.splitlines(keepends=True),
                fromfile=f"a/{content.path}" if old else "/dev/null",
                tofile=f"b/{content.path}",
            )
            return _fence("".join(diff) or f"(no changes to {content.path})", "diff")
        if isinstance(content.changes, list):
            return "\n".join(f"- {c.operation} `{c.path}`" for c in content.changes) + "\n"
    if content.type == "terminal" and isinstance(content.terminal_id, str):
        terminal = terminals.get(content.terminal_id)
        if terminal is None:
            return f"_(terminal {content.terminal_id})_\n"
        output = _ANSI.sub("", bytes(terminal.output).decode("utf-8", errors="replace"))
        head = f"$ {terminal.command}\n" if terminal.command else ""
        status = ""
        if terminal.signal is not None:
            status = f"\n(killed by {terminal.signal})"
        elif terminal.exited:
            status = f"\n(exit status {terminal.exit_code})"
        return _fence(head + output.rstrip("\n") + status, "console")
    return f"_({content.type})_\n"


def _plan(plan: PlanState) -> str:
    if plan.text is not None and not plan.entries:
        return f"**Plan**\n\n{plan.text}\n"
    lines = ["**Plan**\n"]
    for entry in plan.entries:
        mark = _PLAN_MARKS.get(entry.status, "[ ]")
        lines.append(f"- {mark} {_one_line(entry.content)}")
    return "\n".join(lines) + "\n"


def _quote(text: str, label: str) -> str:
    body = [f"> **{label}**"]
    if text.strip():
        body.append(">")
        body += [f"> {line}".rstrip() for line in text.strip("\n").splitlines()]
    return "\n".join(body) + "\n"


def _fence(text: str, language: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text.rstrip(chr(10))}\n{ticks}\n"


def _first_prompt(state: SessionState) -> str | None:
    for item in state.timeline:
        if isinstance(item, Message) and item.role == "user" and typed_text(item.text).strip():
            return typed_text(item.text).strip()[:80]
    return None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _time(text: str | None) -> str | None:
    moment = parse_time(text)
    if moment is None:
        return text
    return datetime.strftime(moment.astimezone(), "%Y-%m-%d %H:%M")


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)
