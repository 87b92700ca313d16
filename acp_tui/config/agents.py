"""Reading an agent's table of the config file: its command, env, MCP servers, providers
and permission rules."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path
from typing import Any, get_args

from acp_tui.config.model import AgentConfig
from acp_tui.config.tables import Invalid, TableReader
from acp_tui.remote.target import RemoteTarget, check_url
from acp_tui.services.permissions import ANY_KIND, Rule, RuleDecision
from acp_tui.session.options import ProviderRoute

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
    "url",
    "token_file",
    "headers",
}
_PROVIDER_KEYS = {"api_type", "base_url", "headers", "disabled"}


class AgentTables(TableReader):
    """Reads `[agents.NAME]` tables."""

    def agent(self, name: str, table: Any, line: int | None) -> AgentConfig:
        where = ("agents", name)
        if not isinstance(table, dict):
            raise Invalid("must be a table with at least `command`", line)
        for key in table.keys() - _AGENT_KEYS:
            self.problem(f"agent {name!r}: unknown setting `{key}`", self.locate.line(where, key))
        command = table.get("command")
        if "url" in table and command is None:
            argv = []
        elif isinstance(command, str):
            try:
                argv = shlex.split(command)
            except ValueError as error:
                raise Invalid(f"`command`: {error}", self.locate.line(where, "command")) from None
        elif isinstance(command, list) and all(isinstance(c, str) for c in command):
            argv = list(command)
        else:
            argv = []
        if not argv and "url" not in table:
            message = '`command` is missing: the program to run, e.g. command = "gemini"'
            if command is not None:
                message = "`command` must be a non-empty string or list of strings"
            raise Invalid(message, self.locate.line(where, "command") or line)
        argv += self.strings(table.get("args", []), where, "args")
        agent = AgentConfig(name, argv, line=line, remote=self.remote(table, where))
        agent.env = self.string_table(table.get("env", {}), where, "env")
        for key in ("description", "mode", "model"):
            value = table.get(key)
            if value is not None and not isinstance(value, str):
                raise Invalid(f"`{key}` must be a string", self.locate.line(where, key))
            setattr(agent, key, value)
        agent.permission = self.mode(table.get("permission"), where, "permission")
        servers = table.get("mcpServers", table.get("mcp_servers", []))
        key = "mcpServers" if "mcpServers" in table else "mcp_servers"
        if not isinstance(servers, list):
            raise Invalid(f"`{key}` must be an array of tables", self.locate.line(where, key))
        agent.mcp_servers = [
            self.mcp_server(server, (*where, key), index) for index, server in enumerate(servers)
        ]
        providers = table.get("providers", {})
        if not isinstance(providers, dict):
            line = self.locate.line(where, "providers")
            raise Invalid("`providers` must be tables: [agents.NAME.providers.main]", line)
        agent.providers = [
            self.provider(provider_id, route, (*where, "providers", provider_id))
            for provider_id, route in providers.items()
        ]
        rules = table.get("rule", [])
        if not isinstance(rules, list):
            raise Invalid("`rule` must be an array of tables", self.locate.line(where, "rule"))
        agent.rules = [self.rule(rule, (*where, "rule"), i) for i, rule in enumerate(rules)]
        return agent

    def remote(self, table: dict[str, Any], where: tuple[str, ...]) -> RemoteTarget | None:
        """A remote agent's `url`, `token_file` and `headers` (None without a `url`)."""
        url = table.get("url")
        if url is None:
            for key in ("token_file", "headers"):
                if key in table:
                    self.problem(
                        f"`{key}` is for a remote agent (`url`)", self.locate.line(where, key)
                    )
            return None
        if "command" in table:
            raise Invalid("give `command` or `url`, not both", self.locate.line(where, "url"))
        wrong = check_url(url) if isinstance(url, str) else "`url` must be a string"
        if wrong is not None:
            raise Invalid(f"`url`: {wrong}", self.locate.line(where, "url"))
        token_file = table.get("token_file")
        if token_file is not None and not isinstance(token_file, str):
            raise Invalid("`token_file` must be a path", self.locate.line(where, "token_file"))
        headers = self.string_table(table.get("headers", {}), where, "headers")
        path = Path(os.path.expanduser(token_file)) if token_file else None
        return RemoteTarget(url, path, headers)

    def mcp_server(self, server: Any, table: tuple[str, ...], index: int) -> dict[str, Any]:
        line = self.locate.line(table, index=index)

        def invalid(message: str, key: str | None = None) -> Invalid:
            found = self.locate.line(table, key, index) if key else None
            return Invalid(f"MCP server {index + 1}: {message}", found or line)

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
            raise Invalid(f"provider {provider_id!r} must be a table", line)
        for key in route.keys() - _PROVIDER_KEYS:
            self.problem(
                f"provider {provider_id!r}: unknown setting `{key}`", self.locate.line(table, key)
            )
        disabled = route.get("disabled", False)
        if not isinstance(disabled, bool):
            raise Invalid("`disabled` must be true or false", self.locate.line(table, "disabled"))
        if disabled:
            return ProviderRoute(provider_id)
        api_type, base_url = route.get("api_type"), route.get("base_url")
        if not isinstance(api_type, str) or not api_type:
            message = f'provider {provider_id!r}: `api_type` is missing, e.g. "anthropic"'
            raise Invalid(message, self.locate.line(table, "api_type") or line)
        if not isinstance(base_url, str) or not re.match(r"https?://[^/\s]", base_url):
            message = f"provider {provider_id!r}: `base_url` must be an http(s) URL"
            raise Invalid(message, self.locate.line(table, "base_url") or line)
        headers = self.string_table(route.get("headers", {}), table, "headers")
        return ProviderRoute(provider_id, api_type, base_url, headers)

    def rule(self, rule: Any, table: tuple[str, ...], index: int) -> Rule:
        line = self.locate.line(table, index=index)
        if not isinstance(rule, dict):
            raise Invalid(f"rule {index + 1} must be a table", line)
        kind, decision, workspace = rule.get("kind"), rule.get("decision"), rule.get("workspace")
        if not isinstance(kind, str) or not (
            kind == ANY_KIND or (kind and kind.replace("_", "").isalnum())
        ):
            raise Invalid(f'rule {index + 1}: `kind` must be a tool kind or "*"', line)
        if decision not in get_args(RuleDecision):
            raise Invalid(f"rule {index + 1}: `decision` must be allow, reject or ask", line)
        if workspace is not None:
            if not isinstance(workspace, str):
                raise Invalid(f"rule {index + 1}: `workspace` must be a string", line)
            workspace = os.path.expanduser(workspace)
            if not os.path.isabs(workspace):
                raise Invalid(f"rule {index + 1}: `workspace` must be an absolute path", line)
        return Rule(kind, decision, workspace)


def _pairs(table: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": key, "value": value} for key, value in table.items()]
