"""What the demo agent does with a prompt: one small async function per scenario.

A prompt whose first word is a command (`/tour`, or just `tour`) runs that scenario with the
rest of the text as its argument; anything else gets a friendly default reply. Each scenario
drives a `Turn` and may return a stop reason (`None` means `end_turn`). Scenarios never build
protocol messages themselves: that is `Turn`'s job, so the same code serves v1 and v2.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from acp_tui.demo import shell, texts
from acp_tui.demo.picture import HEIGHT, WIDTH, demo_png
from acp_tui.demo.questions import ask, signin
from acp_tui.demo.turn import ALL_OPTIONS, ALLOWING, Cancelled, ScenarioError, Turn, new_id
from acp_tui.demo.wire import (
    CONTEXT_SIZE,
    MODES,
    available_commands,
    blob_resource,
    diff_item,
    fence,
    image_block,
    terminal_chunk,
    terminal_item,
    terminal_transcript,
    terminal_update,
    text_block,
)
from acp_tui.protocol.images import ImageError, decode_data, inspect
from acp_tui.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError

Scenario = Callable[[Turn, str], Awaitable[str | None]]

# name, description, input hint: advertised with `available_commands_update`.
COMMANDS: list[tuple[str, str, str | None]] = [
    ("help", "List everything the demo agent can do", None),
    ("tour", "Every feature in one turn", None),
    ("markdown", "Stream rich Markdown: lists, a table, code blocks", None),
    ("think", "Think out loud (thought updates) before answering", None),
    ("plan", "Make a plan and work through it", None),
    ("tools", "One tool call of every kind, in every status", None),
    ("read", "Read a file from your workspace", "file path (default: README.md)"),
    ("edit", "Show a diff, ask permission, then really edit the file", "file path"),
    ("run", "Run a real command in a terminal", "command (default: echo and ls)"),
    ("bash", "Run a small command myself and stream its output live", None),
    ("permission", "A permission request with all four option kinds", None),
    ("ask", "Ask you questions in a form (elicitation)", None),
    ("signin", "Ask you to open a sign-in page (URL elicitation)", None),
    ("switch", "The agent switches the session mode itself, after asking", None),
    ("long", "Stream thousands of chunks, to test speed and cancel", "number of chunks"),
    ("slow", "A slow turn: cancel it and it stops at once", "seconds (default 30)"),
    ("image", "Describe the images you attach, and send one back", None),
    ("usage", "Report context usage and cost", None),
    ("providers", "Say where my (pretend) model requests go (providers/set)", None),
    ("title", "Set the session title", "the new title"),
    ("refuse", "End the turn with the refusal stop reason", None),
    ("stop", "End the turn with a stop reason of your choice", "max_tokens, refusal, _custom…"),
    ("custom-stop", "End the turn with a custom `_` stop reason (v2)", None),
    ("error", "Fail the prompt with a JSON-RPC error", None),
]
ALIASES = {"diff": "edit", "cat": "read", "exec": "run", "terminal": "run", "?": "help"}

THUMBNAIL = (24, 16)
THUMBNAIL_URI = "demo://pictures/rainbow-thumbnail.png"
DEFAULT_EDIT_TARGET = "ACP_DEMO.md"
DEFAULT_COMMAND = "echo 'Hello from a real terminal!' && ls"
BASH_COMMAND = (
    "dir /b"
    if sys.platform == "win32"
    else 'for step in 1 2 3 4 5; do echo "step $step of 5"; sleep 0.2; done; ls'
)
"""What `bash` runs: harmless, about a second long, and its output comes in pieces."""
READ_LIMIT = 200
CUSTOM_STOP_REASON = "_demo_custom_stop"
V1_STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal"}


PLAIN_WITH_INPUT = {"read", "title", "long", "slow", "stop"}
"""Commands that also take their input without the slash (`read README.md`). Others need the
slash when given input, so "help me with this" or "run the tests" are not taken as commands."""


def parse(prompt: list[dict[str, Any]]) -> tuple[str | None, str, str]:
    """(scenario name, its input, the prompt's whole text). The name is None for an ordinary
    prompt, and "unknown" for a slash command the demo does not have."""
    text = _prompt_text(prompt)
    word, rest = ([*text.split(None, 1), "", ""])[:2] if text else ("", "")
    rest = rest.strip()
    if word.startswith("/"):
        name = ALIASES.get(word[1:].lower(), word[1:].lower())
        return (name, rest, text) if name in SCENARIOS else ("unknown", word, text)
    name = ALIASES.get(word.lower(), word.lower())
    if name in SCENARIOS and (not rest or (name in PLAIN_WITH_INPUT and "\n" not in rest)):
        return name, rest, text
    return None, "", text


def _prompt_text(prompt: list[dict[str, Any]]) -> str:
    parts = [block.get("text") for block in prompt if block.get("type") == "text"]
    if not all(isinstance(part, str) for part in parts):
        raise RpcError(INVALID_PARAMS, "Invalid params: a text block's `text` must be a string")
    return "\n".join(parts).strip()


def auto_title(name: str | None, text: str) -> str:
    if name in SCENARIOS:
        return {"tour": "Tour of the ACP demo agent"}.get(name, f"Demo: {name}")
    title = " ".join(text.split())
    return (title[:47] + "…") if len(title) > 48 else (title or "Attachments")


# -- the scenarios ----------------------------------------------------------------------------


async def help_(turn: Turn, arg: str) -> None:
    await turn.update(
        {"sessionUpdate": "available_commands_update"}
        | {"availableCommands": available_commands(COMMANDS, turn.peer.version)}
    )
    rows = "".join(f"| `{name}` | {text} |\n" for name, text, _ in COMMANDS)
    await turn.say(texts.HELP_HEADER + rows + texts.HELP_FOOTER.format(version=turn.peer.version))


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
        await search.append(text_block(f"`{Path(path).name}:{line}`: `{snippet}`"))
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
    choice = await _decide(
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


async def run(turn: Turn, arg: str) -> None:
    command = arg or DEFAULT_COMMAND
    cwd = turn.record.cwd
    call = await turn.tool(
        f"Run `{command}`", "execute", raw_input={"command": command, "cwd": cwd}
    )
    if not turn.v2 and not turn.peer.terminal:
        await call.update(status="failed", content=[text_block(texts.NO_TERMINAL)])
        await turn.say(texts.NO_TERMINAL)
        return
    terminal_id = new_id("term")
    choice = await _decide(
        turn,
        call,
        "run",
        title=f"Run `{command}`?",
        description=f"The demo agent wants to run this command in {cwd}.",
        command={"command": command, "cwd": cwd, "terminalId": terminal_id},
    )
    if choice not in ALLOWING:
        await call.update(status="cancelled", content=[text_block("Rejected: not run.")])
        await turn.say("OK, I didn't run it.\n")
        return
    if turn.v2:
        item = await shell.run(turn, call, terminal_item(terminal_id, command, cwd))
    else:
        item = await _run_v1(turn, call, command)
    if item is None:
        return
    tail = "\n".join(item["output"].rstrip("\n").splitlines()[-8:])
    summary = _ending(item, f"`{command}`")
    if tail:
        summary += " The last lines:\n\n" + fence(tail, "console")
    await turn.say(summary + "\n")


def _ending(item: dict[str, Any], subject: str) -> str:
    if item["exitCode"] is not None:
        return f"{subject} exited with code **{item['exitCode']}**."
    return f"{subject} was stopped by **{item['signal'] or 'a signal'}**."


async def bash(turn: Turn, arg: str) -> None:
    """The agent runs a command itself, the way claude-agent-acp's Bash tool does, and shows
    it as a live terminal where the client can (see `shell`), else as text at the end."""
    cwd = turn.record.cwd
    await turn.say(texts.BASH_INTRO + (" " + texts.BASH_FIXED if arg else "") + "\n")
    item = terminal_item(new_id("term"), BASH_COMMAND, cwd)
    raw_input = {"command": BASH_COMMAND, "cwd": cwd}
    fields = shell.tool_fields(turn, item)
    # The title is the command, as Bash tools have it: clients show it as the terminal's.
    call = await turn.tool(BASH_COMMAND, "execute", raw_input=raw_input, **fields)
    await shell.run(turn, call, item)
    if turn.v2:
        how = texts.BASH_V2
    elif turn.peer.terminal_meta is not None:
        how = texts.BASH_META.format(key=turn.peer.terminal_meta)
    else:
        how = texts.BASH_TEXT
    await turn.say(f"{how} {_ending(item, 'It')}\n")


def _shell_argv(command: str) -> list[str]:
    if sys.platform == "win32":
        return ["cmd", "/c", command]
    return ["sh", "-c", command]


async def _run_v1(turn: Turn, call: Any, command: str) -> dict[str, Any] | None:
    """terminal/create → (embed it in the tool call) → terminal/output (the output so far) →
    terminal/wait_for_exit → terminal/output (all of it) → terminal/release."""
    session_id = turn.session.id
    cwd = turn.record.cwd
    argv = _shell_argv(command)
    try:
        created = await turn.client_request(
            "terminal/create",
            {"sessionId": session_id, "command": argv[0], "args": argv[1:]}
            | {"cwd": cwd, "outputByteLimit": 64 * 1024},
            cancellable=False,  # it answers at once, and a terminal we created must be released
        )
        terminal_id = created["terminalId"]
    except (RpcError, KeyError, TypeError) as exc:
        await call.update(status="failed", content=[text_block(f"terminal/create failed: {exc}")])
        await turn.say(f"The client could not start the command: {exc}\n")
        return None
    item = terminal_item(terminal_id, command, cwd)
    await call.update(status="in_progress", content=[item])
    ids = {"sessionId": session_id, "terminalId": terminal_id}
    cancelled = False
    exit_status: dict[str, Any] = {}
    try:
        # A first look while it runs (a long command would poll like this for progress)…
        await turn.client_request("terminal/output", ids)
        try:
            exit_status = await turn.client_request("terminal/wait_for_exit", ids) or {}
        except Cancelled:
            cancelled = True
            with contextlib.suppress(RpcError):
                await turn.client_request("terminal/kill", ids, cancellable=False)
        # …and all of it once it has exited (or been killed).
        output = await turn.client_request("terminal/output", ids, cancellable=False) or {}
    except RpcError as exc:
        if cancelled:  # the turn ends as cancelled, whatever the clean-up answered
            raise Cancelled from exc
        # The client's terminal failed: so does the tool call, not the whole prompt.
        await call.update(status="failed", content=[text_block(f"The terminal failed: {exc}")])
        await turn.say(f"The client's terminal failed: {exc}\n")
        return None
    finally:
        # The agent MUST release every terminal it created, whatever happened.
        with contextlib.suppress(RpcError):
            await turn.client_request("terminal/release", ids, cancellable=False)
    item["output"] = output.get("output", "")
    exit_status = output.get("exitStatus") or exit_status
    item["exitCode"] = exit_status.get("exitCode")
    item["signal"] = exit_status.get("signal")
    if cancelled:
        raise Cancelled
    status = "completed" if item["exitCode"] == 0 else "failed"
    await call.update(
        status=status,
        raw_output={"exitCode": item["exitCode"], "signal": item["signal"]}
        | {"truncated": bool(output.get("truncated"))},
    )
    return item


async def permission(turn: Turn, arg: str) -> None:
    await turn.say(texts.PERMISSION_INTRO + "\n")
    call = await turn.tool(
        "Install the `left-pad` package (simulated)",
        "execute",
        raw_input={"command": "pip install left-pad"},
    )
    remembered = turn.session.always.get("permission")
    if remembered:
        choice = remembered
        await turn.say(f"_You answered **{remembered.replace('_', ' ')}** earlier._\n\n")
    else:
        choice = await turn.ask_permission(
            call,
            title="Install the left-pad package?",
            description="Nothing is really installed: this request just shows the four options.",
        )
        if choice in ("allow_always", "reject_always"):
            turn.session.always["permission"] = choice
        await turn.say(
            texts.PERMISSION_RESULT.get(choice, "I didn't understand that answer.") + "\n"
        )
    if choice in ALLOWING:
        await call.update(status="in_progress")
        await turn.pause(0.5)
        await call.update(status="completed", content=[text_block("Installed (not really).")])
    else:
        await call.update(status="cancelled", content=[text_block("Not installed.")])


async def switch(turn: Turn, arg: str) -> None:
    record = turn.record
    target = "code" if record.mode == "ask" else "ask"
    label = dict((mode, name) for mode, name, _ in MODES)[target]
    call = await turn.tool(f"Switch to {label} mode", "switch_mode", raw_input={"mode": target})
    choice = await turn.ask_permission(
        call,
        title=f"Let the agent switch to {label} mode?",
        options=[option for option in ALL_OPTIONS if option["kind"].endswith("_once")],
    )
    if choice in ALLOWING:
        record.mode = target
        await turn.session.announce_config(mode_changed=True)
        await call.update(status="completed")
        await turn.say(texts.SWITCH_DONE.format(mode=label))
    else:
        await call.update(status="cancelled")
        await turn.say(texts.SWITCH_REJECTED.format(mode=record.mode))


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


async def usage(turn: Turn, arg: str) -> None:
    await turn.usage()
    record = turn.record
    await turn.say(
        texts.USAGE.format(
            used=record.tokens_used, size=CONTEXT_SIZE[record.model], cost=record.cost
        )
    )


async def providers(turn: Turn, arg: str) -> None:
    route = turn.peer.provider
    if route is None:
        await turn.say(texts.PROVIDER_OWN)
        return
    headers = ", ".join(f"`{name}`" for name in route["headers"]) or "none"
    await turn.say(
        texts.PROVIDER_SET.format(url=route["baseUrl"], api=route["apiType"], headers=headers)
    )


async def title(turn: Turn, arg: str) -> None:
    if not arg:
        await turn.say(texts.TITLE_MISSING)
        return
    await turn.set_title(arg)
    await turn.say(texts.TITLE_SET.format(title=arg))


async def refuse(turn: Turn, arg: str) -> str:
    await turn.say(texts.REFUSAL)
    return "refusal"


async def stop(turn: Turn, arg: str) -> str:
    reason = arg.split()[0] if arg else "max_tokens"
    if reason.startswith("_") and not turn.v2:
        return await custom_stop(turn, arg)
    if reason not in V1_STOP_REASONS and not reason.startswith("_"):
        await turn.say(
            f"`{reason}` is not a stop reason I can use. Try `max_tokens`, "
            "`max_turn_requests`, `refusal` or (in v2) anything starting with `_`."
        )
        return "end_turn"
    await turn.say(f"Stopping with `{reason}`.")
    return reason


async def custom_stop(turn: Turn, arg: str) -> str:
    reason = arg.split()[0] if arg.startswith("_") else CUSTOM_STOP_REASON
    if not turn.v2:
        await turn.say(texts.V1_CUSTOM_STOP)
        turn.response_meta = {"acp-tui.demo/stopReason": reason}
        return "end_turn"
    await turn.say(texts.CUSTOM_STOP.format(reason=reason))
    return reason


async def error(turn: Turn, arg: str) -> None:
    await turn.say(texts.ERROR_PREAMBLE)
    raise ScenarioError(
        INTERNAL_ERROR,
        "The demo agent failed on purpose (the `error` scenario)",
        {"scenario": "error", "hint": "This is what a failed prompt looks like."},
    )


def error_before_accepting() -> RpcError:
    """v2's `error` scenario: the prompt is refused before it is accepted (once accepted, a v2
    turn can only end with a stop reason)."""
    return RpcError(
        INTERNAL_ERROR,
        "The demo agent refused to accept this prompt on purpose (the `error` scenario)",
        {"scenario": "error", "hint": "In ACP v2 a prompt fails before it is accepted."},
    )


async def unknown(turn: Turn, arg: str) -> None:
    await turn.say(f"I don't know the command `{arg}`. Type `/help` to see what I can do.")


async def default(turn: Turn, arg: str) -> None:
    record = turn.record
    text = _prompt_text(turn.prompt)
    if record.model == "demo-smart":
        await turn.think(texts.SMART_THOUGHT)
    attachments = _describe_attachments(turn.prompt)
    if record.mode == "code":
        await turn.say(texts.DEFAULT_REPLY_CODE.format(quote=text, attachments=attachments))
        return
    quote = "\n> ".join(text.splitlines()) if text else "_(no text)_"
    await turn.say(texts.DEFAULT_REPLY.format(quote=quote, attachments=attachments))


async def tour(turn: Turn, arg: str) -> None:
    await turn.say(texts.TOUR_INTRO + "\n")
    steps: list[tuple[str, str, Callable[[], Awaitable[Any]]]] = [
        ("Say hello in Markdown", "high", lambda: turn.say(texts.MARKDOWN_SHORT)),
        ("Think out loud", "medium", lambda: think(turn, "")),
        ("Use a tool of every kind", "high", lambda: tools(turn, "")),
        ("Read a file", "medium", lambda: read(turn, "")),
        ("Edit a file, with permission", "high", lambda: edit(turn, "")),
        ("Run a command", "medium", lambda: run(turn, "")),
        ("Stream a burst of chunks", "low", lambda: long(turn, "300")),
        ("Report usage and set a title", "low", lambda: _usage_and_title(turn)),
    ]
    the_plan = await turn.plan([(content, priority) for content, priority, _ in steps])
    for index, (content, _, action) in enumerate(steps):
        await the_plan.set(index, "in_progress")
        await turn.say(f"\n### {index + 1}. {content}\n\n")
        await action()
        await the_plan.set(index, "completed")
    await turn.say("\n" + texts.TOUR_OUTRO)


async def image(turn: Turn, arg: str) -> None:
    """Say what the prompt's images are (read from their bytes), then draw one and send it: a
    thumbnail in a tool call's output (an embedded resource), the picture in a message."""
    if any(block.get("type") == "image" for block in turn.prompt):
        await turn.say(_describe_attachments(turn.prompt))
    else:
        await turn.say(texts.IMAGE_NONE_SENT)
    data = demo_png()
    call = await turn.tool("Draw a picture", "other", raw_input={"width": WIDTH, "height": HEIGHT})
    await turn.pause(0.3)
    thumbnail = blob_resource(THUMBNAIL_URI, demo_png(*THUMBNAIL), "image/png")
    await call.update(status="completed", content=[thumbnail])
    info = inspect(data)
    await turn.say(texts.IMAGE_DRAWN.format(pixels=info.pixels, size=info.size))
    await turn.show(image_block(data, "image/png"))


def _describe_image(block: dict[str, Any]) -> str:
    name = unquote(str(block.get("uri") or "").rsplit("/", 1)[-1]) or "an image"
    try:
        data = decode_data(block.get("data") if isinstance(block.get("data"), str) else "")
        info = inspect(data)
    except ImageError as error:
        return f"- ▣ **{name}** (`{block.get('mimeType')}`): I could not read it ({error})"
    kind = info.mime_type.removeprefix("image/").upper()
    said = (
        f" (you said `{block.get('mimeType')}`)" if block.get("mimeType") != info.mime_type else ""
    )
    return f"- ▣ **{name}**: a {kind} image{said}, **{info.pixels}** pixels, {info.size:,} bytes"


async def _usage_and_title(turn: Turn) -> None:
    await usage(turn, "")
    await turn.set_title("Tour of the ACP demo agent")
    await turn.say("\n" + texts.TITLE_SET.format(title="Tour of the ACP demo agent"))


SCENARIOS: dict[str, Scenario] = {
    "help": help_,
    "tour": tour,
    "markdown": markdown,
    "think": think,
    "plan": plan,
    "tools": tools,
    "read": read,
    "edit": edit,
    "run": run,
    "bash": bash,
    "permission": permission,
    "ask": ask,
    "signin": signin,
    "switch": switch,
    "long": long,
    "slow": slow,
    "image": image,
    "usage": usage,
    "providers": providers,
    "title": title,
    "refuse": refuse,
    "stop": stop,
    "custom-stop": custom_stop,
    "error": error,
}


async def play(turn: Turn, name: str | None, arg: str) -> str | None:
    """Run scenario `name` (None: the default reply; "unknown": an unknown slash command)."""
    if name == "unknown":
        return await unknown(turn, arg)
    if name is None and any(block.get("type") == "image" for block in turn.prompt):
        name = "image"
    scenario = SCENARIOS.get(name or "", default)
    return await scenario(turn, arg)


# -- helpers ----------------------------------------------------------------------------------


async def _decide(turn: Turn, call: Any, action: str, **ask: Any) -> str:
    """Whether `action` may go ahead: a remembered "always" answer, code mode (which does not
    ask), or the user's answer to a permission request."""
    remembered = turn.session.always.get(action)
    if remembered:
        await turn.say(f"_(You chose **{remembered.replace('_', ' ')}** earlier.)_\n\n")
        return remembered
    if turn.record.mode == "code":
        await turn.say("_Code mode: going ahead without asking._\n\n")
        return "allow_once"
    if not turn.v2:
        ask.pop("command", None)
    choice = await turn.ask_permission(call, **ask)
    if choice in ("allow_always", "reject_always"):
        turn.session.always[action] = choice
    return choice


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


def _number(arg: str, default: int, low: int, high: int) -> int:
    try:
        return max(low, min(high, int(arg.split()[0])))
    except (ValueError, IndexError):
        return default


def _describe_attachments(prompt: list[dict[str, Any]]) -> str:
    lines = []
    for block in prompt:
        kind = block.get("type")
        if kind == "text":
            continue
        if kind == "resource_link":
            lines.append(f"- 🔗 **{block.get('name')}** (`{block.get('uri')}`)")
        elif kind == "resource":
            resource = block.get("resource") or {}
            uri = resource.get("uri", "?")
            if "text" in resource:
                count = resource["text"].count("\n") + 1
                lines.append(f"- 📄 `{uri}`: {count} lines of text")
            else:
                size = len(resource.get("blob", "")) * 3 // 4
                lines.append(f"- 📦 `{uri}`: about {size:,} bytes")
        elif kind == "image":
            lines.append(_describe_image(block))
        elif kind == "audio":
            size = len(block.get("data", "")) * 3 // 4
            lines.append(f"- 🔊 an audio clip ({block.get('mimeType')}, about {size:,} bytes)")
        else:
            lines.append(f"- a `{kind}` block I don't know")
    if not lines:
        return ""
    return texts.ATTACHMENTS_HEADER + "\n".join(lines) + "\n\n"
