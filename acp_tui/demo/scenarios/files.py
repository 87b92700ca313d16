"""Scenarios on the user's files: `read` one, and `edit` one after asking (v1 through the
client's `fs/*` methods, v2 by the agent itself, inside the session's roots).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from acp_tui.demo import texts
from acp_tui.demo.scenarios.permissions import decide
from acp_tui.demo.turn import ALLOWING, Turn
from acp_tui.demo.wire import diff_item, text_block
from acp_tui.protocol.jsonrpc import RESOURCE_NOT_FOUND, RpcError
from acp_tui.text import fence

DEFAULT_EDIT_TARGET = "ACP_DEMO.md"
READ_LIMIT = 200


async def read(turn: Turn, arg: str) -> None:
    session = turn.session
    target = arg or _default_read_target(Path(turn.record.cwd))
    if target is None:
        await turn.say("Which file? Try `/read README.md`.")
        return
    path = _resolve(turn, target)
    if path is None:
        await turn.say(texts.OUTSIDE_ROOTS.format(path=target))
        return
    name = _display(turn, path)
    call = await turn.tool(
        f"Read {name}",
        "read",
        locations=[{"path": str(path), "line": 1}],
        raw_input={"path": str(path), "line": 1, "limit": READ_LIMIT},
    )
    if not turn.v2 and not turn.peer.fs_read:
        await call.update(status="failed", content=[text_block(texts.NO_FS_READ)])
        await turn.say(texts.NO_FS_READ)
        return
    await call.update(status="in_progress")
    try:
        if turn.v2:
            # v2 has no `fs/*` methods: the agent reads the file itself, inside the workspace.
            text = _read_local(path, READ_LIMIT)
        else:
            result = await turn.client_request(
                "fs/read_text_file",
                {"sessionId": session.id, "path": str(path), "line": 1, "limit": READ_LIMIT},
            )
            text = result["content"]
    except (RpcError, OSError, UnicodeDecodeError, KeyError, TypeError) as exc:
        reason = exc.message if isinstance(exc, RpcError) else str(exc)
        await call.update(status="failed", content=[text_block(f"Could not read it: {reason}")])
        await turn.say(f"I couldn't read `{name}`: {reason}")
        return
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    await call.update(
        status="completed",
        content=[text_block(fence(text.rstrip("\n"), _language(path)))],
        raw_output={"lines": lines, "characters": len(text)},
    )
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    summary = f"I read **{lines}** lines of `{name}`"
    summary += f" (at most {READ_LIMIT})." if lines >= READ_LIMIT else "."
    if first:
        summary += f" It starts with: `{first[:80]}`"
    await turn.say(summary + "\n")


async def edit(turn: Turn, arg: str) -> None:
    session = turn.session
    target = arg or DEFAULT_EDIT_TARGET
    path = _resolve(turn, target)
    if path is None:
        await turn.say(texts.OUTSIDE_ROOTS.format(path=target))
        return
    name = _display(turn, path)
    try:
        old = await _current_text(turn, path)
    except (RpcError, OSError, UnicodeDecodeError) as exc:
        await turn.say(f"I can't edit `{name}`: {exc}")
        return
    new = _edited(path, old)
    diff = diff_item("add" if old is None else "modify", str(path), old, new)
    changed_line = 1 if old is None else old.count("\n") + 1
    call = await turn.tool(
        f"Edit {name}",
        "edit",
        content=[diff],
        locations=[{"path": str(path), "line": changed_line}],
        raw_input={"path": str(path), "content": new},
    )
    if not turn.v2 and not turn.peer.fs_write:
        await call.update(status="failed", content=[diff, text_block(texts.NO_FS_WRITE)])
        await turn.say(texts.NO_FS_WRITE)
        return
    choice = await decide(
        turn,
        call,
        "edit",
        title=f"Allow the demo agent to {'create' if old is None else 'edit'} {name}?",
        description="The diff shows the change. Nothing is written unless you allow it.",
    )
    if choice not in ALLOWING:
        await call.update(status="cancelled", content=[diff, text_block("Rejected: not written.")])
        await turn.say(f"OK, I left `{name}` alone: nothing was written.\n")
        return
    await call.update(status="in_progress")
    try:
        if turn.v2:
            # v2 has no `fs/write_text_file`: the agent writes itself, inside the workspace.
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(new, encoding="utf-8")
        else:
            # Not cut short by a cancel: once sent, the write happens, and is reported.
            await turn.client_request(
                "fs/write_text_file",
                {"sessionId": session.id, "path": str(path), "content": new},
                cancellable=False,
            )
    except (RpcError, OSError) as exc:
        await call.update(status="failed", content=[diff, text_block(f"Write failed: {exc}")])
        await turn.say(f"Writing `{name}` failed: {exc}\n")
        return
    await call.update(status="completed", raw_output={"written": len(new.encode())})
    await turn.say(f"Done: `{name}` {'created' if old is None else 'updated'}.\n")


# -- helpers ----------------------------------------------------------------------------------


def _resolve(turn: Turn, target: str) -> Path | None:
    """`target` as an absolute path inside the session's roots, or None if it is outside."""
    path = Path(os.path.expanduser(target))
    if not path.is_absolute():
        path = Path(turn.record.cwd) / path
    path = Path(os.path.normpath(path))
    real = path.resolve()
    for root in turn.session.roots:
        if real.is_relative_to(root.resolve()):
            return path
    return None


def _display(turn: Turn, path: Path) -> str:
    try:
        return str(path.relative_to(turn.record.cwd))
    except ValueError:
        return str(path)


def _default_read_target(cwd: Path) -> str | None:
    for name in ("README.md", "README.rst", "README.txt", "README", "pyproject.toml"):
        if (cwd / name).is_file():
            return name
    with contextlib.suppress(OSError):
        for path in sorted(cwd.iterdir()):
            if path.is_file() and path.suffix in {".md", ".txt", ".py", ".toml", ".json"}:
                return path.name
    return None


def _read_local(path: Path, limit: int) -> str:
    with path.open(encoding="utf-8") as file:
        return "".join(line for _, line in zip(range(limit), file, strict=False))


async def _current_text(turn: Turn, path: Path) -> str | None:
    """The file's text before the edit, None if it does not exist yet. In v1 the client's view
    (it may hold unsaved changes) comes through `fs/read_text_file` when offered."""
    if not turn.v2 and turn.peer.fs_read:
        try:
            result = await turn.client_request(
                "fs/read_text_file", {"sessionId": turn.session.id, "path": str(path)}
            )
            return result["content"]
        except RpcError as exc:
            if exc.code == RESOURCE_NOT_FOUND or not path.exists():
                return None
            raise
    if not path.exists():
        return None
    return path.read_text(encoding="utf-8")


MARKER = "Edited by the ACP demo agent"
COMMENT = {".py": "# ", ".sh": "# ", ".toml": "# ", ".yaml": "# ", ".yml": "# ", ".rs": "// "}
COMMENT |= {".js": "// ", ".ts": "// ", ".go": "// ", ".c": "// ", ".java": "// "}


def _edited(path: Path, old: str | None) -> str:
    if old is None:
        if path.suffix == ".py":
            return '"""Created by the ACP demo agent."""\n\nprint("hello from ACP")\n'
        return texts.EDIT_NEW_FILE
    count = old.count(MARKER) + 1
    if path.suffix in (".md", ".markdown", ".html"):
        line = f"<!-- {MARKER} (edit {count}). -->"
    else:
        line = f"{COMMENT.get(path.suffix, '')}{MARKER} (edit {count})."
    separator = "" if not old or old.endswith("\n") else "\n"
    return f"{old}{separator}{line}\n"


def _language(path: Path) -> str:
    return {".py": "python", ".md": "markdown", ".toml": "toml", ".json": "json"}.get(
        path.suffix, ""
    )
