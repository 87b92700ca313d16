"""The config file: named agents (`acp-tui --agent NAME`), and defaults for every run.

It is TOML, at `config_path()` (`$XDG_CONFIG_HOME/acp-tui/config.toml`, default
`~/.config/acp-tui/config.toml`); `acp-tui --init-config` writes one with commented examples
for the common agents (`default_config.toml` beside this module documents every key)::

    default_agent = "claude"
    permission = "ask"               # ask | allow | reject
    allow_paths = ["~/notes"]

    [agents.claude]
    command = "claude-agent-acp"     # a program, a command line, or a list
    args = []
    env = { ANTHROPIC_API_KEY = "…" }
    mode = "default"                 # what a new session switches to
    model = "sonnet"
    permission = "ask"
    [[agents.claude.mcpServers]]     # given to the agent at session/new
    name = "files"
    command = "mcp-server-filesystem"
    [[agents.claude.rule]]           # permission rules for this agent only
    kind = "read"
    decision = "allow"

A bad file never stops acp-tui: `load_config` reports each problem with the file, the line
and what is wrong, skips what it cannot use (a broken agent table, or the whole file if it
is not TOML) and goes on; the built-in demo agent is always there.
"""

from acp_tui.config.model import (
    DEFAULT_MAX_DOWNLOAD,
    DEMO,
    DEMO_COMMAND,
    NEEDS,
    AgentConfig,
    Config,
    ConfigError,
    ConfigProblem,
    Need,
    Notify,
    Startup,
    config_path,
    default_config_text,
    demo_agent,
    options_beside,
    write_default_config,
)
from acp_tui.config.reader import load_config

__all__ = [
    "DEFAULT_MAX_DOWNLOAD",
    "DEMO",
    "DEMO_COMMAND",
    "NEEDS",
    "AgentConfig",
    "Config",
    "ConfigError",
    "ConfigProblem",
    "Need",
    "Notify",
    "Startup",
    "config_path",
    "default_config_text",
    "demo_agent",
    "load_config",
    "options_beside",
    "write_default_config",
]
