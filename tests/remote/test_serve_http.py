"""`acp-tui serve` over the Streamable HTTP profile (HTTP/2 on loopback), fronting the demo
agent: `initialize` answered in its POST, the rest on the connection's and the session's SSE
streams, a permission answered by POST, a cancel, a session stream lost mid-turn that opens
again for the rest (and with `Last-Event-ID`, for what it missed), the RFD's resume flow, and
an agent that dies."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from tests.remote.serve_support import HttpClient, http_client, prompt, request, served, text_of


async def _session(client: HttpClient, cwd: Path) -> str:
    answer = await client.initialize()
    assert answer["result"]["connectionId"] == client.connection_id
    await client.open_stream()
    new = request(2, "session/new", {"cwd": str(cwd), "mcpServers": []})
    assert (await client.post(new)).status_code == 202
    session: str = (await client.answer(2))["result"]["sessionId"]
    await client.open_stream(session)
    return session


async def test_a_turn_with_a_permission_and_a_cancel_over_http2(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        async with http_client(server.url) as client:
            session = await _session(client, tmp_path)
            sent = await client.post(prompt(3, session, "permission"), session)
            assert (sent.status_code, sent.http_version) == (202, "HTTP/2")
            assert "acp-connection-id=" in sent.headers["set-cookie"]
            asked = await client.until(
                lambda m: m.get("method") == "session/request_permission", session
            )
            outcome = {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
            answer = {"jsonrpc": "2.0", "id": asked["id"], "result": outcome}
            assert (await client.post(answer, session)).status_code == 202
            done = await client.answer(3, session)
            assert done["result"]["stopReason"] == "end_turn"
            assert "reject once" in text_of(client.streams[session])
            # Session messages go on the session's stream only.
            assert all("sessionId" not in m.get("params", {}) for m in client.streams[None])

            await client.post(prompt(4, session, "slow 30"), session)
            await client.until(lambda m: "⏳ 1/30" in text_of([m]), session)
            cancel = {"jsonrpc": "2.0", "method": "session/cancel"}
            await client.post(cancel | {"params": {"sessionId": session}}, session)
            assert (await client.answer(4, session))["result"]["stopReason"] == "cancelled"

            deleted = await client.client.delete(server.url, headers=client.headers())
            assert deleted.status_code == 202
            assert "ended by the client (DELETE)" in server.wait_for(r"ended: ")
        assert server.stop() == 0


async def test_a_session_stream_lost_mid_turn_opens_again_for_the_rest(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        async with http_client(server.url) as client:
            session = await _session(client, tmp_path)
            await client.post(prompt(3, session, "slow 4"), session)
            await client.until(lambda m: "⏳ 1/4" in text_of([m]), session)
            client.close_stream(session)
            before = list(client.streams[session])
            client.streams[session] = []
            # As a client does: an event the server sent as the stream closed never arrived.
            await client.open_stream(session, last_event_id=client.event_ids[session][-1])
            done = await client.answer(3, session)
            assert done["result"]["stopReason"] == "end_turn"
            ticks = re.findall(r"⏳ (\d+)/", text_of(before + client.streams[session]))
            assert sorted(map(int, ticks)) == [1, 2, 3, 4]
        assert server.stop() == 0
        assert "1 reconnect;" in server.wait_for(r"ended: the server shut down")


async def test_a_session_loads_on_a_new_connection_as_the_rfd_resumes(tmp_path: Path) -> None:
    # The demo agent keeps its sessions on disk (in the test's data directory), so the agent of
    # a new connection can load the session of the one before.
    demo = [sys.executable, "-m", "acp_tui.demo", "--speed", "0"]
    with served(tmp_path, agent=demo) as server:
        async with http_client(server.url) as client:
            session = await _session(client, tmp_path)
            await client.post(prompt(3, session, "markdown"), session)
            assert (await client.answer(3, session))["result"]["stopReason"] == "end_turn"
            said = text_of(client.streams[session])
            await client.client.delete(server.url, headers=client.headers())
        async with http_client(server.url) as client:
            await client.initialize()
            await client.open_stream()
            await client.open_stream(session)  # before session/load names it, as the RFD does
            params = {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
            loading = await client.post(request(2, "session/load", params), session)
            assert loading.status_code == 202
            assert "error" not in await client.answer(2)  # on the connection's stream
            # The replay, on the session's (another HTTP/2 stream: it may come in after).
            await client.until(lambda _: text_of(client.streams[session]) == said, session)
        assert server.stop() == 0


async def test_a_stream_opened_again_with_last_event_id_gets_what_it_missed(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        async with http_client(server.url) as client:
            session = await _session(client, tmp_path)
            await client.post(prompt(3, session, "slow 4"), session)
            await client.until(lambda m: "⏳ 2/4" in text_of([m]), session)
            client.close_stream(session)
            # Say that the second tick never arrived: it is sent again, before the rest.
            ticks = [i for i, m in enumerate(client.streams[session]) if "⏳" in text_of([m])]
            had = client.event_ids[session][ticks[0]]
            client.streams[session] = []
            await client.open_stream(session, last_event_id=had)
            await client.answer(3, session)
            again = re.findall(r"⏳ (\d+)/", text_of(client.streams[session]))
            assert again == ["2", "3", "4"]
        assert server.stop() == 0


async def test_an_agent_that_dies_ends_its_streams_and_its_connection(tmp_path: Path) -> None:
    agent = [sys.executable, str(Path(__file__).parent.parent / "agents" / "dies_mid_turn.py")]
    with served(tmp_path, agent=agent) as server:
        async with http_client(server.url) as client:
            await client.initialize()
            await client.open_stream()
            await client.post(request(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
            await client.answer(2)
            await client.post(prompt(3, "s", "go"), "s")
            assert "ended: the agent exited with code 3" in server.wait_for(r"ended: ")
            await asyncio.wait_for(client.reader_done(None), 30)  # the SSE stream ended
            gone = await client.post(prompt(4, "s", "again"), "s")
            assert gone.status_code == 404
            assert "it ended, or never was" in gone.json()["error"]["message"]
        assert server.stop() == 0


async def test_a_fresh_initialize_is_a_new_connection_whatever_cookie_it_carries(
    tmp_path: Path,
) -> None:
    # A client that keeps cookies, as the RFD asks, starting over while its last connection
    # waits out its grace period: the cookie named that connection, whose agent refused a
    # second initialize ("Already initialized").
    with served(tmp_path) as server:
        async with http_client(server.url) as client:
            first = await client.initialize()
            assert client.client.cookies.get("acp-connection-id") == client.connection_id
            anew = HttpClient(client.url, client.client)  # the same cookie jar, no header
            second = await anew.initialize()
            assert "result" in second, second
            assert second["result"]["connectionId"] != first["result"]["connectionId"]
        assert server.stop() == 0
