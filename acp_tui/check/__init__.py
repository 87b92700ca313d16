"""`acp-tui check -- AGENT`: how well an agent keeps the Agent Client Protocol, for its authors;
and the live check of every message while a conversation goes on (`live`).

`run.run_check` starts the agent several times in a scratch workspace (once per `initialize`
offer, then once for a whole session) and returns a `Report` of `Finding`s; `report.py`
prints it as text, JSON or JUnit XML. The cases are in `cases.py` (the table) and the modules
it names; the rules they cite in `rules.py`.
Nothing is imported here (the command line reads its defaults below as it starts): the TUI
imports `live` as the agent starts, and the cases' JSON Schema machinery (a tenth of acp-tui's
imports) is only for `acp-tui check` and the live check's validator process.
"""

CALL_TIMEOUT = 30.0
"""Seconds an agent gets to answer a request (`--call-timeout`)."""
TURN_TIMEOUT = 120.0
"""Seconds a prompt turn may take (`--turn-timeout`)."""
DEFAULT_PROMPT = "Say hello in one short sentence."
"""What the cases that need a model send (`--prompt`)."""
