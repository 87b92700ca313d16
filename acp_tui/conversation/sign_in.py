"""Signing in to an agent: the methods it lists, running the chosen one, remembering it.

An agent lists `authMethods` in its `initialize` answer, and answers -32000 (authentication
required) when a session cannot start without one. Three kinds of method:

- `agent`: acp-tui calls `authenticate` (`auth/login` in v2); the agent does the rest
  (often opening a browser);
- `terminal`: the agent's own program runs in the user's terminal with the method's `args`
  and `env` (or, for agents using the older `_meta["terminal-auth"]`, the command named
  there); on exit status 0 acp-tui starts the agent afresh;
- `env_var` (a legacy kind still sent by some agents): the user provides the variables it
  names, and the agent is started afresh with them.

`with_sign_in` wraps opening a session: it signs in first with `--auth`, and on -32000 with
the method remembered for the agent, else the one the front end's `choose` picks, then
tries again; a method that worked is remembered (in the record store, not in the config).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from acp_tui.protocol.jsonrpc import AUTH_REQUIRED, RpcError
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.client import AgentClient

if TYPE_CHECKING:
    from acp_tui.records.store import RecordStore

AuthType = Literal["agent", "terminal", "env_var"]
TYPE_LABELS: dict[str, str] = {"agent": "agent", "terminal": "terminal", "env_var": "env var"}
T = TypeVar("T")


class EnvVar(msgspec.Struct, frozen=True):
    """A variable an `env_var` method asks for."""

    name: str
    label: str | None = None
    secret: bool = True
    optional: bool = False


class AuthChoice(msgspec.Struct, frozen=True):
    """A sign-in method, as the front end shows it and `sign_in` runs it."""

    id: str
    name: str
    type: AuthType = "agent"
    description: str | None = None
    args: tuple[str, ...] = ()
    """`terminal`: arguments for the agent's program."""
    env: Mapping[str, str] = msgspec.field(default_factory=dict)
    """`terminal`: variables for the login run."""
    command: tuple[str, ...] = ()
    """`terminal` (legacy `_meta["terminal-auth"]`): a login program other than the agent's."""
    vars: tuple[EnvVar, ...] = ()
    """`env_var`: what to ask the user for."""
    link: str | None = None
    """`env_var`: where the user gets the credentials."""
    values: Mapping[str, str] = msgspec.field(default_factory=dict)
    """`env_var`: what the user entered (see `with_values`)."""

    @property
    def type_label(self) -> str:
        return TYPE_LABELS[self.type]

    def describe(self) -> str:
        """One line: "Name (type): description"."""
        text = f"{self.name or self.id} ({self.type_label})"
        return f"{text}: {self.description}" if self.description else text

    def with_values(self, values: Mapping[str, str]) -> AuthChoice:
        """This `env_var` method with the user's values for its variables."""
        return msgspec.structs.replace(self, values=dict(values))

    def missing(self, env: Mapping[str, str]) -> list[EnvVar]:
        """`env_var`: required variables neither entered nor set in `env`."""
        return [
            var
            for var in self.vars
            if not var.optional and not (self.values.get(var.name) or env.get(var.name))
        ]


class AuthFailed(Exception):
    """Signing in did not work; the message says why, for the user."""


class AuthRequired(AuthFailed):
    """The agent wants a sign-in and none was chosen; `choices` are what it offers."""

    def __init__(self, choices: list[AuthChoice]) -> None:
        self.choices = choices
        listed = ", ".join(f"{c.id} ({c.type_label})" for c in choices) or "none listed"
        super().__init__(f"the agent requires sign-in; its methods: {listed}")


def auth_choices(info: AgentInfo) -> list[AuthChoice]:
    """The methods the agent listed, in its order, read leniently."""
    return [_choice(method) for method in info.auth_methods]


def find_choice(info: AgentInfo, method_id: str) -> AuthChoice | None:
    return next((c for c in auth_choices(info) if c.id == method_id), None)


def _choice(method: Any) -> AuthChoice:
    kind: AuthType = method.type if method.type in TYPE_LABELS else "agent"
    choice = AuthChoice(method.key, method.name, kind, method.description)
    legacy = method.meta.get("terminal-auth") if isinstance(method.meta, dict) else None
    if kind == "terminal" or (isinstance(legacy, dict) and _strings(legacy.get("command"))):
        args = _strings(method.args) if method.args is not None else ()
        command: tuple[str, ...] = ()
        if kind != "terminal" and isinstance(legacy, dict):
            command = _strings(legacy.get("command"))
            args = _strings(legacy.get("args"))
        return msgspec.structs.replace(
            choice, type="terminal", args=args, env=_env(method.env), command=command
        )
    if kind == "env_var":
        variables = method.vars if isinstance(method.vars, list) else []
        found = tuple(
            EnvVar(
                v["name"],
                v.get("label") if isinstance(v.get("label"), str) else None,
                v.get("secret") is not False,
                v.get("optional") is True,
            )
            for v in variables
            if isinstance(v, dict) and isinstance(v.get("name"), str)
        )
        link = method.link if isinstance(method.link, str) else None
        return msgspec.structs.replace(choice, vars=found, link=link)
    return choice


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def _env(value: Any) -> dict[str, str]:
    """v1 `{NAME: value}`, v2 `[{name, value}]`."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
    if isinstance(value, list):
        return {
            e["name"]: e["value"]
            for e in value
            if isinstance(e, dict) and isinstance(e.get("name"), str)
            if isinstance(e.get("value"), str)
        }
    return {}


# -- terminal sign-in ------------------------------------------------------------------------


def terminal_login(
    agent_argv: list[str], choice: AuthChoice, agent_env: Mapping[str, str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """The command line and extra environment a `terminal` method runs. The login is the
    agent's own program: it gets the agent's environment (a registry entry's or the config's
    `env`) under the method's."""
    program = list(choice.command) if choice.command else list(agent_argv)
    return [*program, *choice.args], {**(agent_env or {}), **choice.env}


def run_in_terminal(argv: list[str], env: Mapping[str, str], cwd: Path | str) -> int:
    """Run `argv` in the foreground on the user's terminal (it inherits stdin, stdout and
    stderr) with `env` laid over our environment; its exit status (127: could not run it).
    Blocks: a full-screen front end releases the terminal around it (Textual:
    `with app.suspend(): ...`)."""
    try:
        return subprocess.run(argv, cwd=cwd, env={**os.environ, **env}, check=False).returncode
    except OSError as error:
        print(f"acp-tui: cannot run {argv[0]}: {error}", flush=True)
        return 127
    except KeyboardInterrupt:
        return 130


TerminalRunner = Callable[[list[str], dict[str, str]], Awaitable[int]]
"""Runs a login command line with extra environment in the user's terminal; its status."""

Chooser = Callable[[list[AuthChoice], str | None], Awaitable[AuthChoice | None]]
"""Asks the user which method to sign in with (the remembered one's id is given to preselect
it); None to give up. For `env_var` methods it returns the choice `with_values(...)`."""


# -- running a method ------------------------------------------------------------------------


async def sign_in(
    client: AgentClient, choice: AuthChoice, *, run_terminal: TerminalRunner | None = None
) -> None:
    """Run one method on a started client. `terminal` and `env_var` methods leave the agent
    restarted (its sessions gone). Raises AuthFailed."""
    if choice.type == "agent":
        try:
            await client.authenticate(choice.id)
        except RpcError as error:
            name = choice.name or choice.id
            raise AuthFailed(f"sign-in with {name} failed: {error.message}") from error
        return
    if choice.type == "env_var":
        missing = choice.missing({**os.environ, **client.options.env})
        if missing:
            names = ", ".join(v.name + (f" ({v.label})" if v.label else "") for v in missing)
            where = f"; get them at {choice.link}" if choice.link else ""
            raise AuthFailed(f"{choice.name or choice.id} needs {names}{where}")
        client.options.env.update(choice.values)
        await client.restart()
        return
    if run_terminal is None:
        raise AuthFailed(f"{choice.name or choice.id} signs in in a terminal, and there is none")
    argv, env = terminal_login(client.argv, choice, client.options.env)
    await client.close()
    try:
        status = await run_terminal(argv, env)
    finally:
        await client.restart()
    if status != 0:
        raise AuthFailed(f"{' '.join(argv)} exited with status {status}")


async def with_sign_in(
    client: AgentClient,
    action: Callable[[], Awaitable[T]],
    *,
    agent: str,
    store: RecordStore | None = None,
    method: str | None = None,
    choose: Chooser | None = None,
    run_terminal: TerminalRunner | None = None,
    attempts: int = 3,
) -> T:
    """Run `action` (open a session) on a started client, signed in as needed.

    With `method` (`--auth`), sign in with it first. When `action` fails with -32000: sign
    in with the method remembered for `agent` (if it can run without asking: not a terminal
    one), else the one `choose` picks, and run `action` again, up to `attempts` times. The
    method that worked is remembered. Raises AuthRequired when there is nothing to sign in
    with (no `choose`, or it gave up), AuthFailed when a method failed, RpcError from
    `action` otherwise."""
    tried: set[str] = set()
    choice: AuthChoice | None = None
    if method:
        choice = find_choice(client.info, method)
        if choice is None:
            offered = ", ".join(c.id for c in auth_choices(client.info)) or "none"
            raise AuthFailed(f"the agent has no sign-in method {method!r}; it offers: {offered}")
        choice = _with_environment(choice)
        await sign_in(client, choice, run_terminal=run_terminal)
        tried.add(choice.id)
    for _attempt in range(attempts):
        try:
            result = await action()
        except RpcError as error:
            if error.code != AUTH_REQUIRED:
                raise
        else:
            if choice is not None and store is not None:
                store.remember_auth(agent, choice.id)
            return result
        choice = await pick_sign_in(client, agent=agent, store=store, choose=choose, tried=tried)
        tried.add(choice.id)
        await sign_in(client, choice, run_terminal=run_terminal)
    raise AuthFailed("the agent still requires sign-in after signing in")


async def pick_sign_in(
    client: AgentClient,
    *,
    agent: str,
    store: RecordStore | None = None,
    choose: Chooser | None = None,
    tried: set[str] | frozenset[str] = frozenset(),
) -> AuthChoice:
    """The method to sign in with now: the one remembered for `agent`, if it can run without
    asking (not a terminal one) and was not `tried`, else the one `choose` picks. Raises
    AuthRequired when there is none (no `choose`, or it gave up)."""
    choices = auth_choices(client.info)
    remembered = store.remembered_auth(agent) if store is not None else None
    choice = next((c for c in choices if c.id == remembered), None)
    if choice is None or choice.id in tried or choice.type == "terminal":
        choice = await choose(choices, remembered) if choose is not None else None
        if choice is None:
            raise AuthRequired(choices)
    return _with_environment(choice)


def _with_environment(choice: AuthChoice) -> AuthChoice:
    """An `env_var` method takes what is already in our environment as entered."""
    if choice.type != "env_var":
        return choice
    found = {v.name: os.environ[v.name] for v in choice.vars if os.environ.get(v.name)}
    return choice.with_values({**found, **choice.values})
