"""What `acp-tui serve` refuses, and how it stops: no listening beyond loopback without a
token, no request without the token, a clear error for bad input (and the server serving on),
and every agent's process group stopped on SIGINT or SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosedError, InvalidStatus

from tests.remote.serve_support import TOKEN, http_client, initialize, served, websocket

BIG = 50 * 1024 * 1024


def test_beyond_loopback_a_token_is_needed(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != TOKEN}
    command = [sys.executable, "-m", "acp_tui", "serve", "--listen", "0.0.0.0:0", "--", "true"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "needs a bearer token: give --token-file FILE or set ACP_TUI_TOKEN" in done.stderr
    (tmp_path / "empty").write_text("\n")
    command[-2:-2] = ["--token-file", str(tmp_path / "empty")]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr.strip()) == (
        2,
        f"acp-tui serve: the token file {tmp_path / 'empty'} is empty",
    )


async def test_every_request_needs_the_token(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("s3cret-token\n")
    args = ("--listen", "0.0.0.0:0", "--token-file", str(tmp_path / "token"))
    with served(tmp_path, *args) as server:
        assert "a bearer token needed" in server.log[0]
        for wrong in ({}, {"Authorization": "Bearer s3cret-tokeN"}):
            async with httpx.AsyncClient() as http:
                refused = await http.post(server.url, json=initialize(), headers=wrong)
            assert refused.status_code == 401
            assert refused.json()["error"]["message"] == "a valid bearer token is needed"
            with pytest.raises(InvalidStatus) as upgrade:
                async with websocket(server.url, **wrong):
                    pass
            assert upgrade.value.response.status_code == 401
        right = {"Authorization": "Bearer s3cret-token"}
        async with http_client(server.url, **right) as client:
            assert (await client.initialize())["result"]["protocolVersion"] == 1
        async with websocket(server.url, **right) as socket:
            assert (await socket.call(initialize()))["result"]["protocolVersion"] == 1
        assert server.stop() == 0


async def test_a_token_from_the_environment_opens_serve_beyond_loopback(tmp_path: Path) -> None:
    with served(tmp_path, env={TOKEN: "from-env"}) as server:
        async with http_client(server.url, Authorization="Bearer from-env") as client:
            assert (await client.initialize())["result"]["protocolVersion"] == 1
        async with httpx.AsyncClient() as http:
            assert (await http.post(server.url, json=initialize())).status_code == 401
        assert server.stop() == 0


async def test_bad_input_gets_a_clear_error_and_the_server_serves_on(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        async with http_client(server.url) as client:
            await client.initialize()
            post = client.client.post
            url, headers = server.url, client.headers()
            json_type = {"Content-Type": "application/json"}

            async def refused(response: httpx.Response, status: int, code: int, says: str) -> None:
                assert response.status_code == status, response.text
                error = response.json()["error"]
                assert error["code"] == code and says in error["message"]

            await refused(
                await post(url, content=b"{not json", headers=headers | json_type),
                400,
                -32700,
                "not JSON",
            )
            batch = json.dumps([initialize()]).encode()
            await refused(
                await post(url, content=batch, headers=headers | json_type),
                501,
                -32600,
                "batch requests are not supported",
            )
            await refused(
                await post(url, content=b"{}", headers=headers | {"Content-Type": "text/plain"}),
                415,
                -32600,
                "application/json",
            )
            await refused(await client.client.get(url, headers=headers), 406, -32600, "Accept")
            await refused(
                await post(url, json=initialize(), headers={"Acp-Connection-Id": "nope"}),
                404,
                -32600,
                "no connection nope here",
            )
            prompt = {"jsonrpc": "2.0", "id": 5, "method": "session/prompt"}
            prompt["params"] = {"sessionId": "s1", "prompt": []}  # type: ignore[assignment]
            async with httpx.AsyncClient() as cookieless:
                answer = await cookieless.post(url, json=prompt)
            await refused(answer, 400, -32600, "no Acp-Connection-Id")
            await refused(
                await post(url, json=prompt, headers=headers),
                400,
                -32600,
                "no Acp-Session-Id: this message is about session s1",
            )
            huge = b'{"jsonrpc":"2.0","method":"x","params":"' + b"x" * BIG + b'"}'
            async with httpx.AsyncClient() as http1:  # h2 uploads crawl (hypercorn's windows)
                answer = await http1.post(url, content=huge, headers=headers | json_type)
            await refused(answer, 413, -32600, "32 MiB at most")
        async with websocket(server.url) as socket:
            headers = {"Acp-Connection-Id": socket.connection_id}
            async with httpx.AsyncClient() as http:
                await refused(
                    await http.post(url, json=initialize(), headers=headers),
                    409,
                    -32600,
                    "WebSocket",
                )
                sse = headers | {"Accept": "text/event-stream"}
                await refused(await http.get(url, headers=sse), 409, -32600, "WebSocket")
            await socket.socket.send("{not json")
            error = await socket.until(lambda m: "error" in m)
            assert error["error"]["code"] == -32700
            assert (await socket.call(initialize()))["result"]["protocolVersion"] == 1
            with pytest.raises(ConnectionClosedError) as closed:
                await socket.socket.send("x" * BIG)
                await socket.socket.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        async with http_client(server.url) as client:
            assert (await client.initialize())["result"]["protocolVersion"] == 1
        assert server.stop() == 0


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, killed and not yet reaped by init, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_stops_every_agent_then_the_server(tmp_path: Path, sig: int) -> None:
    # An agent that leaves a child of its own behind, in its process group.
    agent = [
        "sh",
        "-c",
        f"sleep 600 & exec {sys.executable} -m acp_tui.demo --speed 0 --no-persist",
    ]
    with served(tmp_path, agent=agent) as server:
        async with websocket(server.url) as first, websocket(server.url) as second:
            for client in (first, second):
                assert (await client.call(initialize()))["result"]["protocolVersion"] == 1
            agents = _children(server.process.pid)
            spawned = [child for pid in agents for child in _children(pid)]
            assert len(agents) == 2 and len(spawned) == 2
            server.process.send_signal(sig)
            assert server.process.wait(timeout=30) == 0
        assert server.wait_for(r"stopping: every agent is closed")
        for pid in agents + spawned:
            assert not _alive(pid)


async def test_an_agent_that_cannot_start_is_a_502_that_says_why(tmp_path: Path) -> None:
    with served(tmp_path, agent=["./no-such-agent"]) as server:
        async with httpx.AsyncClient() as http:
            refused = await http.post(server.url, json=initialize())
        assert refused.status_code == 502
        assert "agent command not found" in refused.json()["error"]["message"]
        with pytest.raises(InvalidStatus) as upgrade:
            async with websocket(server.url):
                pass
        assert upgrade.value.response.status_code == 502
        assert "cannot start the agent: agent command not found" in server.wait_for("cannot")
        assert server.stop() == 0
