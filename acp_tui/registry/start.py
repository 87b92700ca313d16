"""`acp-tui --agent ID` for an agent of the registry: look it up, ask before it first runs
(`--yes` for scripts), and again whenever what would run changes, install it with progress on
stderr, and hand back an `AgentConfig` the rest of acp-tui starts like any configured agent."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from acp_tui.config import DEFAULT_MAX_DOWNLOAD, AgentConfig, ConfigError
from acp_tui.registry.install import (
    InstallError,
    LaunchPlan,
    Progress,
    agents_dir,
    install_binary,
    plan_launch,
)
from acp_tui.registry.source import load_registry
from acp_tui.text import human_size


def registry_agent(
    agent_id: str,
    *,
    yes: bool = False,
    unknown: ConfigError | None = None,
    stderr: TextIO | None = None,
    interactive: bool | None = None,
    ask: Callable[[str], str] = input,
    max_download: int = DEFAULT_MAX_DOWNLOAD,
) -> AgentConfig:
    """The registry agent `agent_id`, installed and ready to start. Raises ConfigError when
    the registry has no such agent (`unknown`: why the config had none either) and
    InstallError when it cannot be installed, or nobody confirmed what it would run."""
    err = stderr or sys.stderr
    loaded = load_registry()
    print(f"acp-tui: {loaded.describe()}", file=err)
    agent = loaded.index.agents.get(agent_id)
    if agent is None:
        for problem in loaded.index.problems:
            print(f"acp-tui: registry: {problem}", file=err)
        why = str(unknown) if unknown else f"unknown agent {agent_id!r}"
        raise ConfigError(f"{why}; nor is it in the registry (`acp-tui agents` lists both)")
    plan = plan_launch(agent)
    approved = is_approved(plan)
    if not approved:
        _confirm(plan, yes, sys.stdin.isatty() if interactive is None else interactive, ask, err)
    if not plan.installed:
        print(f"acp-tui: installing {agent.name} {agent.version} into {plan.install_dir}", file=err)
        install_binary(
            plan,
            _progress(err, plan, "downloading"),
            checking=_progress(err, plan, "checking"),
            max_size=max_download,
        )
    if not approved:
        approve(plan)
    return launch_config(plan)


FETCH_TIMEOUT = 300.0
"""Seconds an npx or uvx agent may take to start: a first run downloads the package (and for
npx its dependencies, often hundreds of megabytes) before the agent can answer initialize."""


def launch_config(plan: LaunchPlan) -> AgentConfig:
    """`plan`'s agent as acp-tui starts any agent (filed under its registry id)."""
    agent = plan.agent
    config = AgentConfig(agent.id, plan.command, env=plan.env, description=agent.description)
    package = dict(agent.packages()).get(plan.kind)
    if package is not None:
        config.startup_timeout = FETCH_TIMEOUT
        config.starting = f"{plan.kind} is fetching {package.package}… (first run only)"
    return config


def approve(plan: LaunchPlan) -> None:
    """Remember that the user agreed to run `plan`: this agent, at this version, from this
    very source (the CLI then does not ask again; the TUI's picker counts choosing it as
    agreeing). Call it once `plan` is installed: a failed install approves nothing."""
    mark = _approval(plan)
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.write_text(json.dumps(_source(plan), indent=1) + "\n", encoding="utf-8")


def is_approved(plan: LaunchPlan) -> bool:
    """Whether the user agreed to run exactly `plan` (see `approve`)."""
    return _approval(plan).is_file()


def _source(plan: LaunchPlan) -> dict[str, object]:
    """What the user agrees to: a new version, archive, checksum, package, arguments or
    environment is something else, asked about again."""
    agent, target = plan.agent, plan.target
    what: dict[str, object] = {"id": agent.id, "version": agent.version, "kind": plan.kind}
    if target is not None:
        archive = {"archive": target.archive, "sha256": target.sha256, "cmd": target.cmd}
        return what | archive | {"args": target.args, "env": target.env}
    return what | {"command": plan.command, "env": plan.env}


def _approval(plan: LaunchPlan) -> Path:
    # Named by a digest of the source, so an approval is found or not with one lookup; the
    # file holds the source itself, for a curious user. The plain `.approved` of earlier
    # versions named no source: it approves nothing now.
    key = json.dumps(_source(plan), sort_keys=True).encode()
    return agents_dir() / plan.agent.id / f".approved-{hashlib.sha256(key).hexdigest()[:32]}"


def _approved_before(agent_id: str) -> bool:
    """Whether some other version or source of `agent_id` was approved."""
    return any((agents_dir() / agent_id).glob(".approved-*"))


def _confirm(
    plan: LaunchPlan, yes: bool, interactive: bool, ask: Callable[[str], str], err: TextIO
) -> None:
    agent = plan.agent
    named = f"{agent.name} {agent.version}"
    if plan.kind == "binary" and plan.target is not None:
        what = f"Download {named} from {plan.target.archive} into {plan.install_dir} and run it"
    else:
        command = " ".join(plan.command)
        what = f"Run {named} with `{command}` ({plan.kind} downloads it on first use)"
    if yes:
        return
    changed = _approved_before(agent.id)
    if not interactive:
        history = "changed since you approved it" if changed else "not been started here before"
        raise InstallError(
            f"{agent.name} ({agent.id}) comes from the ACP Registry and has {history}: "
            f"{what}? Nobody is at a terminal to say yes: add --yes."
        )
    if changed:
        err.write(f"{agent.name} has changed since you approved it (a new version or source).\n")
    err.write(f"{what}? [y/N] ")
    err.flush()
    try:
        answer = ask("")
    except EOFError:
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        raise InstallError(f"{agent.id}: not installed (you said no)")


def _progress(err: TextIO, plan: LaunchPlan, doing: str) -> Progress:
    """Progress (`doing`: downloading, checking) on one rewritten line in a terminal; a line
    per 10% in a log."""
    tty = err.isatty()
    last = [0.0, -1]

    def show(received: int, total: int | None) -> None:
        size = downloaded(received, total)
        done = total is not None and received >= total
        if tty:
            now = time.monotonic()
            if now - last[0] < 0.1 and not done:
                return
            last[0] = now
            err.write(f"\racp-tui: {doing} {plan.agent.id}: {size}" + ("\n" if done else ""))
            err.flush()
            return
        tenth = received * 10 // total if total else 0
        if tenth != last[1] or done:
            last[1] = tenth
            print(f"acp-tui: {doing} {plan.agent.id}: {size}", file=err)

    return show


def downloaded(received: int, total: int | None) -> str:
    """`1.2 MB of 3.4 MB` (`1.2 MB` when the server did not say the size)."""
    return human_size(received) + (f" of {human_size(total)}" if total else "")
