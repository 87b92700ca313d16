"""Reading the config file: never raises; each problem is kept with its line."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_tui.config.agents import AgentTables
from acp_tui.config.model import DEMO, Config, ConfigProblem, config_path, demo_agent
from acp_tui.config.notify import NotifyTable
from acp_tui.config.tables import Invalid

if TYPE_CHECKING:
    import tomllib

_SIZES = ("max_download", "max_line", "max_write")
_SWITCHES = ("guard", "remote_fs", "remote_terminal")
_BUDGETS = ("max_cost", "max_context")
_TOP_KEYS = {
    "default_agent",
    "permission",
    "allow_paths",
    "notify",
    "agent_state",
    "agents",
    *_SWITCHES,
    *_SIZES,
    *_BUDGETS,
}


def load_config(path: Path | None = None) -> Config:
    """Read the config file. Never raises: problems are collected in `Config.problems`, and
    what could not be used is left out. A missing file is no problem."""
    path = path or config_path()
    config = Config(path)
    config.agents[DEMO] = demo_agent()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return config
    except (OSError, UnicodeDecodeError) as error:
        config.problems.append(ConfigProblem(path, None, f"cannot read the file: {error}"))
        return config
    config.exists = True
    import tomllib  # here: without a file, the first frame has no use for it (issue 14)

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message, line = _toml_error(error)
        config.problems.append(ConfigProblem(path, line, f"not valid TOML: {message}"))
        return config
    _Reader(config, text).read(document)
    return config


def _toml_error(error: tomllib.TOMLDecodeError) -> tuple[str, int | None]:
    text = str(error)
    match = re.search(r"\(at line (\d+), column (\d+)\)$", text)
    if match is None:
        return text, None
    return f"{text[: match.start()].strip()} (column {match.group(2)})", int(match.group(1))


class _Reader(AgentTables, NotifyTable):
    def read(self, document: dict[str, Any]) -> None:
        config = self.config
        for key in document.keys() - _TOP_KEYS:
            self.problem(f"unknown setting `{key}`", self.locate.line((), key))
        default = document.get("default_agent")
        if default is not None and not isinstance(default, str):
            self.problem("`default_agent` must be a string", self.locate.line((), "default_agent"))
            default = None
        try:
            config.permission = self.mode(document.get("permission"), (), "permission")
        except Invalid as invalid:
            self.problem(str(invalid), invalid.line)
        for key in _SWITCHES:
            value = document.get(key, True)
            if isinstance(value, bool):
                setattr(config, key, value)
            else:
                self.problem(f"`{key}` must be true or false", self.locate.line((), key))
        try:
            config.allow_paths = self.paths(document.get("allow_paths"))
        except Invalid as invalid:
            self.problem(str(invalid), invalid.line)
        try:
            config.agent_state = self.folders(document.get("agent_state"))
        except Invalid as invalid:
            self.problem(str(invalid), invalid.line)
        for key in _BUDGETS:
            value = document.get(key)
            if value is None:
                continue
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                setattr(config, key, float(value))
            else:
                self.problem(f"`{key}` must be a positive number", self.locate.line((), key))
        for key in _SIZES:
            try:
                if key in document:
                    setattr(config, key, self.size(document[key], key))
            except Invalid as invalid:
                self.problem(str(invalid), invalid.line)
        try:
            config.notify = self.notify(document.get("notify"))
        except Invalid as invalid:
            self.problem(f"[notify] left out: {invalid}", invalid.line)
        agents = document.get("agents", {})
        if not isinstance(agents, dict):
            self.problem("`agents` must be a table: [agents.NAME]", self.locate.line((), "agents"))
            agents = {}
        for name, table in agents.items():
            line = self.locate.line(("agents", name))
            try:
                config.agents[name] = self.agent(name, table, line)
            except Invalid as invalid:
                self.problem(f"agent {name!r} left out: {invalid}", invalid.line or line)
        for agent in config.agents.values():
            if agent.remote is not None:
                agent.remote.fs, agent.remote.terminal = config.remote_fs, config.remote_terminal
        if default is not None and default not in config.agents:
            line = self.locate.line((), "default_agent")
            self.problem(f"`default_agent` {default!r} is not a configured agent", line)
        else:
            config.default_agent = default

    def paths(self, value: Any) -> list[Path]:
        if value is None:
            return []
        line = self.locate.line((), "allow_paths")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise Invalid("`allow_paths` must be a list of directories", line)
        paths = [Path(os.path.expanduser(v)) for v in value]
        for path in paths:
            if not path.is_absolute():
                raise Invalid(f"`allow_paths`: {str(path)!r} is not an absolute path", line)
        return paths

    def folders(self, value: Any) -> list[str] | None:
        """`agent_state`: folders relative to the workspace, as `a/b`."""
        if value is None:
            return None
        line = self.locate.line((), "agent_state")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise Invalid("`agent_state` must be a list of folders in the workspace", line)
        folders = []
        for folder in value:
            parts = [part for part in folder.split("/") if part not in ("", ".")]
            if not parts or os.path.isabs(folder) or ".." in parts:
                raise Invalid(f"`agent_state`: {folder!r} is not a folder in the workspace", line)
            folders.append("/".join(parts))
        return folders
