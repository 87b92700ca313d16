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

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import msgspec

from acp_tui.paths import config_dir
from acp_tui.services.permissions import (
    ANY_KIND,
    Mode,
    Rule,
    RuleDecision,
)
from acp_tui.session.options import ClientOptions, ProviderRoute
from acp_tui.text import parse_size

if TYPE_CHECKING:
    import tomllib

CONFIG_FILE = "config.toml"
DEMO = "demo"
DEMO_COMMAND = [sys.executable, "-m", "acp_tui.demo"]
DEFAULT_MAX_DOWNLOAD = 1 << 30
"""The largest archive acp-tui downloads to install a registry agent (`max_download`)."""

_SIZES = ("max_download", "max_line", "max_write")
_BUDGETS = ("max_cost", "max_context")
_TOP_KEYS = {
    "default_agent",
    "permission",
    "guard",
    "allow_paths",
    "agent_state",
    "agents",
    *_SIZES,
    *_BUDGETS,
}
_AGENT_KEYS = {
    "command",
    "args",
    "env",
    "description",
    "mode",
    "model",
    "permission",
    "mcpServers",
    "mcp_servers",
    "providers",
    "rule",
}
_PROVIDER_KEYS = {"api_type", "base_url", "headers", "disabled"}


def config_path() -> Path:
    return config_dir() / CONFIG_FILE


def default_config_text() -> str:
    """The commented example config acp-tui ships."""
    return (resources.files("acp_tui") / "default_config.toml").read_text(encoding="utf-8")


def write_default_config(path: Path | None = None) -> bool:
    """Write the example config to `path` (default: `config_path()`) unless a file is there;
    return whether it was written."""
    path = path or config_path()
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(default_config_text(), encoding="utf-8")
    return True


class ConfigProblem(msgspec.Struct, frozen=True):
    """Something wrong in the config file: where (line, if known) and what."""

    path: Path
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


class ConfigError(ValueError):
    """What the user asked for cannot be done with this config (an unknown agent)."""


class AgentConfig(msgspec.Struct):
    """One agent acp-tui can start: a configured one, the built-in demo, or a command given
    after `--` (`adhoc`). `name` is what records and remembered sign-ins are filed under."""

    name: str
    command: list[str]
    """The full argv: the command and its args."""
    env: dict[str, str] = msgspec.field(default_factory=dict)
    description: str | None = None
    mode: str | None = None
    model: str | None = None
    permission: Mode | None = None
    mcp_servers: list[dict[str, Any]] = msgspec.field(default_factory=list)
    """In ACP v1 shape: stdio `{name, command, args, env: [{name, value}]}`, or
    `{type: http|sse, name, url, headers: [{name, value}]}`."""
    providers: list[ProviderRoute] = msgspec.field(default_factory=list)
    """`[agents.NAME.providers.ID]`: where the agent's LLM providers send requests."""
    rules: list[Rule] = msgspec.field(default_factory=list)
    builtin: bool = False
    adhoc: bool = False
    startup_timeout: float | None = None
    """Seconds it may take to answer initialize and session/new, when longer than acp-tui's
    default (npx and uvx fetch the package on a first run first)."""
    starting: str | None = None
    """What the header says while it starts, when that may take long."""
    line: int | None = None
    """Where the agent's table starts in the config file."""

    @classmethod
    def for_command(cls, command: list[str], env: dict[str, str] | None = None) -> AgentConfig:
        """An agent given by its command (after `--`), not named in the config: the command
        line is its name."""
        return cls(shlex.join(command), list(command), env=dict(env or {}), adhoc=True)

    @property
    def program(self) -> str:
        return self.command[0]

    def found(self) -> str | None:
        """The program's path if it can be run (on PATH, or a path to an executable)."""
        return shutil.which(self.program)

    @property
    def command_line(self) -> str:
        return shlex.join(self.command)


def options_beside(
    agent: AgentConfig, defaults: ClientOptions, current: AgentConfig, options: ClientOptions
) -> ClientOptions:
    """What a new conversation with `agent` starts with, beside one with `current` started
    with `options`: for the same agent, its options (what the user signed in with, an
    `env_var` method, goes along); for another, the command line's `defaults` with the
    agent's own env, MCP servers and providers."""
    if agent is current:
        chosen = msgspec.structs.replace(options, env=dict(options.env))
    else:
        chosen = msgspec.structs.replace(
            defaults,
            env=dict(agent.env),
            mcp_servers=agent.mcp_servers,
            providers=agent.providers,
        )
    if agent.startup_timeout is not None:
        timeout = max(chosen.startup_timeout, agent.startup_timeout)
        chosen = msgspec.structs.replace(chosen, startup_timeout=timeout)
    return chosen


def demo_agent() -> AgentConfig:
    return AgentConfig(
        DEMO, list(DEMO_COMMAND), description="the built-in demo agent", builtin=True
    )


class Config(msgspec.Struct):
    path: Path
    exists: bool = False
    agents: dict[str, AgentConfig] = msgspec.field(default_factory=dict)
    default_agent: str | None = None
    permission: Mode | None = None
    guard: bool = True
    allow_paths: list[Path] = msgspec.field(default_factory=list)
    agent_state: list[str] | None = None
    """Folders of the workspace where agents keep their own state, left out of checkpoints
    and never rewound (None: the ones acp-tui knows, `checkpoints.ignores.AGENT_STATE`)."""
    max_download: int = DEFAULT_MAX_DOWNLOAD
    """Bytes."""
    max_line: int | None = None
    """The longest message taken from an agent, in bytes (None: the connection's default)."""
    max_write: int | None = None
    """The largest file write made for an agent, in bytes (None: the fs service's default)."""
    max_cost: float | None = None
    """The most a session may cost (`--max-cost`), in the agent's currency."""
    max_context: float | None = None
    """The most of the agent's context window a session may fill, in percent."""
    problems: list[ConfigProblem] = msgspec.field(default_factory=list)

    def agent(self, name: str | None = None, command: list[str] | None = None) -> AgentConfig:
        """The agent to run: `name` (`--agent`), else `command` (after `--`; a configured
        agent with that very command is taken by its name), else `default_agent`, else the
        demo. Raises ConfigError for an unknown name (or both given)."""
        if name and command:
            raise ConfigError("give --agent NAME or an agent command after --, not both")
        if command:
            for agent in self.agents.values():
                if agent.command == command:
                    return agent
            return AgentConfig.for_command(command)
        if name:
            if name not in self.agents:
                known = ", ".join(sorted(self.agents))
                broken = " (see the problems in the config file above)" if self.problems else ""
                raise ConfigError(f"unknown agent {name!r}; configured: {known}{broken}")
            return self.agents[name]
        if self.default_agent in self.agents:
            return self.agents[self.default_agent]
        return self.agents[DEMO]

    def permission_mode(self, agent: AgentConfig, given: str | None = None) -> Mode:
        """Who answers permission requests: `--permission`, else the agent's, else the
        config's, else ask."""
        return given or agent.permission or self.permission or "ask"  # type: ignore[return-value]


class Startup(msgspec.Struct):
    """What `acp-tui` resolved from its command line and the config file, for a front end."""

    config: Config
    agent: AgentConfig
    permission: Mode
    resume: str | None = None
    """`--resume`: a session id (or prefix), "" for the latest; None for a new session."""
    fork: bool = False
    """`--fork`: go on in a fork of the session `resume` names (`session/fork`)."""
    record: bool = True
    """Keep a local record of the conversation (`--no-record` turns it off)."""
    auth: str | None = None
    """`--auth`: sign in with this method first."""
    mode: str | None = None
    model: str | None = None
    max_cost: float | None = None
    """`--max-cost`: the most a session may cost, in the agent's currency."""
    max_context: float | None = None
    """`--max-context`: the most of the context window (percent) a session may fill."""

    @property
    def warnings(self) -> list[str]:
        """Config problems, one line each, to show where the user will see them."""
        return [str(problem) for problem in self.config.problems]


# -- reading the file -------------------------------------------------------------------------


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


class _Invalid(Exception):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


class _Reader:
    """Checks a parsed document, finding the lines of what it complains about."""

    def __init__(self, config: Config, text: str) -> None:
        self.config = config
        self.locate = _Locator(text)

    def problem(self, message: str, line: int | None) -> None:
        self.config.problems.append(ConfigProblem(self.config.path, line, message))

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
        except _Invalid as invalid:
            self.problem(str(invalid), invalid.line)
        guard = document.get("guard", True)
        if isinstance(guard, bool):
            config.guard = guard
        else:
            self.problem("`guard` must be true or false", self.locate.line((), "guard"))
        try:
            config.allow_paths = self.paths(document.get("allow_paths"))
        except _Invalid as invalid:
            self.problem(str(invalid), invalid.line)
        try:
            config.agent_state = self.folders(document.get("agent_state"))
        except _Invalid as invalid:
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
            except _Invalid as invalid:
                self.problem(str(invalid), invalid.line)
        agents = document.get("agents", {})
        if not isinstance(agents, dict):
            self.problem("`agents` must be a table: [agents.NAME]", self.locate.line((), "agents"))
            agents = {}
        for name, table in agents.items():
            line = self.locate.line(("agents", name))
            try:
                config.agents[name] = self.agent(name, table, line)
            except _Invalid as invalid:
                self.problem(f"agent {name!r} left out: {invalid}", invalid.line or line)
        if default is not None and default not in config.agents:
            line = self.locate.line((), "default_agent")
            self.problem(f"`default_agent` {default!r} is not a configured agent", line)
        else:
            config.default_agent = default

    def mode(self, value: Any, table: tuple[str, ...], key: str) -> Mode | None:
        if value is None or value in get_args(Mode):
            return value
        raise _Invalid(f"`{key}` must be ask, allow or reject", self.locate.line(table, key))

    def size(self, value: Any, key: str) -> int:
        size = parse_size(value)
        if size is None:
            line = self.locate.line((), key)
            raise _Invalid(f'`{key}` must be a number of bytes or a size like "500 MB"', line)
        return size

    def paths(self, value: Any) -> list[Path]:
        if value is None:
            return []
        line = self.locate.line((), "allow_paths")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _Invalid("`allow_paths` must be a list of directories", line)
        paths = [Path(os.path.expanduser(v)) for v in value]
        for path in paths:
            if not path.is_absolute():
                raise _Invalid(f"`allow_paths`: {str(path)!r} is not an absolute path", line)
        return paths

    def folders(self, value: Any) -> list[str] | None:
        """`agent_state`: folders relative to the workspace, as `a/b`."""
        if value is None:
            return None
        line = self.locate.line((), "agent_state")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _Invalid("`agent_state` must be a list of folders in the workspace", line)
        folders = []
        for folder in value:
            parts = [part for part in folder.split("/") if part not in ("", ".")]
            if not parts or os.path.isabs(folder) or ".." in parts:
                raise _Invalid(f"`agent_state`: {folder!r} is not a folder in the workspace", line)
            folders.append("/".join(parts))
        return folders

    def agent(self, name: str, table: Any, line: int | None) -> AgentConfig:
        where = ("agents", name)
        if not isinstance(table, dict):
            raise _Invalid("must be a table with at least `command`", line)
        for key in table.keys() - _AGENT_KEYS:
            self.problem(f"agent {name!r}: unknown setting `{key}`", self.locate.line(where, key))
        command = table.get("command")
        if isinstance(command, str):
            try:
                argv = shlex.split(command)
            except ValueError as error:
                raise _Invalid(f"`command`: {error}", self.locate.line(where, "command")) from None
        elif isinstance(command, list) and all(isinstance(c, str) for c in command):
            argv = list(command)
        else:
            argv = []
        if not argv:
            message = '`command` is missing: the program to run, e.g. command = "gemini"'
            if command is not None:
                message = "`command` must be a non-empty string or list of strings"
            raise _Invalid(message, self.locate.line(where, "command") or line)
        argv += self.strings(table.get("args", []), where, "args")
        agent = AgentConfig(name, argv, line=line)
        agent.env = self.string_table(table.get("env", {}), where, "env")
        for key in ("description", "mode", "model"):
            value = table.get(key)
            if value is not None and not isinstance(value, str):
                raise _Invalid(f"`{key}` must be a string", self.locate.line(where, key))
            setattr(agent, key, value)
        agent.permission = self.mode(table.get("permission"), where, "permission")
        servers = table.get("mcpServers", table.get("mcp_servers", []))
        key = "mcpServers" if "mcpServers" in table else "mcp_servers"
        if not isinstance(servers, list):
            raise _Invalid(f"`{key}` must be an array of tables", self.locate.line(where, key))
        agent.mcp_servers = [
            self.mcp_server(server, (*where, key), index) for index, server in enumerate(servers)
        ]
        providers = table.get("providers", {})
        if not isinstance(providers, dict):
            line = self.locate.line(where, "providers")
            raise _Invalid("`providers` must be tables: [agents.NAME.providers.main]", line)
        agent.providers = [
            self.provider(provider_id, route, (*where, "providers", provider_id))
            for provider_id, route in providers.items()
        ]
        rules = table.get("rule", [])
        if not isinstance(rules, list):
            raise _Invalid("`rule` must be an array of tables", self.locate.line(where, "rule"))
        agent.rules = [self.rule(rule, (*where, "rule"), i) for i, rule in enumerate(rules)]
        return agent

    def strings(self, value: Any, table: tuple[str, ...], key: str) -> list[str]:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        raise _Invalid(f"`{key}` must be a list of strings", self.locate.line(table, key))

    def string_table(self, value: Any, table: tuple[str, ...], key: str) -> dict[str, str]:
        if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            return dict(value)
        line = self.locate.line(table, key)
        raise _Invalid(f'`{key}` must be a table of strings, e.g. {{ NAME = "value" }}', line)

    def mcp_server(self, server: Any, table: tuple[str, ...], index: int) -> dict[str, Any]:
        line = self.locate.line(table, index=index)

        def invalid(message: str, key: str | None = None) -> _Invalid:
            found = self.locate.line(table, key, index) if key else None
            return _Invalid(f"MCP server {index + 1}: {message}", found or line)

        if not isinstance(server, dict):
            raise invalid("must be a table")
        name, kind = server.get("name"), server.get("type", "stdio")
        if not isinstance(name, str) or not name:
            raise invalid("`name` is missing", "name")
        if kind == "stdio":
            command = server.get("command")
            if not isinstance(command, str) or not command:
                raise invalid('`command` is missing (or give type = "http" and a url)')
            resolved = shutil.which(command) or command
            if not os.path.isabs(resolved):
                self.problem(f"MCP server {name!r}: `{command}` is not on PATH", line)
            args = self.strings(server.get("args", []), table, "args")
            env = self.string_table(server.get("env", {}), table, "env")
            return {"name": name, "command": resolved, "args": args, "env": _pairs(env)}
        if kind in ("http", "sse"):
            url = server.get("url")
            if not isinstance(url, str) or not url:
                raise invalid("`url` is missing", "url")
            headers = self.string_table(server.get("headers", {}), table, "headers")
            return {"type": kind, "name": name, "url": url, "headers": _pairs(headers)}
        raise invalid(f"unknown type {kind!r}: use stdio (the default), http or sse", "type")

    def provider(self, provider_id: str, route: Any, table: tuple[str, ...]) -> ProviderRoute:
        line = self.locate.line(table)
        if not isinstance(route, dict):
            raise _Invalid(f"provider {provider_id!r} must be a table", line)
        for key in route.keys() - _PROVIDER_KEYS:
            self.problem(
                f"provider {provider_id!r}: unknown setting `{key}`", self.locate.line(table, key)
            )
        disabled = route.get("disabled", False)
        if not isinstance(disabled, bool):
            raise _Invalid("`disabled` must be true or false", self.locate.line(table, "disabled"))
        if disabled:
            return ProviderRoute(provider_id)
        api_type, base_url = route.get("api_type"), route.get("base_url")
        if not isinstance(api_type, str) or not api_type:
            message = f'provider {provider_id!r}: `api_type` is missing, e.g. "anthropic"'
            raise _Invalid(message, self.locate.line(table, "api_type") or line)
        if not isinstance(base_url, str) or not re.match(r"https?://[^/\s]", base_url):
            message = f"provider {provider_id!r}: `base_url` must be an http(s) URL"
            raise _Invalid(message, self.locate.line(table, "base_url") or line)
        headers = self.string_table(route.get("headers", {}), table, "headers")
        return ProviderRoute(provider_id, api_type, base_url, headers)

    def rule(self, rule: Any, table: tuple[str, ...], index: int) -> Rule:
        line = self.locate.line(table, index=index)
        if not isinstance(rule, dict):
            raise _Invalid(f"rule {index + 1} must be a table", line)
        kind, decision, workspace = rule.get("kind"), rule.get("decision"), rule.get("workspace")
        if not isinstance(kind, str) or not (
            kind == ANY_KIND or (kind and kind.replace("_", "").isalnum())
        ):
            raise _Invalid(f'rule {index + 1}: `kind` must be a tool kind or "*"', line)
        if decision not in get_args(RuleDecision):
            raise _Invalid(f"rule {index + 1}: `decision` must be allow, reject or ask", line)
        if workspace is not None:
            if not isinstance(workspace, str):
                raise _Invalid(f"rule {index + 1}: `workspace` must be a string", line)
            workspace = os.path.expanduser(workspace)
            if not os.path.isabs(workspace):
                raise _Invalid(f"rule {index + 1}: `workspace` must be an absolute path", line)
        return Rule(kind, decision, workspace)


def _pairs(table: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": key, "value": value} for key, value in table.items()]


class _Locator:
    """Finds the line (1-based) of a table or a key in the TOML text, for messages."""

    _HEADER = re.compile(r"^\s*\[\[?\s*(.+?)\s*\]\]?\s*(#.*)?$")

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.headers: list[tuple[int, tuple[str, ...]]] = []
        for number, line in enumerate(self.lines, 1):
            match = self._HEADER.match(line)
            if match is not None:
                self.headers.append((number, _split_key(match.group(1))))

    def line(self, table: tuple[str, ...], key: str | None = None, index: int = 0) -> int | None:
        """The line of `key` in `table` (the `index`-th one, for an array of tables), else
        of the table's header; a table written inline is found by its key in its parent."""
        starts = [n for n, path in self.headers if path == table]
        if len(starts) > index or not table:
            start = starts[index] if table else 0
            if key is None:
                return start
            end = next((n for n, _ in self.headers if n > start), len(self.lines) + 1)
            name = re.escape(key)
            pattern = re.compile(rf"^\s*(?:{name}|\"{name}\"|'{name}')\s*[=.]")
            for number in range(start + 1, end):
                if pattern.match(self.lines[number - 1]):
                    return number
            return start or None
        if len(table) > 1:
            return self.line(table[:-1], table[-1])
        return None


def _split_key(text: str) -> tuple[str, ...]:
    """`agents."my agent".env` -> ("agents", "my agent", "env")."""
    parts = re.findall(r"\"((?:[^\"\\]|\\.)*)\"|'([^']*)'|([^.\s]+)", text)
    return tuple(next(p for p in part if p) if any(part) else "" for part in parts)
