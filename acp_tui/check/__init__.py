"""`acp-tui check -- AGENT`: how well an agent keeps the Agent Client Protocol, for its authors;
and the live check of every message while a conversation goes on (`live`).

`run.run_check` starts the agent several times in a workspace (once per `initialize` offer,
once for a whole session, once more to load it) and returns a `Report` of `Finding`s;
`report.py` prints it as text, JSON or JUnit XML. The order of the cases is in `cases.py`, the
cases in the modules it names, the rules they quote in `rules.py`.
Nothing is imported here (the command line reads its defaults below as it starts): the TUI
imports `live` as the agent starts, and the cases' JSON Schema machinery (a tenth of acp-tui's
imports) is only for `acp-tui check` and the live check's validator process.
"""

CALL_TIMEOUT = 30.0
"""Seconds an agent gets to answer a request (`--call-timeout`)."""
TURN_TIMEOUT = 120.0
"""Seconds a prompt turn may take (`--turn-timeout`)."""
DEFAULT_PROMPT = "Say hello in one short sentence."
"""What the prompt turn sends (`--prompt`)."""
LONG_PROMPT = (
    "Write a long essay, at least 2000 words, on the history of the terminal. Do not use any tools."
)
"""What the cancel cases send: a turn long enough to be cancelled at its first chunk
(`--long-prompt`)."""
TOOL_PROMPT = (
    "Create a file named acp-tui-check.txt in {cwd} containing the single word hello. "
    "Use your file-writing tool."
)
"""What the permission cases send: a turn that should ask before it writes a file
(`--tool-prompt`; `{cwd}` is the workspace)."""
