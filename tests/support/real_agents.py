"""Real coding agents (installed by `external_agents`), set up to run offline on a fake model.

`RealAgent.environment()` builds the whole environment of the `acp-tui` process that starts the
agent (acp-tui hands its own environment down): a private HOME with the agent's config in it,
the fake model (`tests/support/fake_model.py`) as its API endpoint and as every HTTP(S) proxy,
and nothing of the user's own keys, config or proxies.

What each agent needs and does (ACP v1; found by running them against the fake):

`claude`: claude-agent-acp 0.100.0, Claude Code 2.1 through the Claude Agent SDK.
    - Talks Anthropic Messages (`POST /v1/messages?beta=true`, streamed) to
      `ANTHROPIC_BASE_URL`, with `ANTHROPIC_API_KEY`; advertises no auth methods then.
    - As root it refuses its bypass-permissions mode unless `IS_SANDBOX=1`.
    - Runs its Read/Write/Bash tools itself: no `fs/*` or `terminal/*` requests. Write and Bash
      ask `session/request_permission` first, Read does not.
    - Beside each turn it asks the model for a session title and a prompt suggestion (no
      tools offered, the prompt quoted in them).

`codex`: codex-acp 0.16.0 (Codex core, Rust).
    - Talks OpenAI Responses (`POST {base_url}/responses`, SSE) to the provider configured in
      `$CODEX_HOME/config.toml`; the model's metadata comes from `model_catalog_json`, so it
      never asks `GET /models`.
    - Has no read or write tool: reads are shell commands (`exec_command` `cat …`, which it
      runs without asking), writes are freeform `apply_patch` patches. With
      `approval_policy = "untrusted"` the patch and any non-read-only command ask permission.

`gemini`: Gemini CLI 0.61.0 with `--acp`.
    - Advertises auth methods and needs `authenticate` with `gemini-api-key` (acp-tui
      `--auth gemini-api-key`) before `session/new`; then talks generativelanguage
      (`POST /v1beta/models/M:streamGenerateContent?alt=sse`) to `GOOGLE_GEMINI_BASE_URL`.
    - Before each main request it asks a "flash-lite" model to route the prompt
      (`generateContent`, a JSON answer with a `responseJsonSchema`).
    - Reads and writes files through the client (`fs/read_text_file`, `fs/write_text_file`);
      runs shell commands itself. A write reads the file first.
    - An untrusted folder refuses "allow always": `GEMINI_CLI_TRUST_WORKSPACE=true`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

_DEAD_URL = "http://127.0.0.1:9/"
"""A closed loopback port, for package registries an agent might call at run time."""

_DROPPED_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_")
"""The user's own keys, endpoints and agent settings: none of them may reach a test agent."""
_PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@dataclass(frozen=True)
class RealAgent:
    """One real agent: how to start it and what it needs around it."""

    name: str
    argv: list[str]
    configure: Callable[[Path, str], dict[str, str]]
    """Fills the agent's private HOME for a model at a URL; returns its variables."""
    client_args: list[str] = field(default_factory=list)
    """acp-tui options the agent needs (e.g. the auth method to use)."""

    def environment(
        self, home: Path, model_url: str, base: Mapping[str, str] = os.environ
    ) -> dict[str, str]:
        """The environment of an `acp-tui` that runs this agent on the model at `model_url`,
        with `home` (created if needed) as the agent's HOME."""
        home.mkdir(parents=True, exist_ok=True)
        env = {
            name: value
            for name, value in base.items()
            if not name.upper().startswith(_DROPPED_PREFIXES) and name.upper() not in _PROXY_NAMES
        }
        env.update(_offline(model_url))
        env["HOME"] = str(home)
        env.update(self.configure(home, model_url))
        return env


def claude(argv: list[str]) -> RealAgent:
    return RealAgent("claude", argv, _configure_claude)


def codex(argv: list[str]) -> RealAgent:
    return RealAgent("codex", argv, _configure_codex)


def gemini(argv: list[str]) -> RealAgent:
    return RealAgent("gemini", argv, _configure_gemini, ["--auth", "gemini-api-key"])


def _offline(model_url: str) -> dict[str, str]:
    """Every way out goes to the fake model, which refuses hosts other than 127.0.0.1."""
    env = {}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = model_url
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["npm_config_registry"] = env["NPM_CONFIG_REGISTRY"] = _DEAD_URL
    env["PIP_INDEX_URL"] = _DEAD_URL
    # The usual switches for telemetry, error reports and update checks.
    env.update(DO_NOT_TRACK="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1")
    env["DISABLE_AUTOUPDATER"] = "1"
    return env


def _configure_claude(home: Path, model_url: str) -> dict[str, str]:
    env = {
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-offline-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # as root Claude Code refuses to run unless it is told so
    return env


def _configure_codex(home: Path, model_url: str) -> dict[str, str]:
    codex_home = home / "codex"
    codex_home.mkdir(exist_ok=True)
    catalog = codex_home / "fake-model-catalog.json"
    catalog.write_text(json.dumps({"models": [_CODEX_MODEL]}), encoding="utf-8")
    (codex_home / "config.toml").write_text(
        _CODEX_CONFIG.format(catalog=json.dumps(str(catalog)), url=json.dumps(f"{model_url}/v1")),
        encoding="utf-8",
    )
    return {"CODEX_HOME": str(codex_home)}


def _configure_gemini(home: Path, model_url: str) -> dict[str, str]:
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "telemetry": {"enabled": False},
    }
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return {
        "GEMINI_API_KEY": "fake-offline-gemini-key",
        "GOOGLE_GEMINI_BASE_URL": model_url,
        # Gemini CLI otherwise re-executes itself in a child node with a bigger heap.
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }


# TOML strings are JSON strings here (plain paths and URLs), hence json.dumps above.
_CODEX_CONFIG = """\
model = "fake-model"
model_provider = "fake"
approval_policy = "untrusted"          # writes and commands ask: session/request_permission
sandbox_mode = "danger-full-access"    # no bubblewrap sandbox needed
check_for_update_on_startup = false
model_catalog_json = {catalog}

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.fake]
name = "fake model"
base_url = {url}
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
"""

_CODEX_MODEL = {
    "slug": "fake-model",
    "display_name": "Fake model",
    "description": "tests/support/fake_model.py",
    "default_reasoning_level": "medium",
    "supported_reasoning_levels": [
        {"effort": "low", "description": "low"},
        {"effort": "medium", "description": "medium"},
    ],
    "shell_type": "shell_command",
    "visibility": "list",
    "supported_in_api": True,
    "priority": 1,
    "upgrade": None,
    "base_instructions": "You are a scripted fake model.",
    "model_messages": None,
    "supports_reasoning_summaries": False,
    "default_reasoning_summary": "auto",
    "support_verbosity": False,
    "default_verbosity": None,
    "apply_patch_tool_type": "freeform",
    "web_search_tool_type": "text",
    "truncation_policy": {"mode": "tokens", "limit": 10000},
    "supports_parallel_tool_calls": False,
    "supports_image_detail_original": False,
    "context_window": 200000,
    "max_context_window": 200000,
    "auto_compact_token_limit": None,
    "experimental_supported_tools": [],
    "input_modalities": ["text"],
}
"""Codex's metadata for the fake model (the shape of Codex's own `models.json` entries)."""
