"""What the config file says, as acp-tui uses it: agents, defaults, and what a run started
with (`Startup`). Reading the file is `reader.py`."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, Literal, get_args

import msgspec

from acp_tui.paths import config_dir
from acp_tui.remote.target import RemoteTarget
from acp_tui.services.permissions import Mode, Rule
from acp_tui.session.options import ClientOptions, ProviderRoute

CONFIG_FILE = "config.toml"
DEMO = "demo"
DEMO_COMMAND = [sys.executable, "-m", "acp_tui.demo"]
DEFAULT_MAX_DOWNLOAD = 1 << 30
"""The largest archive acp-tui downloads to install a registry agent (`max_download`)."""


def config_path() -> Path:
    return config_dir() / CONFIG_FILE


def default_config_text() -> str:
    """The commented example config acp-tui ships."""
    import importlib.resources  # here: only `--init-config` writes it out

    example = importlib.resources.files("acp_tui") / "default_config.toml"
    return example.read_text(encoding="utf-8")


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
    remote: RemoteTarget | None = None
    """A remote agent's address (`url`, `--connect`), reached over the ACP remote transport;
    its `command` is then empty."""

    @classmethod
    def for_url(cls, target: RemoteTarget) -> AgentConfig:
        """A remote agent given by its URL (`--connect`), not named in the config: the URL is
        its name."""
        return cls(target.url, [], remote=target, adhoc=True)

    @classmethod
    def for_command(cls, command: list[str], env: dict[str, str] | None = None) -> AgentConfig:
        """An agent given by its command (after `--`), not named in the config: the command
        line is its name."""
        return cls(shlex.join(command), list(command), env=dict(env or {}), adhoc=True)

    @property
    def program(self) -> str:
        return self.remote.url if self.remote is not None else self.command[0]

    def found(self) -> str | None:
        """The program's path if it can be run (on PATH, or a path to an executable); a
        remote agent's URL (whether it answers is known once connected)."""
        return self.remote.url if self.remote is not None else shutil.which(self.program)

    @property
    def command_line(self) -> str:
        return self.remote.url if self.remote is not None else shlex.join(self.command)


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
    return for_remote(chosen, agent)


def for_remote(options: ClientOptions, agent: AgentConfig) -> ClientOptions:
    """`options` for `agent`: a remote agent is connected to (by a conversation of its own),
    its files and commands served here as the config's `remote_fs` and `remote_terminal`
    allow."""
    remote = agent.remote
    if remote is None:
        return msgspec.structs.replace(options, remote=None)
    fs, terminal = options.fs and remote.fs, options.terminal and remote.terminal
    # Cookies of its own: they name one conversation's connection to a server (kept across
    # its reconnects), never another's.
    remote = msgspec.structs.replace(remote, cookies={})
    return msgspec.structs.replace(options, remote=remote, fs=fs, terminal=terminal)


def demo_agent() -> AgentConfig:
    return AgentConfig(
        DEMO, list(DEMO_COMMAND), description="the built-in demo agent", builtin=True
    )


Need = Literal["permission", "question", "budget", "failed", "done"]
"""What a conversation can need of the user (`acp_tui.conversation.attention`), and what a
notification can be about."""
NEEDS: tuple[Need, ...] = get_args(Need)
"""Most pressing first: a conversation's mark shows the first of its needs."""
Sequence = Literal["auto", "osc777", "osc9", "osc99", "bell"]
"""How the terminal is told: picked for it (`auto`), one escape sequence, or the bell."""


class Notify(msgspec.Struct):
    """`[notify]`: when and how a user who is not looking is told a conversation needs them."""

    enabled: bool = True
    """Off: no notification at all (`--notify off`); the inbox still marks who waits."""
    events: frozenset[Need] = frozenset(NEEDS)
    long_turn: float = 30.0
    """Seconds: a turn that ran longer is told when it ends even to a user who is looking
    (0: never)."""
    desktop: bool = False
    """Also a desktop notification, through `notify-send` where it is installed."""
    terminal: Sequence = "auto"


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
    remote_fs: bool = True
    remote_terminal: bool = True
    """Whether remote agents may read and write this machine's files, and run commands on
    it (in the workspace, as local agents do): `remote_fs`, `remote_terminal`."""
    max_write: int | None = None
    """The largest file write made for an agent, in bytes (None: the fs service's default)."""
    max_cost: float | None = None
    """The most a session may cost (`--max-cost`), in the agent's currency."""
    max_context: float | None = None
    """The most of the agent's context window a session may fill, in percent."""
    notify: Notify = msgspec.field(default_factory=Notify)
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
    notify: Notify = msgspec.field(default_factory=Notify)
    """The config's `[notify]`, as `--notify` leaves it."""

    @property
    def warnings(self) -> list[str]:
        """Config problems, one line each, to show where the user will see them."""
        return [str(problem) for problem in self.config.problems]
