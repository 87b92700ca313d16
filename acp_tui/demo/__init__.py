"""The built-in demo agent: a real ACP agent with no model, no network and no API keys.

Run it with `python -m acp_tui.demo` (acp-tui does when started without an agent command). It
answers from a small script of scenarios chosen by the prompt (`/help` lists them), speaks ACP
v1 and the v2 draft, and every message it sends validates against the official schema, so it
also serves as a test fixture for clients and as a reference for agent authors.

Layout: `agent` (the ACP methods), `session` (per-session state and replay), `turn` (a prompt
turn: high-level actions in, version-correct messages out), `wire` (the v1/v2 shapes),
`scenarios` (what each command does), `texts` (the Markdown it says), `store` (persistence).
"""
