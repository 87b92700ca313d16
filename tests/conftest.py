"""Shared pytest fixtures.

External agents (see `tests/support/external_agents.py` for what each one sends): each
fixture installs its agent once per machine and returns the argv that starts it. The real
coding agents among them also need the environment `tests/support/real_agents.py` builds.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from tests.support import external_agents

# Tests hang acp-tui up to see it end; acp-tui keeps ignoring SIGHUP when started ignoring it
# (as under `nohup`), so a suite run under `nohup` would pass that on to every process it starts.
signal.signal(signal.SIGHUP, signal.SIG_DFL)


@pytest.fixture(scope="session")
def python_sdk_echo_agent() -> list[str]:
    """argv of the official Python SDK's `echo_agent.py` (v1; echoes prompts back)."""
    return external_agents.python_sdk_echo_agent()


@pytest.fixture(scope="session")
def python_sdk_example_agent() -> list[str]:
    """argv of the official Python SDK's example `agent.py` (v1; repeats prompt blocks)."""
    return external_agents.python_sdk_example_agent()


@pytest.fixture(scope="session")
def ts_sdk_example_agent() -> list[str]:
    """argv of the official TypeScript SDK's example agent (v1; tool calls and a permission)."""
    return external_agents.ts_sdk_example_agent()


@pytest.fixture(scope="session")
def claude_agent_acp() -> list[str]:
    """argv of claude-agent-acp from npm (Claude Code; needs a model: `real_agents`)."""
    return external_agents.claude_agent_acp()


@pytest.fixture(scope="session")
def codex_acp() -> list[str]:
    """argv of the codex-acp binary from npm (Codex; needs a model: `real_agents`)."""
    return external_agents.codex_acp()


@pytest.fixture(scope="session")
def gemini_cli() -> list[str]:
    """argv of Gemini CLI from npm in ACP mode (needs a model: `real_agents`)."""
    return external_agents.gemini_cli()


@pytest.fixture(autouse=True, scope="session")
def isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep every test (and every acp-tui process a test starts) out of the user's own
    config, data and cache: records, permission rules, demo sessions and the registry go to a
    temporary home."""
    home = tmp_path_factory.mktemp("home")
    patch = pytest.MonkeyPatch()
    for name, sub in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
    ):
        (home / sub).mkdir()
        patch.setenv(name, str(home / sub))
    # Nothing here may reach the real ACP Registry: a closed port fails at once, and acp-tui
    # falls back to its packaged snapshot.
    patch.setenv("ACP_TUI_REGISTRY_URL", "http://127.0.0.1:9/registry.json")
    yield
    patch.undo()
