"""Scenarios that run commands: `run` in the client's terminal (v1 `terminal/*`) or the
agent's own (v2), and `bash`, which the agent runs itself and shows as a live terminal.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from acp_tui.demo import shell, texts
from acp_tui.demo.scenarios.permissions import decide
from acp_tui.demo.turn import ALLOWING, Cancelled, Turn, new_id
from acp_tui.demo.wire import terminal_item, text_block
from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.text import fence

DEFAULT_COMMAND = "echo 'Hello from a real terminal!' && ls"
BASH_COMMAND = (
    "dir /b"
    if sys.platform == "win32"
    else 'for step in 1 2 3 4 5; do echo "step $step of 5"; sleep 0.2; done; ls'
)
"""What `bash` runs: harmless, about a second long, and its output comes in pieces."""


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
    choice = await decide(
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
