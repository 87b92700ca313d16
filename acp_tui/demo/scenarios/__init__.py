"""What the demo agent does with a prompt: one small async function per scenario.

A prompt whose first word is a command (`/tour`, or just `tour`) runs that scenario with the
rest of the text as its argument; anything else gets a friendly default reply. Each scenario
drives a `Turn` and may return a stop reason (`None` means `end_turn`). Scenarios never build
protocol messages themselves: that is `Turn`'s job, so the same code serves v1 and v2.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from acp_tui.demo import texts
from acp_tui.demo.questions import ask, signin
from acp_tui.demo.scenarios.attachments import (
    THUMBNAIL,
    THUMBNAIL_URI,
    describe_attachments,
    image,
)
from acp_tui.demo.scenarios.endings import (
    CUSTOM_STOP_REASON,
    V1_STOP_REASONS,
    custom_stop,
    error,
    error_before_accepting,
    refuse,
    stop,
)
from acp_tui.demo.scenarios.feature_tour import tour
from acp_tui.demo.scenarios.files import (
    COMMENT,
    DEFAULT_EDIT_TARGET,
    MARKER,
    READ_LIMIT,
    edit,
    read,
)
from acp_tui.demo.scenarios.permissions import permission, switch
from acp_tui.demo.scenarios.session_info import providers, title, usage
from acp_tui.demo.scenarios.streaming import long, markdown, plan, slow, think
from acp_tui.demo.scenarios.terminals import BASH_COMMAND, DEFAULT_COMMAND, bash, run
from acp_tui.demo.scenarios.tool_calls import tools
from acp_tui.demo.turn import Turn
from acp_tui.demo.wire import available_commands
from acp_tui.protocol.jsonrpc import INVALID_PARAMS, RpcError

# Everything the single `scenarios` module defined, importable from here as before.
__all__ = [
    "ALIASES",
    "BASH_COMMAND",
    "COMMANDS",
    "COMMENT",
    "CUSTOM_STOP_REASON",
    "DEFAULT_COMMAND",
    "DEFAULT_EDIT_TARGET",
    "MARKER",
    "PLAIN_WITH_INPUT",
    "READ_LIMIT",
    "SCENARIOS",
    "THUMBNAIL",
    "THUMBNAIL_URI",
    "V1_STOP_REASONS",
    "Scenario",
    "auto_title",
    "bash",
    "custom_stop",
    "default",
    "edit",
    "error",
    "error_before_accepting",
    "help_",
    "image",
    "long",
    "markdown",
    "parse",
    "permission",
    "plan",
    "play",
    "providers",
    "read",
    "refuse",
    "run",
    "slow",
    "stop",
    "switch",
    "think",
    "title",
    "tools",
    "tour",
    "unknown",
    "usage",
]

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


CLIENT_CONTEXT = "[Context from acp-tui]"
"""How the text block starts that acp-tui puts before the user's prompt when a conversation
goes on in a new session after a rewind (a summary of the turns before): the command, and
what the session is called, are in the blocks after it."""


def _prompt_text(prompt: list[dict[str, Any]]) -> str:
    parts = [block.get("text") for block in prompt if block.get("type") == "text"]
    if not all(isinstance(part, str) for part in parts):
        raise RpcError(INVALID_PARAMS, "Invalid params: a text block's `text` must be a string")
    if len(parts) > 1 and parts[0].startswith(CLIENT_CONTEXT):
        del parts[0]
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


async def unknown(turn: Turn, arg: str) -> None:
    await turn.say(f"I don't know the command `{arg}`. Type `/help` to see what I can do.")


async def default(turn: Turn, arg: str) -> None:
    record = turn.record
    text = _prompt_text(turn.prompt)
    if record.model == "demo-smart":
        await turn.think(texts.SMART_THOUGHT)
    attachments = describe_attachments(turn.prompt)
    if record.mode == "code":
        await turn.say(texts.DEFAULT_REPLY_CODE.format(quote=text, attachments=attachments))
        return
    quote = "\n> ".join(text.splitlines()) if text else "_(no text)_"
    await turn.say(texts.DEFAULT_REPLY.format(quote=quote, attachments=attachments))


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
