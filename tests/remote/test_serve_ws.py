"""`acp-tui serve` over the WebSocket profile, fronting the demo agent: a whole turn, a
permission, a cancel, a WebSocket lost mid-turn that comes back for the rest, one that does
not come back in time, an agent's message of 20 MB, and an agent that dies."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosedError, InvalidStatus

from tests.remote.serve_support import (
    initialize,
    prompt,
    request,
    served,
    text_of,
    websocket,
)

AGENTS = Path(__file__).resolve().parent.parent / "agents"


async def _session(client: Any, cwd: Path) -> str:
    assert (await client.call(initialize()))["result"]["protocolVersion"] == 1
    new = await client.call(request(2, "session/new", {"cwd": str(cwd), "mcpServers": []}))
    session: str = new["result"]["sessionId"]
    return session


def _ticks(messages: list[dict[str, Any]]) -> list[int]:
    return [int(n) for n in re.findall(r"⏳ (\d+)/", text_of(messages))]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_turn_streams_and_delete_ends_the_connection(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        async with websocket(server.url) as client:
            session = await _session(client, tmp_path)
            done = await client.call(prompt(3, session, "markdown"))
            assert done["result"]["stopReason"] == "end_turn"
            assert "```" in text_of(client.received)
            headers = {"Acp-Connection-Id": client.connection_id}
            async with httpx.AsyncClient() as http:
                assert (await http.delete(server.url, headers=headers)).status_code == 202
            line = server.wait_for(r"ended: ")
            assert client.connection_id in line and "ended by the client (DELETE)" in line
            pid = int(re.findall(r"agent pid (\d+)", line)[0])
            assert not _alive(pid)
        assert server.stop() == 0


async def test_a_permission_is_asked_of_the_client_and_a_turn_cancelled(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        async with websocket(server.url) as client:
            session = await _session(client, tmp_path)
            await client.send(prompt(3, session, "permission"))
            asked = await client.until(lambda m: m.get("method") == "session/request_permission")
            assert asked["params"]["sessionId"] == session
            outcome = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
            await client.send({"jsonrpc": "2.0", "id": asked["id"], "result": outcome})
            done = await client.until(lambda m: m.get("id") == 3)
            assert done["result"]["stopReason"] == "end_turn"
            assert "allow once" in text_of(client.received)

            await client.send(prompt(4, session, "slow 30"))
            await client.until(lambda m: "⏳ 1/30" in text_of([m]))
            cancel = {"jsonrpc": "2.0", "method": "session/cancel"}
            await client.send(cancel | {"params": {"sessionId": session}})
            done = await client.until(lambda m: m.get("id") == 4)
            assert done["result"]["stopReason"] == "cancelled"
        assert server.stop() == 0


async def test_a_websocket_lost_mid_turn_comes_back_for_the_rest(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        async with websocket(server.url) as client:
            session = await _session(client, tmp_path)
            await client.send(prompt(3, session, "slow 4"))
            await client.until(lambda m: "⏳ 1/4" in text_of([m]))
            connection = client.connection_id
            client.socket.transport.abort()  # the network goes: no close frame
        # The ticks the agent streams meanwhile wait for the client.
        async with websocket(server.url, **{"Acp-Connection-Id": connection}) as again:
            assert again.connection_id == connection
            done = await again.until(lambda m: m.get("id") == 3)
            assert done["result"]["stopReason"] == "end_turn"
            # The ticks of the second after the drop on: none lost, none twice (a tick sent
            # into the dead socket before the server saw it die would be lost: a WebSocket
            # has no Last-Event-ID; the drop comes a second before the next tick).
            assert _ticks(client.received) + _ticks(again.received) == [1, 2, 3, 4]
        assert server.stop() == 0
        assert "1 reconnect;" in server.wait_for(r"ended: the server shut down")


async def test_an_agent_whose_client_does_not_come_back_is_stopped(tmp_path: Path) -> None:
    with served(tmp_path, "--grace", "1") as server:
        async with websocket(server.url) as client:
            await _session(client, tmp_path)
            connection = client.connection_id
        line = server.wait_for(r"ended: no client for 1 s")
        assert not _alive(int(re.findall(r"agent pid (\d+)", line)[0]))
        with pytest.raises(InvalidStatus) as refused:
            async with websocket(server.url, **{"Acp-Connection-Id": connection}):
                pass
        assert refused.value.response.status_code == 404
        assert server.stop() == 0


async def test_a_message_of_many_megabytes_from_the_agent_comes_whole(tmp_path: Path) -> None:
    text = "".join(f"{i:07d} " for i in range(2_500_000))  # 20 MB of text in one update
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    params = {"sessionId": "flood-session", "update": update}
    flood = {"jsonrpc": "2.0", "method": "session/update", "params": params}
    (tmp_path / "flood").write_text(json.dumps(flood) + "\n")
    agent = [sys.executable, str(AGENTS / "flood_agent.py"), str(tmp_path / "flood")]
    with served(tmp_path, agent=agent) as server:
        async with websocket(server.url) as client:
            await client.call(initialize())
            await client.call(request(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
            done = await client.call(prompt(3, "flood-session", "go"))
            assert done["result"]["stopReason"] == "end_turn"
            assert text_of(client.received) == text
        assert server.stop() == 0


async def test_an_agent_that_dies_closes_its_websocket_saying_why(tmp_path: Path) -> None:
    agent = [sys.executable, str(AGENTS / "dies_mid_turn.py")]
    with served(tmp_path, agent=agent) as server:
        async with websocket(server.url) as client:
            await client.call(initialize())
            await client.call(request(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
            await client.send(prompt(3, "s", "go"))
            with pytest.raises(ConnectionClosedError) as closed:
                await client.socket.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
            assert "exited with code 3" in closed.value.rcvd.reason
            assert "model backend exploded" in closed.value.rcvd.reason
        assert "ended: the agent exited with code 3" in server.wait_for(r"ended: ")
        assert server.stop() == 0
