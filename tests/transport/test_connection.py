"""The JSON-RPC peer over real pipes, against an agent that writes exactly what a test says."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_tui.protocol.jsonrpc import ConnectionClosed, RpcError, method_not_found
from acp_tui.protocol.updates import SessionNotification
from acp_tui.transport.connection import Connection
from acp_tui.transport.launcher import AgentProcess
from acp_tui.transport.transcript import Transcript
from tests.support import TEST_AGENTS

RAW_AGENT = TEST_AGENTS / "raw_agent.py"


class Recorder:
    """A handler that keeps what it is given and answers `ping` requests."""

    def __init__(self) -> None:
        self.notifications: list[tuple[str, Any]] = []
        self.requests: list[tuple[str, Any]] = []
        self.problems: list[str] = []

    async def handle_request(self, method: str, params: msgspec.Raw) -> Any:
        self.requests.append((method, msgspec.json.decode(params or b"null")))
        if method == "ping":
            return {"pong": True}
        raise method_not_found(method)

    def handle_notification(self, method: str, params: msgspec.Raw) -> None:
        self.notifications.append((method, msgspec.json.decode(params)))


class Peer:
    def __init__(self, tmp_path: Path, script: dict[str, Any]) -> None:
        self.script_path = tmp_path / "script.json"
        self.script_path.write_text(json.dumps(script))
        self.received_path = tmp_path / "received.jsonl"
        self.transcript_path = tmp_path / "transcript.jsonl"
        self.recorder = Recorder()

    async def __aenter__(self) -> Peer:
        argv = [sys.executable, str(RAW_AGENT), str(self.script_path), str(self.received_path)]
        self.process = await AgentProcess.start(argv, self.script_path.parent)
        self.transcript = Transcript(self.transcript_path)
        self.connection = Connection(
            self.process.stdout,
            self.process.stdin,
            self.recorder,
            transcript=self.transcript,
            on_problem=self.recorder.problems.append,
        )
        self.reader = asyncio.create_task(self.connection.run())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.process.close()
        await asyncio.wait_for(self.reader, 5)
        self.transcript.close()

    def received(self) -> list[Any]:
        if not self.received_path.exists():
            return []
        return [json.loads(line) for line in self.received_path.read_text().splitlines()]

    def transcript_entries(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.transcript_path.read_text().splitlines()]


def notification(text: str) -> str:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": update},
        }
    )


async def wait_for(condition: Any, timeout: float = 10) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_a_50_mb_line_arrives_whole(tmp_path: Path) -> None:
    big = "x" * (50 * 1024 * 1024)
    async with Peer(tmp_path, {"start": [notification(big), notification("after")]}) as peer:
        await wait_for(lambda: len(peer.recorder.notifications) == 2)
    texts = [p["update"]["content"]["text"] for _, p in peer.recorder.notifications]
    assert len(texts[0]) == len(big) and texts[1] == "after"


async def test_log_lines_on_stdout_are_kept_not_fatal(tmp_path: Path) -> None:
    script = {"start": ["Starting agent v1.2 ...", "{not json", notification("hi")]}
    async with Peer(tmp_path, script) as peer:
        await wait_for(lambda: peer.recorder.notifications)
        await asyncio.sleep(0.2)
        received = peer.received()
    assert len(peer.recorder.problems) == 2
    assert "Starting agent" in peer.recorder.problems[0]
    # A log line gets no answer; a broken message gets a parse error.
    assert [m["error"]["code"] for m in received] == [-32700]
    raw = [e["raw"] for e in peer.transcript_entries() if e["msg"] is None]
    assert raw == ["Starting agent v1.2 ...", "{not json"]


async def test_ids_are_per_sender_and_requests_are_answered(tmp_path: Path) -> None:
    # The agent asks with id 0 while our request 0 is pending, then answers ours.
    script = {
        "on": {
            "initialize": [
                '{"jsonrpc":"2.0","id":0,"method":"ping","params":{}}',
                '{"jsonrpc":"2.0","id":"x-1","method":"nope","params":{}}',
                '{"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}',
            ]
        }
    }
    async with Peer(tmp_path, script) as peer:
        result = await peer.connection.request("initialize", {"protocolVersion": 1})
        await wait_for(lambda: len(peer.received()) == 3)
        received = peer.received()
    assert msgspec.json.decode(result) == {"protocolVersion": 1}
    assert received[1] == {"jsonrpc": "2.0", "id": 0, "result": {"pong": True}}
    assert received[2]["id"] == "x-1" and received[2]["error"]["code"] == -32601


async def test_error_responses_raise_and_unknown_ids_are_reported(tmp_path: Path) -> None:
    script = {
        "on": {
            "fail": [
                '{"jsonrpc":"2.0","id":999,"result":{}}',
                '{"jsonrpc":"2.0","id":$ID,"error":{"code":-32000,"message":"Auth required"}}',
                '{"jsonrpc":"2.0","id":$ID,"result":{}}',
            ]
        }
    }
    async with Peer(tmp_path, script) as peer:
        with pytest.raises(RpcError) as caught:
            await peer.connection.request("fail", {})
        await wait_for(lambda: len(peer.recorder.problems) == 2)
    assert caught.value.code == -32000
    assert all("never sent or had" in p for p in peer.recorder.problems)


async def test_a_batch_is_answered_with_one_array_once_each_request_is_served(
    tmp_path: Path,
) -> None:
    """ACP v2 follows JSON-RPC 2.0's batches: the requests' answers (and an invalid entry's
    error) come back as one array, notifications get none; an empty batch is one error."""
    batch = [
        json.loads(notification("one")),
        {"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {}},
        {"jsonrpc": "2.0", "method": 7},
        json.loads(notification("two")),
        {"jsonrpc": "2.0", "id": "eight", "method": "no/such", "params": {}},
    ]
    only_notifications = [json.loads(notification("three"))]
    lines = [json.dumps(batch), json.dumps(only_notifications), "[]"]
    async with Peer(tmp_path, {"start": lines}) as peer:
        await wait_for(lambda: len(peer.received()) == 2 and len(peer.recorder.notifications) == 3)
        await asyncio.sleep(0.1)  # nothing more comes
        received = peer.received()
    texts = [p["update"]["content"]["text"] for _, p in peer.recorder.notifications]
    assert texts == ["one", "two", "three"]
    [answers] = [answer for answer in received if isinstance(answer, list)]
    by_id = {str(answer["id"]): answer for answer in answers}
    assert len(answers) == 3 and by_id["7"] == {"jsonrpc": "2.0", "id": 7, "result": {"pong": True}}
    assert by_id["eight"]["error"] == {"code": -32601, "message": "Method not found: no/such"}
    assert by_id["None"]["error"]["code"] == -32600
    assert {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Empty batch"}} in (
        received
    )
    sent = [e["msg"] for e in peer.transcript_entries() if e["dir"] == "send"]
    assert answers in sent  # recorded as it went: one line


async def test_json_that_is_not_json_rpc_is_answered_invalid_request(tmp_path: Path) -> None:
    script = {"start": ['{"jsonrpc":"2.0","id":5,"method":3}', "[1, 2]", "42"]}
    async with Peer(tmp_path, script) as peer:
        await wait_for(lambda: len(peer.recorder.problems) >= 3 and peer.received())
        received = peer.received()
    assert received[0]["id"] == 5 and received[0]["error"]["code"] == -32600


async def test_pending_requests_fail_when_the_agent_dies(tmp_path: Path) -> None:
    async with Peer(tmp_path, {"on": {"hang": []}}) as peer:
        pending = asyncio.create_task(peer.connection.request("hang", {}))
        await asyncio.sleep(0.2)
        peer.process.stdin.close()
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(pending, 10)


async def test_the_transcript_records_both_ways_in_order(tmp_path: Path) -> None:
    async with Peer(tmp_path, {}) as peer:
        await peer.connection.request("hello", {"a": 1})
    entries = peer.transcript_entries()
    assert [e["dir"] for e in entries] == ["send", "recv"]
    assert entries[0]["msg"] == {"jsonrpc": "2.0", "id": 0, "method": "hello", "params": {"a": 1}}
    assert entries[1]["msg"]["result"] == {"echo": "hello"}
    assert entries[0]["ts"] <= entries[1]["ts"]


async def test_text_that_is_not_unicode_gets_an_answer_with_its_id(tmp_path: Path) -> None:
    bad_request = (
        '{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"path":"/\\ud800"}}'
    )
    bad_update = notification("caf\udce9")  # a lone surrogate, escaped by json.dumps
    async with Peer(tmp_path, {"start": [bad_request, bad_update]}) as peer:
        await wait_for(lambda: peer.received() and peer.recorder.notifications)
        received = peer.received()
    assert received[0]["id"] == 9 and received[0]["error"]["code"] == -32602
    assert "not valid UTF-8" in received[0]["error"]["message"]
    ((_, params),) = peer.recorder.notifications
    assert params["update"]["content"]["text"] == "caf?"


async def test_an_answer_with_neither_result_nor_error_fails_the_request(tmp_path: Path) -> None:
    async with Peer(tmp_path, {"on": {"ask": ['{"jsonrpc":"2.0","id":$ID}']}}) as peer:
        with pytest.raises(RpcError, match="answered ask with nothing"):
            await asyncio.wait_for(peer.connection.request("ask", {}), 10)
        assert [m.get("method") for m in peer.received()] == ["ask"]


async def test_bad_batches_are_answered(tmp_path: Path) -> None:
    script = {"start": ["[INFO] not a batch", '[{"jsonrpc":"2.0","method":7}]', "[]"]}
    async with Peer(tmp_path, script) as peer:
        await wait_for(lambda: len(peer.received()) == 2)
        await asyncio.sleep(0.1)
        received = peer.received()
    # The batch's invalid entry in an array of its own; the empty batch, one error alone.
    answers = [m for answer in received for m in (answer if isinstance(answer, list) else [answer])]
    assert sorted(isinstance(answer, list) for answer in received) == [False, True]
    codes = sorted(m["error"]["code"] for m in answers)
    assert codes == [-32600, -32600] and all(m["id"] is None for m in answers)


async def test_a_line_over_the_cap_is_dropped_and_the_stream_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Connection, "max_line", 1024 * 1024)
    huge = notification("y" * (3 * 1024 * 1024))
    async with Peer(tmp_path, {"start": [huge, notification("after")]}) as peer:
        await wait_for(lambda: peer.recorder.notifications)
    texts = [p["update"]["content"]["text"] for _, p in peer.recorder.notifications]
    assert texts == ["after"]
    assert peer.recorder.problems == [
        "dropped a message of 3.0 MB (session/update) from the agent: more than acp-tui takes "
        "(1.0 MB, `max_line` in its config)"
    ]
    [entry] = [e for e in peer.transcript_entries() if "error" in e]
    assert entry["error"].startswith("dropped: more than acp-tui takes")


@pytest.mark.parametrize("id_last", [False, True])
async def test_a_request_over_the_cap_is_answered_with_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, id_last: bool
) -> None:
    """Its id found at either end, as peers write it before or after the params."""
    monkeypatch.setattr(Connection, "max_line", 1024 * 1024)
    params = {"sessionId": "s", "path": "/w/big.txt", "content": "z" * (2 * 1024 * 1024)}
    request = {"jsonrpc": "2.0", "id": "w-1", "method": "fs/write_text_file", "params": params}
    if id_last:
        request["id"] = request.pop("id")
    line = json.dumps(request)
    async with Peer(tmp_path, {"start": [line, notification("after")]}) as peer:
        await wait_for(lambda: peer.recorder.notifications)
        await wait_for(peer.received)
    assert not peer.recorder.requests  # never served
    [answer] = peer.received()
    assert answer["id"] == "w-1" and answer["error"]["code"] == -32600
    assert "the message is more than acp-tui takes (1.0 MB" in answer["error"]["message"]


@pytest.mark.parametrize("piece", [1, 7, 100, 333, 1 << 20])
async def test_typed_updates_arrive_whole_and_in_order_however_the_reads_cut_them(
    piece: int,
) -> None:
    seen: list[str] = []
    typed = {
        "session/update": (
            SessionNotification,
            lambda run: seen.extend(n.update.content.text for n in run),
        )
    }
    texts = [f"update {i} " * (i % 5) for i in range(60)]
    data = "".join(notification(text) + "\n" for text in texts).encode()
    reader = asyncio.StreamReader()

    async def agent() -> None:
        for start in range(0, len(data), piece):
            reader.feed_data(data[start : start + piece])
            await asyncio.sleep(0)  # each piece is a read of its own
        reader.feed_eof()

    feeding = asyncio.create_task(agent())
    await Connection(reader, None, Recorder(), typed_notifications=typed).run()  # type: ignore[arg-type]
    await feeding
    assert seen == texts


async def test_a_read_of_updates_shown_in_the_inspector_is_handed_on_as_one_run() -> None:
    """With an inspector (`on_traffic`) the lines of a read are each shown, all before any is
    handled, and handed on together, as without one: a flood's chunks are joined only then."""
    events: list[tuple[str, Any]] = []
    typed = {
        "session/update": (
            SessionNotification,
            lambda run: events.append(("run", [n.update.content.text for n in run])),
        )
    }
    texts = [f"word{i} " for i in range(5)]
    reader = asyncio.StreamReader()
    reader.feed_data("".join(notification(text) + "\n" for text in texts).encode())
    reader.feed_eof()
    await Connection(
        reader,
        None,  # type: ignore[arg-type]
        Recorder(),
        typed_notifications=typed,
        on_traffic=lambda direction, line: events.append((direction, line)),
    ).run()
    assert [kind for kind, _ in events] == ["recv"] * 5 + ["run"]
    assert [
        json.loads(line)["params"]["update"]["content"]["text"] for _, line in events[:5]
    ] == texts
    assert events[5] == ("run", texts)
