"""What an agent picker lists: the agent already running, the configured agents, the demo,
then the registry's agents, each with what the user needs to decide (version, installed or
not, what it still needs). No Textual here: any front end can list them the same way."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from acp_tui.config import DEMO, AgentConfig, Config
from acp_tui.registry.index import RegistryAgent, RegistryIndex
from acp_tui.registry.install import InstallError, LaunchPlan, installed_versions, plan_launch
from acp_tui.registry.start import launch_config

Group = Literal["current", "configured", "demo", "registry"]
Readiness = Literal["ready", "install", "missing"]
"""Starts as it is; is downloaded first; cannot start here (`AgentChoice.problem` says why)."""


@dataclass(frozen=True, slots=True)
class AgentChoice:
    """One row of the picker."""

    group: Group
    id: str
    name: str
    description: str = ""
    version: str = ""
    status: str = ""
    """A few words: `installed`, `installs on Enter`, `needs npx`, ..."""
    readiness: Readiness = "ready"
    agent: AgentConfig | None = None
    """What to start (for `install`: once `plan` is installed, see `launch_config`)."""
    plan: LaunchPlan | None = None
    """A registry agent: how it starts, and for `install` what is downloaded."""
    problem: str | None = None
    """`missing`: why, and how to get what it needs, for the user."""

    def matches(self, text: str) -> bool:
        """Whether `text` (already lowercase) is in its name, id or description."""
        return any(text in part.lower() for part in (self.name, self.id, self.description))


def local_choices(
    current: AgentConfig, config: Config, label: str = "", version: str = ""
) -> list[AgentChoice]:
    """The running conversation's agent ("same agent"; `label` and `version`: what it calls
    itself), then the configured agents, then the demo agent (each once: the current one is
    not listed again)."""
    choices = [
        AgentChoice(
            "current",
            current.name,
            label or current.name,
            "the agent of this conversation, in a new process",
            version,
            "same agent",
            agent=current,
        )
    ]
    for agent in config.agents.values():
        if agent.name == current.name or agent.name == DEMO:
            continue
        program = agent.found()
        choices.append(
            AgentChoice(
                "configured",
                agent.name,
                agent.name,
                agent.description or agent.command_line,
                status=("remote" if agent.remote else "configured") if program else "not on PATH",
                readiness="ready" if program else "missing",
                agent=agent,
                problem=None
                if program
                else f"{agent.program} is not on PATH (see the config: {config.path})",
            )
        )
    demo = config.agents.get(DEMO)
    if demo is not None and current.name != DEMO:
        choices.append(
            AgentChoice(
                "demo", DEMO, "Demo agent", demo.description or "", "", "built in", agent=demo
            )
        )
    return choices


def registry_choices(
    index: RegistryIndex,
    taken: set[str],
    cache: Path | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> list[AgentChoice]:
    """The registry's agents by name, but those whose id is `taken` (a configured agent of
    the same id wins). Reads the cache directory and PATH: call it off the event loop."""
    agents = sorted(
        (a for a in index.agents.values() if a.id not in taken), key=lambda a: a.name.lower()
    )
    return [_registry_choice(agent, cache, which) for agent in agents]


def _registry_choice(
    agent: RegistryAgent, cache: Path | None, which: Callable[[str], str | None]
) -> AgentChoice:
    listed = AgentChoice("registry", agent.id, agent.name, agent.description, agent.version)
    try:
        plan = plan_launch(agent, cache, which)
    except InstallError as error:
        needs = [kind for kind, _package in agent.packages()]
        status = f"needs {' or '.join(needs)}" if needs else "no build here"
        return replace(listed, status=status, readiness="missing", problem=str(error))
    if plan.kind != "binary":
        return replace(
            listed, status=f"runs with {plan.kind}", agent=launch_config(plan), plan=plan
        )
    if plan.installed:
        return replace(listed, status="installed", agent=launch_config(plan), plan=plan)
    older = installed_versions(agent.id, cache)
    status = f"updates on Enter (has {older[-1]})" if older else "installs on Enter"
    return replace(listed, status=status, readiness="install", agent=launch_config(plan), plan=plan)
