"""`acp-tui check -- AGENT`: how well an agent keeps the Agent Client Protocol, for its authors;
and the live check of every message while a conversation goes on (`live`).

`run.run_check` starts the agent several times in a scratch workspace (once per `initialize`
offer, then once for a whole session) and returns a `Report` of `Finding`s; `report.py`
prints it as text, JSON or JUnit XML. The cases and the rules they cite are in `cases.py`.
Nothing is imported here: the TUI imports `live` as the agent starts, and the cases' JSON
Schema machinery (a tenth of acp-tui's imports) is only for `acp-tui check` and the live
check's validator process.
"""
