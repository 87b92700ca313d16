"""Sessions across runs: listing (the agent's and acp-tui's records), resuming, loading,
continuing from the record when the agent cannot; against the demo agent and the official
Python SDK's example agent; and several sessions at once."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest

from acp_tui.conversation.opening import (
    find_session,
    fork_conversation,
    list_sessions,
    open_conversation,
)
from acp_tui.protocol import methods as m
from acp_tui.protocol.content import text_block
from acp_tui.protocol.jsonrpc import METHOD_NOT_FOUND, RpcError
from acp_tui.records import Recorder, RecordStore
from acp_tui.records.codec import recorded_state
from acp_tui.session import reducer
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission
from acp_tui.session.state import Message, Notice
from tests.support import TEST_AGENTS
from tests.support.cli import run_cli
from tests.support.schema import validate_transcript

VERSIONS = pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
SDK_LOAD_AGENT = TEST_AGENTS / "sdk_load_agent.py"


async def allow(pending: PendingPermission) -> None:
    pending.select(pending.request.options[0].option_id)


def demo(tmp_path: Path) -> list[str]:
    return [sys.executable, "-m", "acp_tui.demo", "--speed", "0", "--data-dir", str(tmp_path / "d")]


def client(argv: list[str], tmp_path: Path, version: int = 1, name: str = "t") -> AgentClient:
    transcript = tmp_path / f"transcript-{name}.jsonl"
    options = ClientOptions(cwd=tmp_path, protocol_version=version, transcript=transcript)
    return AgentClient(argv, options, decide_permission=allow)


def sent_methods(tmp_path: Path, name: str) -> list[str]:
    lines = (tmp_path / f"transcript-{name}.jsonl").read_text().splitlines()
    messages = [json.loads(line)["msg"] for line in lines if json.loads(line)["dir"] == "send"]
    return [m["method"] for m in messages if isinstance(m, dict) and "method" in m]


def sent(tmp_path: Path, name: str, method: str) -> list[dict[str, Any]]:
    lines = (tmp_path / f"transcript-{name}.jsonl").read_text().splitlines()
    messages = [json.loads(line)["msg"] for line in lines if json.loads(line)["dir"] == "send"]
    return [m["params"] for m in messages if isinstance(m, dict) and m.get("method") == method]


def texts(state: Any) -> list[tuple[str, str]]:
    return [(i.role, i.text) for i in state.timeline if isinstance(i, Message)]


async def first_conversation(tmp_path: Path, store: RecordStore, version: int) -> str:
    first = client(demo(tmp_path), tmp_path, version, "first")
    try:
        await first.start()
        opened = await open_conversation(first, store, "demo")
        assert opened.how == "new"
        assert await opened.session.prompt([text_block("/title Keep me")]) == "end_turn"
        assert await opened.session.prompt([text_block("hello")]) == "end_turn"
        opened.close()
        return opened.session.id
    finally:
        await first.close()


@VERSIONS
async def test_resume_with_the_record_and_replay_without_it(tmp_path: Path, version: int) -> None:
    store = RecordStore.open(tmp_path / "h.sqlite3")
    assert store is not None
    session_id = await first_conversation(tmp_path, store, version)
    [record] = store.conversations()
    expected = texts(recorded_state(store, record))
    assert [role for role, _ in expected] == ["user", "agent", "user", "agent"]

    second = client(demo(tmp_path), tmp_path, version, "second")
    try:
        await second.start()
        [entry] = await list_sessions(second, store, "demo", tmp_path)
        assert (entry.session_id, entry.title, entry.source) == (
            session_id,
            "Keep me",
            "agent, local",
        )
        assert find_session([entry], "") is entry and find_session([entry], session_id[:8]) is entry
        # With a record: resumed, no replay, the record is the history; and it goes on.
        opened = await open_conversation(second, store, "demo", session_id=session_id)
        assert opened.how == "resumed"
        assert texts(opened.session.state) == expected
        assert await opened.session.prompt([text_block("and more")]) == "end_turn"
        opened.close()
        await second.close_session(opened.session)
        assert second.sessions == {}
        # Without one (another client, say): the agent replays the history.
        replayed = await open_conversation(second, None, "demo", session_id=session_id)
        assert replayed.how == "loaded"
        assert [t for t in texts(replayed.session.state)][:4] == expected
    finally:
        await second.close()
    resume, load = (
        sent(tmp_path, "second", "session/resume"),
        sent(tmp_path, "second", "session/load"),
    )
    if version == 1:
        assert len(resume) == 1 and "replayFrom" not in resume[0] and len(load) == 1
    else:
        assert [("replayFrom" in params) for params in resume] == [False, True]
        assert resume[1]["replayFrom"] == {"type": "start"} and load == []
    closed = [params["sessionId"] for params in sent(tmp_path, "second", "session/close")]
    assert closed == [session_id, session_id]  # on leaving it, and on quitting
    validate_transcript(tmp_path / "transcript-second.jsonl", version=version, sender="client")
    [record] = store.conversations()  # the same conversation, one record
    assert [text for _, text in texts(recorded_state(store, record))][-2:][0] == "and more"


@VERSIONS
async def test_a_fork_goes_on_apart_from_its_session(tmp_path: Path, version: int) -> None:
    """`session/fork`: the fork shows a copy of the history, the agent remembers it there, and
    it is recorded on its own; what happens in it leaves the session it came from as it was,
    in acp-tui, at the agent and in the record."""
    store = RecordStore.open(tmp_path / "h.sqlite3")
    assert store is not None
    agent = client(demo(tmp_path), tmp_path, version, "fork")
    try:
        await agent.start()
        assert agent.info.supports("fork")
        opened = await open_conversation(agent, store, "demo")
        source = opened.session
        assert await source.prompt([text_block("/title Keep me")]) == "end_turn"
        assert await source.prompt([text_block("hello")]) == "end_turn"
        history = texts(source.state)
        forked = await fork_conversation(agent, store, "demo", source.id, source.state)
        fork = forked.session
        assert (forked.how, fork.state.title) == ("forked", "Keep me (fork)")
        assert fork.id != source.id and texts(fork.state) == history
        assert fork.state.turn == source.state.turn == 2
        notice = fork.state.timeline[-1]
        assert isinstance(notice, Notice) and notice.title == "A fork of the session above"
        assert await fork.prompt([text_block("only in the fork")]) == "end_turn"
        assert texts(source.state) == history
        titles = {info.session_id: info.title for info in await agent.list_sessions()}
        assert (titles[source.id], titles[fork.id]) == ("Keep me", "Keep me (fork)")
        opened.close()
        forked.close()
        # The agent's copy: another client loading the fork gets the history, then the turn.
        await agent.close_session(fork)
        reloaded = await open_conversation(agent, None, "demo", session_id=fork.id)
        assert texts(reloaded.session.state)[: len(history) + 1] == [
            *history,
            ("user", "only in the fork"),
        ]
    finally:
        await agent.close()
    [params] = sent(tmp_path, "fork", "session/fork")
    assert (params["sessionId"], params["cwd"]) == (source.id, str(tmp_path))
    validate_transcript(tmp_path / "transcript-fork.jsonl", version=version, sender="client")
    records = {record.session_id: record for record in store.conversations()}
    assert texts(recorded_state(store, records[source.id])) == history
    recorded_fork = texts(recorded_state(store, records[fork.id]))
    assert recorded_fork[: len(history) + 1] == [*history, ("user", "only in the fork")]


async def test_the_record_carries_on_when_the_agent_lost_the_session(tmp_path: Path) -> None:
    store = RecordStore.open(tmp_path / "h.sqlite3")
    assert store is not None
    session_id = await first_conversation(tmp_path, store, 1)
    (tmp_path / "d" / f"{session_id}.json").unlink()  # the demo forgets it
    agent = client(demo(tmp_path), tmp_path, 1, "lost")
    try:
        await agent.start()
        [entry] = await list_sessions(agent, store, "demo", tmp_path)
        assert entry.source == "local"
        opened = await open_conversation(agent, store, "demo", record=entry.record)
        assert opened.how == "record" and "Unknown session" in (opened.notice or "")
        session = opened.session
        assert session.id != session_id
        assert texts(session.state)[:4] == texts(recorded_state(store, entry.record))
        assert session.state.timeline[-1].severity == "warning"
        assert await session.prompt([text_block("still there?")]) == "end_turn"
        opened.close()
    finally:
        await agent.close()
    [record] = store.conversations()
    assert record.session_id == session.id  # the conversation goes on under the new id
    assert texts(recorded_state(store, record))[-2][1] == "still there?"


def sdk_record(store: RecordStore, cwd: Path, agent: str, argv: list[str]) -> None:
    """A recorded conversation with the SDK agent, session "0" (ids restart with each process)."""
    fake: Any = SimpleNamespace(info=AgentInfo(), options=ClientOptions(cwd=cwd))
    from acp_tui.session.session import Session

    session = Session(fake, "0")
    recorder = Recorder(store, session, agent=agent, command=argv)
    session.emit_all(reducer.begin_turn(session.state, [text_block("remember me")]))
    session.apply(reducer.AgentMessageChunk(content=text_block("Client sent: remember me")))
    session.emit(reducer.end_turn(session.state, "end_turn"))
    recorder.close()


async def test_official_python_sdk_agent(
    tmp_path: Path, python_sdk_example_agent: list[str]
) -> None:
    """The example agent offers neither load nor resume: the record is shown and the talk goes
    on in a new session. Run with `loadSession` advertised, its (empty) load is used, and the
    record is kept as the history."""
    store = RecordStore.open(tmp_path / "h.sqlite3")
    assert store is not None
    plain = client(python_sdk_example_agent, tmp_path, 1, "plain")
    loading_argv = [sys.executable, str(SDK_LOAD_AGENT), python_sdk_example_agent[-1]]
    loading = client(loading_argv, tmp_path, 1, "loading")
    sdk_record(store, tmp_path, "sdk", python_sdk_example_agent)
    sdk_record(store, tmp_path, "sdk-loading", loading_argv)
    try:
        await asyncio.gather(plain.start(), loading.start())
        assert plain.reopen_method() is None and loading.reopen_method() == "load"
        with pytest.raises(RpcError) as raised:
            await open_conversation(plain, None, "sdk", session_id="0")
        assert raised.value.code == METHOD_NOT_FOUND
        carried = await open_conversation(plain, store, "sdk", session_id="0")
        assert carried.how == "record"
        assert await carried.session.prompt([text_block("next")]) == "end_turn"
        assert texts(carried.session.state)[0] == ("user", "remember me")
        assert texts(carried.session.state)[-1] == ("agent", "Client sent:next")

        fresh = await open_conversation(loading, None, "sdk-loading", session_id="7")
        assert fresh.how == "loaded" and fresh.session.state.timeline == []
        kept = await open_conversation(loading, store, "sdk-loading", session_id="0")
        assert kept.how == "resumed"
        assert texts(kept.session.state) == [
            ("user", "remember me"),
            ("agent", "Client sent: remember me"),
        ]
        assert await kept.session.prompt([text_block("again")]) == "end_turn"
        kept.close()
        carried.close()
    finally:
        await asyncio.gather(plain.close(), loading.close())
    assert "session/load" not in sent_methods(tmp_path, "plain")
    assert sent_methods(tmp_path, "loading").count("session/load") == 2
    for agent, last in (("sdk", "Client sent:next"), ("sdk-loading", "Client sent:again")):
        [record] = store.conversations(agent=agent)
        recorded = texts(recorded_state(store, record))
        assert (recorded[0], recorded[-1]) == (("user", "remember me"), ("agent", last))


async def test_two_sessions_at_once(tmp_path: Path) -> None:
    """Two agent processes, each with a session streaming at the same time, recorded apart."""
    store = RecordStore.open(tmp_path / "h.sqlite3")
    assert store is not None
    one = client(demo(tmp_path), tmp_path, 1, "one")
    two = client(demo(tmp_path), tmp_path, 2, "two")
    states: dict[str, list[str]] = {}
    try:
        await asyncio.gather(one.start(), two.start())
        first, second = await asyncio.gather(
            open_conversation(one, store, "demo-one"), open_conversation(two, store, "demo-two")
        )

        def watch(name: str) -> Any:
            states[name] = []
            return lambda session, change: states[name].append(session.state.status)

        first.session.listeners.append(watch("one"))
        second.session.listeners.append(watch("two"))
        results = await asyncio.gather(
            first.session.prompt([text_block("long 3000")]),
            second.session.prompt([text_block("/plan")]),
        )
        assert results == ["end_turn", "end_turn"]
        first.close()
        second.close()
    finally:
        await asyncio.gather(one.close(), two.close())
    assert "running" in states["one"] and states["one"][-1] == "idle"
    assert "running" in states["two"] and states["two"][-1] == "idle"
    by_agent = {r.agent: r for r in store.conversations()}
    assert set(by_agent) == {"demo-one", "demo-two"}
    one_state = recorded_state(store, by_agent["demo-one"])
    assert "3000" in one_state.timeline[-1].text and not one_state.plans
    assert recorded_state(store, by_agent["demo-two"]).plans


def test_a_providers_list_is_read_leniently() -> None:
    """As the schema allows: a null or odd `supported` (its other items skipped when shown),
    a null `required`, no `current` (switched off), unknown fields."""
    data = (
        b'{"providers": [{"providerId": "main", "supported": ["openai", {"x": 1}], '
        b'"required": null, "current": {"apiType": "openai", "baseUrl": "https://gw"}, '
        b'"_meta": {}}, {"providerId": "spare", "supported": null, "extra": 3}]}'
    )
    main, spare = msgspec.json.decode(data, type=m.ListProvidersResponse).providers
    assert (main.supported, main.required, main.current) == (
        ["openai", {"x": 1}],
        None,
        m.ProviderCurrent("openai", "https://gw"),
    )
    assert (spare.provider_id, spare.supported, spare.current) == ("spare", None, None)


def test_the_command_line_way(tmp_path: Path) -> None:
    """Configure an agent, talk, come back with --resume, list, export."""
    config = tmp_path / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        'default_agent = "mine"\n[agents.mine]\n'
        f'command = ["{sys.executable}", "-m", "acp_tui.demo"]\nmode = "code"\nmodel = "nope"\n'
    )
    nothing = run_cli(tmp_path, "--resume", "-p", "hi")
    assert (nothing.returncode, nothing.stderr) == (
        1,
        "acp-tui: no earlier session with mine here to resume\n",
    )
    first = run_cli(tmp_path, "-p", "/title Project notes", "-p", "what mode?")
    assert first.returncode == 0, first.stderr
    assert (
        "acp-tui: mine: unknown model 'nope'; the agent offers: demo-fast, demo-smart"
        in first.stderr
    )
    assert "code" in first.stdout.lower()  # the demo answers in code mode
    listed = run_cli(tmp_path, "sessions")
    assert listed.returncode == 0, listed.stderr
    assert f"Sessions with mine in {tmp_path}:" in listed.stdout
    [row] = [line for line in listed.stdout.splitlines() if line.startswith("sess_")]
    session_id = row.split()[0]
    assert row.endswith("agent, local  Project notes")
    again = run_cli(tmp_path, "--resume", "-p", "still me?")
    assert again.returncode == 0, again.stderr
    assert "still me?" in again.stdout and "unknown model" not in again.stderr
    by_prefix = run_cli(tmp_path, "--resume", session_id[:9], "-p", "third")
    assert by_prefix.returncode == 0, by_prefix.stderr
    unknown = run_cli(tmp_path, "--resume", "sess_nope", "-p", "x")
    assert unknown.returncode == 1
    assert "could not open the session: Unknown session: sess_nope" in unknown.stderr
    everything = run_cli(tmp_path, "sessions", "--all")
    assert session_id in everything.stdout and "mine" in everything.stdout
    exported = run_cli(tmp_path, "export", session_id)
    assert exported.stdout.startswith("# Project notes\n")
    assert exported.stdout.count("## You") == 4
