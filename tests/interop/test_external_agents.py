"""Smoke test: every external agent starts and answers a v1 `initialize` with a valid response."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.support.schema import validate_message

STARTUP_TIMEOUT_SECONDS = 30  # Python SDK agents spend ~3 s importing before they answer
EXIT_TIMEOUT_SECONDS = 5

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}},
        "clientInfo": {"name": "acp-tui-tests", "version": "0"},
    },
}


async def initialize(argv: list[str]) -> dict[str, Any]:
    """Start the agent, send `initialize`, return its first stdout message, shut it down."""
    agent = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert agent.stdin is not None
    assert agent.stdout is not None
    try:
        agent.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        await agent.stdin.drain()
        line = await asyncio.wait_for(agent.stdout.readline(), STARTUP_TIMEOUT_SECONDS)
        assert line, f"{argv} closed stdout without answering initialize"
        return json.loads(line)
    finally:
        # The protocol's shutdown: close stdin, then terminate whatever is still running.
        agent.stdin.close()
        try:
            await asyncio.wait_for(agent.wait(), EXIT_TIMEOUT_SECONDS)
        except TimeoutError:
            agent.kill()
            await agent.wait()


@pytest.mark.parametrize(
    "agent_fixture",
    ["python_sdk_echo_agent", "python_sdk_example_agent", "ts_sdk_example_agent"],
)
async def test_agent_answers_v1_initialize(
    agent_fixture: str, request: pytest.FixtureRequest
) -> None:
    argv: list[str] = request.getfixturevalue(agent_fixture)
    response = await initialize(argv)
    assert response["id"] == 0
    assert response["result"]["protocolVersion"] == 1
    validate_message(response, version=1, sender="agent", request_method="initialize")
