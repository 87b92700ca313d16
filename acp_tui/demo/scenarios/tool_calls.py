"""The `tools` scenario: one tool call of every kind, in every status, none of it real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_tui.demo import texts
from acp_tui.demo.turn import Turn, new_id
from acp_tui.demo.wire import (
    diff_item,
    fence,
    terminal_chunk,
    terminal_item,
    terminal_transcript,
    terminal_update,
    text_block,
)


async def tools(turn: Turn, arg: str) -> None:
    cwd = Path(turn.record.cwd)
    await turn.say(texts.TOOLS_INTRO + "\n")

    async def run(call: Any, *, status: str = "completed", **fields: Any) -> None:
        await turn.pause(0.3)
        await call.update(status="in_progress")
        await turn.pause(0.4)
        await call.update(status=status, **fields)

    app = str(cwd / "src" / "app.py")
    config = str(cwd / "config.toml")
    read = await turn.tool(
        "Read config.toml",
        "read",
        locations=[{"path": config, "line": 1}],
        raw_input={"path": config},
    )
    toml = '[server]\nhost = "127.0.0.1"\nport = 8080\n'
    await run(read, content=[text_block(fence(toml, "toml"))], raw_output={"lines": 3})

    search = await turn.tool(
        "Search for `port`", "search", raw_input={"pattern": "port", "path": str(cwd)}
    )
    await turn.pause(0.3)
    await search.update(status="in_progress")
    matches = [(config, 3, "port = 8080"), (app, 12, "app.run(port=config.port)")]
    for path, line, snippet in matches:
        await turn.pause(0.3)
        # As a search tool prints its matches, and real agents pass them on: plain text.
        await search.append(text_block(f"{Path(path).name}:{line}: {snippet}"))
    await search.update(
        status="completed",
        locations=[{"path": path, "line": line} for path, line, _ in matches],
        raw_output={"matches": len(matches)},
    )

    old = 'def greet(name):\n    print("Hello " + name)\n'
    new = 'def greet(name: str) -> None:\n    print(f"Hello {name}")\n'
    edit = await turn.tool(
        "Edit src/app.py (preview only)",
        "edit",
        content=[diff_item("modify", app, old, new)],
        locations=[{"path": app, "line": 1}],
        raw_input={"path": app, "oldText": old, "newText": new},
    )
    await run(edit)

    old_log = str(cwd / "debug.log")
    delete = await turn.tool(
        "Delete debug.log", "delete", raw_input={"path": old_log}, locations=[{"path": old_log}]
    )
    await run(
        delete,
        status="cancelled",  # v1 has no `cancelled`: it shows as `failed` there
        content=[
            diff_item("delete", old_log, "DEBUG starting\nDEBUG done\n", ""),
            text_block("Skipped: the demo agent never deletes files."),
        ],
    )

    moved_from, moved_to = str(cwd / "utils.py"), str(cwd / "src" / "utils.py")
    move = await turn.tool(
        "Move utils.py to src/",
        "move",
        raw_input={"from": moved_from, "to": moved_to},
        locations=[{"path": moved_to}],
    )
    body = "def helper():\n    return 42\n"
    await run(move, content=[diff_item("move", moved_to, body, body, old_path=moved_from)])

    await _simulated_command(
        turn, "pytest -q", "..........                      [100%]\n10 passed\n"
    )

    thinker = await turn.tool("Think about edge cases", "think")
    await turn.pause(0.3)
    await thinker.update(status="in_progress")
    for idea in ("What if the port is taken?", "What if the config file is missing?"):
        await turn.pause(0.3)
        await thinker.append(text_block(idea))
    await thinker.update(status="completed")

    url = "https://example.com/docs"
    fetch = await turn.tool(f"Fetch {url}", "fetch", raw_input={"url": url})
    await run(
        fetch,
        status="failed",
        content=[text_block("The demo agent works offline: the network is off limits.")],
        raw_output={"error": "network disabled in the demo"},
    )

    other = await turn.tool("Tidy up", "other", raw_input={"what": "nothing, really"})
    await run(other, content=[text_block("All tidy.")])
    await turn.say("\n" + texts.TOOLS_OUTRO)


async def _simulated_command(turn: Turn, command: str, output: str) -> None:
    """An `execute` tool call with made-up output: a display terminal in v2 (bytes streamed as
    base64 `terminal_output_chunk`s), text in v1 (a v1 terminal needs the client to run it)."""
    call = await turn.tool(
        f"Run `{command}` (simulated)", "execute", raw_input={"command": command}
    )
    await turn.pause(0.3)
    item = terminal_item(new_id("term"), command, turn.record.cwd)
    if turn.v2:
        await call.update(status="in_progress", content=[item])
        await turn.update(terminal_update(item))
        for line in output.splitlines(keepends=True):
            await turn.pause(0.3)
            await turn.update(terminal_chunk(item, line.encode()))
            item["output"] += line
        item["exitCode"] = 0
        await turn.update(terminal_update(item, exit_only=True))
        await call.update(status="completed", raw_output={"exitCode": 0})
    else:
        await call.update(status="in_progress")
        await turn.pause(0.5)
        item["output"], item["exitCode"] = output, 0
        await call.update(
            status="completed",
            content=[text_block(terminal_transcript(item))],
            raw_output={"exitCode": 0},
        )
