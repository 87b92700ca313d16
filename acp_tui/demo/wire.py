"""The exact JSON shapes the demo agent puts on the wire, for ACP v1 and for the v2 draft.

Scenarios describe what happens in a protocol-neutral way (a text item, a file diff, a terminal);
the functions here turn that into what each version's schema asks for. Field names follow
`schema/v1/schema.json` and `schema/v2/schema.json`; where the two differ, the difference is
spelled out next to the code.
"""

from __future__ import annotations

import base64
from typing import Any

from acp_tui.text import fence, git_style_diff

# -- session configuration --------------------------------------------------------------------

MODES = [
    ("ask", "Ask", "Ask before changing files or running commands"),
    ("code", "Code", "Terse, code-first answers; edits and commands without asking"),
]
MODELS = [
    ("demo-fast", "Demo Fast", "Quick replies in big chunks"),
    ("demo-smart", "Demo Smart", "Slower replies that think first"),
]
CONTEXT_SIZE = {"demo-fast": 128_000, "demo-smart": 200_000}
PRICE_PER_1K_TOKENS = {"demo-fast": 0.0005, "demo-smart": 0.003}


def config_options(
    mode: str, model: str, show_thoughts: bool, *, version: int, boolean_ok: bool
) -> list[dict[str, Any]]:
    """The complete `configOptions` list, as every result and `config_option_update` carries it.

    v1 names the option's identifier `id`; v2 renames it `configId`. A v1 agent may only send a
    `boolean` option if the client advertised `session.configOptions.boolean`; otherwise the
    spec suggests a `select` fallback, which is what "on"/"off" is. v2 needs no capability.
    """
    key = "configId" if version >= 2 else "id"

    def select(values: list[tuple[str, str, str]]) -> list[dict[str, str]]:
        return [{"value": value, "name": name, "description": text} for value, name, text in values]

    options: list[dict[str, Any]] = [
        {
            key: "mode",
            "name": "Mode",
            "description": "How the demo agent works: asking first, or straight to code",
            "category": "mode",
            "type": "select",
            "currentValue": mode,
            "options": select(MODES),
        },
        {
            key: "model",
            "name": "Model",
            "description": "Which pretend model answers",
            "category": "model",
            "type": "select",
            "currentValue": model,
            "options": select(MODELS),
        },
    ]
    thoughts: dict[str, Any] = {
        key: "show_thoughts",
        "name": "Show thoughts",
        "description": "Send the agent's reasoning as thought updates",
    }
    if version >= 2 or boolean_ok:
        thoughts |= {"type": "boolean", "currentValue": show_thoughts}
    else:
        thoughts |= {
            "type": "select",
            "currentValue": "on" if show_thoughts else "off",
            "options": [{"value": "on", "name": "On"}, {"value": "off", "name": "Off"}],
        }
    options.append(thoughts)
    return options


def mode_state(mode: str) -> dict[str, Any]:
    """v1 `SessionModeState`. Modes are gone in v2 (they are the `mode` config option there)."""
    return {
        "currentModeId": mode,
        "availableModes": [
            {"id": value, "name": name, "description": text} for value, name, text in MODES
        ],
    }


def available_commands(commands: list[tuple[str, str, str | None]], version: int) -> list[dict]:
    """`availableCommands`: v2 tags the input spec with `type: "text"`; v1 has no tag."""
    result = []
    for name, description, hint in commands:
        command: dict[str, Any] = {"name": name, "description": description}
        if hint:
            command["input"] = {"type": "text", "hint": hint} if version >= 2 else {"hint": hint}
        result.append(command)
    return result


# -- content ----------------------------------------------------------------------------------

KNOWN_BLOCKS = {"text", "image", "audio", "resource_link", "resource"}


def content_block_for(block: dict[str, Any], version: int) -> dict[str, Any] | None:
    """A stored prompt block, made fit to replay over `version` (None: cannot be shown there).

    v2 content blocks are open (custom `type`s) and `resource_link` gained `icons`; v1 has
    neither, and agents must not add unknown root fields.
    """
    if version >= 2:
        return block
    if block.get("type") not in KNOWN_BLOCKS:
        return None
    if block.get("type") == "resource_link" and "icons" in block:
        block = {key: value for key, value in block.items() if key != "icons"}
    return block


def text_block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def image_block(data: bytes, mime_type: str) -> dict[str, str]:
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}


def blob_resource(uri: str, data: bytes, mime_type: str) -> dict[str, Any]:
    """An embedded `resource` block holding bytes (an image, say)."""
    blob = base64.b64encode(data).decode("ascii")
    return {"type": "resource", "resource": {"uri": uri, "blob": blob, "mimeType": mime_type}}


# Tool-call content, neutral form: a `text_block`, an `image_block` or a `blob_resource`,
# {"type": "diff",
# "operation", "path", "oldPath"?, "oldText", "newText"} and {"type": "terminal", "terminalId",
# "command", "cwd", "output", "exitCode", "signal"} (the output is a snapshot kept for replay).


def diff_item(
    operation: str, path: str, old_text: str | None, new_text: str, old_path: str | None = None
) -> dict[str, Any]:
    item = {"type": "diff", "operation": operation, "path": path}
    item |= {"oldText": old_text, "newText": new_text}
    if old_path is not None:
        item["oldPath"] = old_path
    return item


def terminal_item(terminal_id: str, command: str, cwd: str) -> dict[str, Any]:
    return {
        "type": "terminal",
        "terminalId": terminal_id,
        "command": command,
        "cwd": cwd,
        "output": "",
        "exitCode": None,
        "signal": None,
    }


def tool_content(item: dict[str, Any], version: int, *, replay: bool = False) -> dict[str, Any]:
    """One neutral tool-call content item as a `ToolCallContent` of `version`."""
    kind = item["type"]
    if kind == "diff":
        return _diff_v2(item) if version >= 2 else _diff_v1(item)
    if kind == "terminal":
        if replay and version < 2:
            # A v1 terminal belongs to the client and is released at the end of the turn: a
            # replay cannot point at it any more, so it shows the output it had instead.
            return {"type": "content", "content": text_block(terminal_transcript(item))}
        return {"type": "terminal", "terminalId": item["terminalId"]}
    if kind in ("image", "resource"):
        return {"type": "content", "content": item}
    return {"type": "content", "content": text_block(item["text"])}


def terminal_update(
    item: dict[str, Any], *, output: bytes | None = None, exit_only: bool = False
) -> dict[str, Any]:
    """A v2 `terminal_update` for a display terminal: its command and cwd (unless `exit_only`),
    `output` if given (a snapshot: it replaces what the chunks built up), and the exit status
    once known."""
    update: dict[str, Any] = {"sessionUpdate": "terminal_update", "terminalId": item["terminalId"]}
    if not exit_only:
        update |= {"command": item["command"], "cwd": item["cwd"]}
    if output is not None:
        update["output"] = {"data": base64.b64encode(output).decode("ascii")}
    if item.get("exitCode") is not None or item.get("signal"):
        update["exitStatus"] = {"exitCode": item.get("exitCode"), "signal": item.get("signal")}
    return update


def terminal_chunk(item: dict[str, Any], data: bytes) -> dict[str, Any]:
    """A v2 `terminal_output_chunk`: bytes to append, base64-encoded."""
    encoded = base64.b64encode(data).decode("ascii")
    return {"sessionUpdate": "terminal_output_chunk", "terminalId": item["terminalId"]} | {
        "data": encoded
    }


# A v1 agent that runs a command itself can still show it as a terminal, to a client that
# advertises `clientCapabilities._meta.terminal_output` (or `terminal_output_delta`): tool call
# `_meta` names it (`terminal_info`), carries output to append and, last, the exit status. This
# is claude-agent-acp's Bash tool, and Zed's; not in the schema, which lets `_meta` hold anything.
TERMINAL_META_KEYS = ("terminal_output_delta", "terminal_output")
"""The client capabilities (`_meta` keys) for it, the one to use first if both are offered."""


def terminal_info_meta(item: dict[str, Any]) -> dict[str, Any]:
    return {"terminal_info": {"terminal_id": item["terminalId"], "cwd": item["cwd"]}}


def terminal_output_meta(item: dict[str, Any], key: str, data: str) -> dict[str, Any]:
    return {key: {"terminal_id": item["terminalId"], "data": data}}


def terminal_exit_meta(item: dict[str, Any]) -> dict[str, Any]:
    exit_status = {"exit_code": item.get("exitCode"), "signal": item.get("signal")}
    return {"terminal_exit": {"terminal_id": item["terminalId"]} | exit_status}


def terminal_transcript(item: dict[str, Any]) -> str:
    status = f"exit code {item['exitCode']}" if item.get("exitCode") is not None else "no exit code"
    if item.get("signal"):
        status = f"killed by {item['signal']}"
    return fence(f"$ {item['command']}\n{item.get('output', '')}".rstrip("\n"), "console") + (
        f"\n\n({status})"
    )


def _diff_v1(item: dict[str, Any]) -> dict[str, Any]:
    """v1 `Diff`: one path with `oldText` (null for a new file) and `newText`."""
    operation = item["operation"]
    if operation == "move":
        # v1 cannot express a rename: show it in words.
        moved = f"Moved `{item['oldPath']}` to `{item['path']}`."
        return {"type": "content", "content": text_block(moved)}
    new_text = "" if operation == "delete" else item["newText"]
    old_text = None if operation == "add" else item["oldText"]
    return {"type": "diff", "path": item["path"], "oldText": old_text, "newText": new_text}


def _diff_v2(item: dict[str, Any]) -> dict[str, Any]:
    """v2 `Diff`: structured `changes` plus a renderable `git_patch`."""
    operation = item["operation"]
    change: dict[str, Any] = {"operation": operation, "path": item["path"], "fileType": "text"}
    if operation in ("move", "copy"):
        change["oldPath"] = item["oldPath"]
    patch = git_patch(
        operation, item["path"], item.get("oldText"), item.get("newText"), item.get("oldPath")
    )
    return {"type": "diff", "changes": [change], "patch": {"format": "git_patch", "text": patch}}


def git_patch(
    operation: str,
    path: str,
    old_text: str | None,
    new_text: str | None,
    old_path: str | None = None,
) -> str:
    """One `diff --git` section, with absolute paths as ACP v2 requires."""
    source = old_path or path
    header = [f"diff --git {source} {path}"]
    if operation == "add":
        header.append("new file mode 100644")
    elif operation == "delete":
        header.append("deleted file mode 100644")
    elif operation == "move":
        header += ["similarity index 100%", f"rename from {source}", f"rename to {path}"]
    before = "" if operation == "add" else (old_text or "")
    after = "" if operation == "delete" else (new_text or "")
    if before == after:
        return "\n".join(header) + "\n"
    from_name = "/dev/null" if operation == "add" else source
    to_name = "/dev/null" if operation == "delete" else path
    return "\n".join(header) + "\n" + git_style_diff(before, after, from_name, to_name)


# -- plans and tool calls ---------------------------------------------------------------------


def plan_update(plan_id: str, entries: list[dict[str, str]], version: int) -> dict[str, Any]:
    """v1 `plan` replaces the session's only plan; v2 `plan_update` replaces the plan `planId`.
    v2 entries may be `cancelled`; v1 has no such status, so those show as `pending`."""
    if version >= 2:
        return {
            "sessionUpdate": "plan_update",
            "plan": {"type": "items", "planId": plan_id, "entries": entries},
        }
    v1_entries = [
        entry | {"status": "pending"} if entry["status"] not in V1_PLAN_STATUSES else entry
        for entry in entries
    ]
    return {"sessionUpdate": "plan", "entries": v1_entries}


V1_PLAN_STATUSES = {"pending", "in_progress", "completed"}
V1_TOOL_STATUSES = {"pending", "in_progress", "completed", "failed"}


def tool_status(status: str, version: int) -> str:
    """v2 adds `cancelled`; over v1 a cancelled or rejected tool call is `failed`."""
    return status if version >= 2 or status in V1_TOOL_STATUSES else "failed"


TOOL_FIELDS = {
    "title": "title",
    "kind": "kind",
    "status": "status",
    "content": "content",
    "locations": "locations",
    "raw_input": "rawInput",
    "raw_output": "rawOutput",
}


def tool_fields(fields: dict[str, Any], version: int, *, replay: bool = False) -> dict[str, Any]:
    """Neutral tool-call fields (snake_case keys) as the wire's camelCase fields."""
    wire: dict[str, Any] = {}
    for name, value in fields.items():
        if name == "status" and value is not None:
            value = tool_status(value, version)
        elif name == "content" and value is not None:
            value = [tool_content(item, version, replay=replay) for item in value]
        wire[TOOL_FIELDS[name]] = value
    return wire
