"""Shared pytest fixtures.

External agents (see `tests/support/external_agents.py` for what each one sends): each
fixture installs its agent once per machine and returns the argv that starts it.
"""

from __future__ import annotations

import pytest

from tests.support import external_agents


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
