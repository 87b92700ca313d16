"""The words the demo agent says. Kept apart from the protocol code so the logic stays short.

Everything here is Markdown: clients render it, and it exercises their renderer (headings,
emphasis, lists, task lists, tables, block quotes, links and fenced code in several languages).
"""

from __future__ import annotations

MARKDOWN_SHOWCASE = """\
# Markdown, streamed

This answer arrives in **small chunks**, the way a language model streams tokens. \
It uses *every* common element, so a client can check that it renders them all.

## Lists

1. An ordered list
2. With a nested list:
   - first bullet
   - second bullet, with `inline code`
3. And a third item

- [x] a finished task
- [ ] a task still open

## A table

| Update                | v1 name               | v2 name                   |
| :-------------------- | :-------------------- | :------------------------ |
| agent text            | `agent_message_chunk` | `agent_message_chunk`     |
| plan                  | `plan`                | `plan_update`             |
| new tool call         | `tool_call`           | `tool_call_update`        |
| turn finished         | prompt response       | `state_update` (idle)     |

## Code

```python
async def prompt(session_id: str, text: str) -> str:
    \"\"\"Send one prompt and wait for the turn to end.\"\"\"
    result = await connection.request(
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
    )
    return result["stopReason"]
```

```json
{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "sess_1"}}
```

```bash
$ python -m acp_tui.demo --speed 0   # the demo agent, no delays
```

> **Tip:** every message this agent sends validates against the official ACP schema,
> so it doubles as a reference for agent authors.

---

That's all the Markdown there is. See the [ACP spec](https://agentclientprotocol.com) for more.
"""

MARKDOWN_SHORT = """\
## Hello from the demo agent 👋

I'm a **real ACP agent** with no model behind me: I answer from a small script, so this \
tour works offline, with no API keys. Here is what a client has to render:

- **streamed Markdown** like this, with `inline code` and [links](https://agentclientprotocol.com)
- *thoughts*, a **plan**, and **tool calls** of every kind
- permission prompts, file reads and edits, and a real terminal

| Feature     | Shown in step |
| ----------- | ------------- |
| Thoughts    | 2             |
| Tool calls  | 3             |
| Permission  | 5             |

```python
print("every message I send validates against the ACP schema")
```
"""

THOUGHT = """\
The user asked to see my reasoning. A real agent would think about the codebase here; \
I'll think about what a client must do with thoughts instead: render them dimmed or \
collapsible, keep them apart from the answer, and never mix them into the reply text. \
Thoughts stream in chunks just like messages, each chunk carrying the same messageId.\
"""

AFTER_THOUGHT = """\
That grey text above was my **thought process** (`agent_thought_chunk` updates). \
Clients usually show it dimmed or folded away. You can hide it with the \
*Show thoughts* option.
"""

THOUGHTS_HIDDEN = """\
My thoughts are **hidden** because the *Show thoughts* option is off, so I sent no \
`agent_thought_chunk` updates this time. Turn the option back on to see them.
"""

SMART_THOUGHT = (
    "Nothing in the prompt matches a scenario keyword, so I'll give a friendly overview."
)

TOOLS_INTRO = """\
Here is **one tool call of every kind**. They are *simulated*: nothing on your disk \
changes and nothing touches the network. Watch their status move through \
`pending` → `in_progress` → `completed` (or `failed`, or `cancelled`).
"""

TOOLS_OUTRO = """\
That was every tool kind: `read`, `search`, `edit`, `delete`, `move`, `execute`, \
`think`, `fetch` and `other`. Try `/read`, `/edit` and `/run` for the real thing.
"""

PLAN_INTRO = "Let me make a plan first, then work through it step by step."

PLAN_OUTRO = "All done: every entry in the plan is **completed**."

REFUSAL = """\
I'm sorry, but I can't help with that one. 🙅

(This is the demo's **refusal** scenario: the turn ends with stop reason `refusal`, \
which tells the client that this prompt and my reply won't be part of the next turn's context.)
"""

ERROR_PREAMBLE = "Let me try that… hmm, something is about to go wrong."

V1_CUSTOM_STOP = """\
Custom stop reasons (values starting with `_`) only exist in **ACP v2**: v1 has a closed \
set of stop reasons. This connection speaks v1, so this turn ends with `end_turn` and \
carries the custom reason in the response's `_meta` instead.
"""

CUSTOM_STOP = """\
This turn ends with a **custom stop reason**, `{reason}`. ACP v2 allows stop reasons \
that start with `_`; a client should show a generic "stopped" state for ones it doesn't know.
"""

SLOW_INTRO = """\
This is a **slow turn**: I'll work for {seconds} seconds and report progress. \
Cancel it (Ctrl+C in acp-tui) and I'll stop at once and end the turn with `cancelled`.
"""

LONG_INTRO = "Streaming **{count} chunks** as fast as I can. Cancel at any time.\n\n"

USAGE = """\
I just sent a `usage_update`: **{used:,}** of **{size:,}** tokens in context, \
and a session cost so far of **${cost:.4f}**.
"""

TITLE_SET = "Session title set to **{title}** (a `session_info_update`)."

TITLE_MISSING = "Give me a title, e.g. `/title Refactoring the parser`."

NO_FS_READ = """\
Your client did not advertise `fs.readTextFile` in its capabilities, so I must not call \
`fs/read_text_file`. **Skipping the read.**
"""

NO_FS_WRITE = """\
Your client did not advertise `fs.writeTextFile`, so I must not call `fs/write_text_file`. \
Here is the diff I *would* have applied; **nothing was written.**
"""

NO_TERMINAL = """\
Your client did not advertise the `terminal` capability, so I must not call \
`terminal/create`. **Skipping the command.**
"""

BASH_META = """\
I ran that command **myself** and streamed it to you live in the tool call's `_meta` \
(`terminal_info`, `{key}`, `terminal_exit`), as claude-agent-acp's Bash tool does, because \
your client advertised `clientCapabilities._meta.{key}`.\
"""

BASH_TEXT = """\
I ran that command **myself**. Your client did not advertise \
`clientCapabilities._meta.terminal_output` (or `terminal_output_delta`), so it could not watch \
the output live: it came as text at the end.\
"""

BASH_V2 = """\
I ran that command **myself** and showed it in a display terminal of my own \
(`terminal_update`, `terminal_output_chunk`), as ACP v2 agents do.\
"""

BASH_INTRO = "Let me run a small command **myself**, here in your workspace."

BASH_FIXED = "_(Always the same harmless one: `/run` runs yours.)_"

OUTSIDE_ROOTS = "`{path}` is outside this session's workspace, so I won't touch it."

PERMISSION_INTRO = """\
I need your permission for the next step. The prompt offers **all four option kinds**: \
allow once, allow always, reject once and reject always.
"""

PERMISSION_RESULT = {
    "allow_once": "You chose **allow once**: I'll do it this time and ask again next time.",
    "allow_always": "You chose **allow always**: I'll do it, and won't ask again in this session.",
    "reject_once": "You chose **reject once**: I won't do it this time.",
    "reject_always": "You chose **reject always**: I won't do it, and won't ask again.",
}

HELP_HEADER = """\
# acp-tui demo agent

I'm a scripted ACP agent: no model, no network, no API keys. Type one of these, with or \
without the leading `/`:

| Command | What it shows |
| ------- | ------------- |
"""

HELP_FOOTER = """
Anything else gets a friendly reply. The *Mode* option (`ask`/`code`), the *Model* option \
(`demo-fast`/`demo-smart`) and *Show thoughts* change how I answer.

This connection speaks **ACP v{version}**.
"""

DEFAULT_REPLY = """\
Hi! 👋 I'm the **acp-tui demo agent**, a real ACP agent that runs offline, with no model \
and no API keys. I can't really understand you, but I can show everything a client has to handle.

You said:

> {quote}

{attachments}Some things to try:

| Type this     | And you'll see |
| ------------- | -------------- |
| `/tour`       | every feature in one turn |
| `/markdown`   | rich Markdown, streamed |
| `/tools`      | a tool call of every kind |
| `/edit FILE`  | a diff, a permission prompt, a real edit |
| `/run ls`     | a real command in a terminal |

Type **`/help`** for the full list.
"""

DEFAULT_REPLY_CODE = """\
```python
# code mode: terse, code first
reply = {quote!r}
```
{attachments}Code mode answers tersely. `/help` lists what I can do.
"""

TOUR_INTRO = """\
# 🗺️ The grand tour

One turn, every feature. I'll follow a plan and tick it off as I go.
"""

TOUR_OUTRO = """\
## That's the tour! 🎉

You've seen streamed Markdown, thoughts, a plan, tool calls of every kind, a permission \
prompt, a file read and edit, a real terminal, a burst of chunks, usage and a session \
title. Type `/help` for the individual scenarios.
"""

EDIT_NEW_FILE = """\
# ACP demo notes

This file was created by the acp-tui demo agent after you allowed it.
It shows that an ACP agent edits your workspace only with your permission.
"""

SWITCH_DONE = "Switched the session mode to **{mode}** (the agent changed it itself)."

SWITCH_REJECTED = "OK, staying in **{mode}** mode."

ATTACHMENTS_HEADER = "You attached:\n\n"

IMAGE_NONE_SENT = """\
You sent me no image (attach one with `@picture.png`, by pasting its path, or Alt+V from the \
clipboard), so I'll only show you one of mine.
"""

IMAGE_DRAWN = """
Here it is: a **{pixels} PNG** ({size:,} bytes) drawn with nothing but `zlib` and `struct` \
(the tool call above holds its thumbnail):
"""

PROVIDER_OWN = (
    "My (pretend) model requests take my own route: no provider is set. A client sets one with "
    "`providers/set` (acp-tui: `[agents.NAME.providers.main]` in its config).\n"
)
PROVIDER_SET = (
    "My (pretend) model requests go to **{url}**, spoken as `{api}`, with the headers: {headers}.\n"
)
