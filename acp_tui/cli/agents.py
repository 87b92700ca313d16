"""`acp-tui agents [--update]`: the configured agents, whether each is on the PATH, and the ACP
Registry's agents."""

from __future__ import annotations

import argparse

from acp_tui.cli.printing import config, print_table, warn
from acp_tui.config import AgentConfig, Config
from acp_tui.registry import load_registry
from acp_tui.registry.install import registry_status


def run(args: argparse.Namespace, agent_command: list[str]) -> int:
    loaded = config()
    if loaded.exists:
        print(f"Config: {loaded.path}")
    else:
        print(f"Config: {loaded.path} (none yet: `acp-tui --init-config` writes one with examples)")
    default = loaded.agent()
    rows = [("", "NAME", "COMMAND", "FOUND")]
    for agent in loaded.agents.values():
        mark = "*" if agent is default else ""
        rows.append((mark, agent.name, _short_command(agent), _found(agent)))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print(" ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[3])
    print(f"\n* the default: `acp-tui` runs {default.name}; `acp-tui --agent NAME` runs another.")
    _registry_agents(loaded, args.update)
    return 0


def _registry_agents(config: Config, update: bool) -> None:
    loaded = load_registry(refresh=update)
    for problem in loaded.index.problems:
        warn(f"registry: {problem}")
    print(f"\nACP Registry ({loaded.describe().removeprefix('registry: ')}):")
    rows = [("ID", "NAME", "VERSION", "KIND", "INSTALLED", "ON PATH")]
    shadowed = []
    for agent in loaded.index.agents.values():
        if agent.id in config.agents:
            shadowed.append(agent.id)
            continue
        rows.append((agent.id, agent.name, agent.version, *registry_status(agent)))
    print_table(rows[1:], rows[0])
    if shadowed:
        print(f"Configured agents of the same id win: {', '.join(shadowed)}.")
    print("`acp-tui --agent ID` installs (asking first) and starts one.")


def _short_command(agent: AgentConfig) -> str:
    if agent.builtin:
        return "python -m acp_tui.demo"
    return agent.command_line


def _found(agent: AgentConfig) -> str:
    if agent.remote is not None:
        return "remote: connected to when it starts"
    path = agent.found()
    if path is None:
        return f"no: {agent.program} is not on PATH"
    return "yes (built in)" if agent.builtin else f"yes: {path}"
