"""Where an agent started from the command line works: `--cwd`, else the directory acp-tui
was started in; but the built-in demo agent, without `--cwd`, in a folder of its own."""

from __future__ import annotations

from pathlib import Path

from acp_tui.config import DEMO, AgentConfig
from acp_tui.demo.workspace import demo_workspace


def workspace_for(agent: AgentConfig, given: Path | None) -> Path:
    if given is not None:
        return given.resolve()
    if agent.builtin and agent.name == DEMO:
        return demo_workspace().resolve()
    return Path.cwd().resolve()
