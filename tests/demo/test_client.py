"""The demo agent through acp-tui's own client: the `acp-tui` command (headless) and
`AgentClient`, in ACP v1 and v2. Every message the agent sends is checked against the schema.

(`tests/demo/test_agent.py` drives the agent over a bare JSON-RPC connection instead, to look
at the exact messages; here the point is that acp-tui and its demo work together.)
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acp_tui.protocol.content import text_block
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission
from tests.support import TEST_AGENTS
from tests.support.jsonl import terminals, tool_calls
from tests.support.schema import validate_transcript

ACP_TUI = [sys.executable, "-m", "acp_tui"]
DEMO = [sys.executable, "-m", "acp_tui.demo", "--speed", "0"]
VERSIONS = pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])


def demo_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ACP_TUI_DEMO_SPEED": "0",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }


@dataclass
class Run:
    status: int
    out: str
    err: str
    transcript: Path
    version: int

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.splitlines() if line.startswith("{")]

    def turns(self) -> list[list[dict[str, Any]]]:
        """The jsonl events split into turns (each ends with an idle status)."""
        turns: list[list[dict[str, Any]]] = [[]]
        for event in self.events():
            turns[-1].append(event)
            if event["type"] == "status" and event["status"] == "idle" and event["stopReason"]:
                turns.append([])
        return [turn for turn in turns if turn]

    def assert_agent_valid(self) -> None:
        assert validate_transcript(self.transcript, version=self.version, sender="agent") > 0


async def acp_tui(tmp_path: Path, version: int, *args: str, timeout: float = 60) -> Run:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    transcript = tmp_path / f"transcript-{time.monotonic_ns()}.jsonl"
    argv = [*ACP_TUI, "--cwd", str(workspace), "--transcript", str(transcript)]
    argv += ["--protocol-version", str(version), *args]
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=demo_env(tmp_path),
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return Run(process.returncode, out.decode(), err.decode(), transcript, version)


# -- the tour -------------------------------------------------------------------------------------


@VERSIONS
async def test_acp_tui_runs_the_tour_headless(tmp_path: Path, version: int) -> None:
    """`acp-tui -p tour`: no agent command, so the demo agent; nobody to ask, so no edits."""
    run = await acp_tui(tmp_path, version, "-p", "tour")
    assert run.status == 0, run.err
    assert "That's the tour!" in run.out
    assert not (tmp_path / "workspace" / "ACP_DEMO.md").exists()
    run.assert_agent_valid()


@VERSIONS
async def test_the_tour_with_permission_allowed(tmp_path: Path, version: int) -> None:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "README.md").write_text("# Tour test\n")
    run = await acp_tui(
        tmp_path, version, "--permission", "allow", "--output-format", "jsonl", "-p", "/tour"
    )
    assert run.status == 0, run.err
    events = run.events()
    plans = [e for e in events if e["type"] == "plan"]
    assert all(entry["status"] == "completed" for entry in plans[-1]["entries"])
    assert (tmp_path / "workspace" / "ACP_DEMO.md").read_text().startswith("# ACP demo notes")
    kinds = {call["kind"] for call in tool_calls(events).values()}
    assert kinds >= {"read", "edit", "delete", "move", "search", "execute", "think", "fetch"}
    assert any("Hello from a real terminal!" in t["output"] for t in terminals(events).values())
    run.assert_agent_valid()


def sent(transcript: Path, method: str) -> list[dict[str, Any]]:
    """The params of each `method` request acp-tui sent, from a `--transcript`."""
    messages = [json.loads(line) for line in transcript.read_text().splitlines()]
    return [
        entry["msg"]["params"]
        for entry in messages
        if entry["dir"] == "send" and entry["msg"].get("method") == method
    ]


@VERSIONS
async def test_allowed_directories_are_the_sessions_other_roots(
    tmp_path: Path, version: int
) -> None:
    """`--allow-path DIR` reaches an agent that takes more roots as `additionalDirectories`, on
    `session/new` and again when the session is reopened: the demo then works there (it
    refuses anything outside its roots)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("remember the eggs\n")
    read = f"/read {notes}/todo.txt"
    run = await acp_tui(tmp_path, version, "--allow-path", str(notes), "-p", read)
    assert run.status == 0, run.err
    assert "remember the eggs" in run.out
    [new] = sent(run.transcript, "session/new")
    assert new["additionalDirectories"] == [str(notes)]
    resumed = await acp_tui(tmp_path, version, "--allow-path", str(notes), "--resume", "-p", read)
    assert resumed.status == 0, resumed.err
    [reopened] = sent(resumed.transcript, "session/resume") + sent(
        resumed.transcript, "session/load"
    )
    assert reopened["additionalDirectories"] == [str(notes)]
    without = await acp_tui(tmp_path, version, "-p", read)
    assert "outside this session's workspace" in without.out
    assert "additionalDirectories" not in sent(without.transcript, "session/new")[0]
    for transcript in (run.transcript, resumed.transcript):
        assert validate_transcript(transcript, version=version, sender="client") > 0


@VERSIONS
async def test_a_resumed_session_forked_headless_stays_as_it_was(
    tmp_path: Path, version: int
) -> None:
    """`--resume --fork -p …` (a summary, say): the prompt goes to a fork, recorded on its own,
    and the session resumed gets nothing of it."""
    from acp_tui.records import RecordStore
    from acp_tui.records.codec import recorded_state
    from acp_tui.session.state import Message

    first = await acp_tui(tmp_path, version, "-p", "hello")
    assert first.status == 0, first.err
    forked = await acp_tui(tmp_path, version, "--resume", "--fork", "-p", "only in the fork")
    assert forked.status == 0, forked.err
    assert "only in the fork" in forked.out
    [fork] = sent(forked.transcript, "session/fork")
    assert validate_transcript(forked.transcript, version=version, sender="client") > 0
    store = RecordStore.open(tmp_path / "data" / "acp-tui" / "history.sqlite3")
    assert store is not None
    said = {
        record.session_id: [
            item.text
            for item in recorded_state(store, record).timeline
            if isinstance(item, Message) and item.role == "user"
        ]
        for record in store.conversations()
    }
    assert said.pop(fork["sessionId"]) == ["hello"]
    assert list(said.values()) == [["hello", "only in the fork"]]
    alone = await acp_tui(tmp_path, version, "--fork", "-p", "hello")
    assert alone.status == 2 and "--fork forks the session --resume opens" in alone.err
    # A session the agent no longer knows cannot be forked: said so, and no record changes.
    source = next(iter(said))
    shutil.rmtree(tmp_path / "data" / "acp-tui" / "demo-sessions")
    before = [(r.id, r.session_id, r.updated_at) for r in store.conversations()]
    lost = await acp_tui(tmp_path, version, "--resume", source, "--fork", "-p", "again")
    assert lost.status != 0, lost.err
    assert f"session {source} could not be forked: Unknown session" in lost.err
    assert [(r.id, r.session_id, r.updated_at) for r in store.conversations()] == before


@VERSIONS
async def test_provider_routes_reach_the_agent_before_the_session(
    tmp_path: Path, version: int
) -> None:
    """`[agents.NAME.providers.ID]`: set (`providers/set`) or switched off
    (`providers/disable`) right after `initialize`; the demo says where its requests go. A
    route it refuses, and an agent that takes none, are warnings, and the turn runs."""
    config = tmp_path / "config" / "acp-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    rejecting = [
        sys.executable,
        str(TEST_AGENTS / "rejecting_agent.py"),
    ]
    config.write_text(
        f"[agents.d]\ncommand = {json.dumps(DEMO)}\n"
        '[agents.d.providers.main]\napi_type = "openai"\nbase_url = "https://gw.example/v1"\n'
        'headers = { Authorization = "Bearer t", "x-team" = "tui" }\n'
        "[agents.off]\n"
        f"command = {json.dumps(DEMO)}\n"
        "[agents.off.providers.main]\ndisabled = true\n"
        '[agents.off.providers.spare]\napi_type = "_pigeon"\nbase_url = "https://coop"\n'
        f"[agents.plain]\ncommand = {json.dumps(rejecting)}\n"
        '[agents.plain.providers.main]\napi_type = "openai"\nbase_url = "https://gw"\n'
    )
    routed = await acp_tui(tmp_path, version, "--agent", "d", "-p", "/providers")
    assert routed.status == 0, routed.err
    assert "go to **https://gw.example/v1**, spoken as `openai`" in routed.out
    assert "`Authorization`, `x-team`" in routed.out and "Bearer" not in routed.out
    [route] = sent(routed.transcript, "providers/set")
    assert route["headers"] == {"Authorization": "Bearer t", "x-team": "tui"}
    assert routed.err == ""
    off = await acp_tui(tmp_path, version, "--agent", "off", "-p", "/providers")
    assert off.status == 0, off.err
    assert "take my own route: no provider is set" in off.out
    assert sent(off.transcript, "providers/disable") == [{"providerId": "main"}]
    assert "provider 'spare' not set: Unknown provider \"spare\"" in off.err
    for run in (routed, off):
        assert validate_transcript(run.transcript, version=version, sender="client") > 0
    plain = await acp_tui(tmp_path, 1, "--agent", "plain", "-p", "hello")
    assert plain.status == 0, plain.err
    assert "provider settings left out: the agent does not take them (providers)" in plain.err
    assert sent(plain.transcript, "providers/set") == []


def test_more_roots_only_for_an_agent_that_takes_them() -> None:
    for version, capabilities in (
        (1, {"sessionCapabilities": {"additionalDirectories": {}}}),
        (2, {"session": {"additionalDirectories": {}}}),
    ):
        assert AgentInfo(protocol_version=version, capabilities=capabilities).supports(
            "additional_directories"
        )
        assert not AgentInfo(protocol_version=version).supports("additional_directories")
    v1_marker_in_v2 = {"sessionCapabilities": {"additionalDirectories": {}}}
    assert not AgentInfo(protocol_version=2, capabilities=v1_marker_in_v2).supports(
        "additional_directories"
    )


# -- each scenario --------------------------------------------------------------------------------


@VERSIONS
async def test_each_scenario_through_acp_tui(tmp_path: Path, version: int) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("remember the milk\n")
    prompts = [
        "/markdown",
        "/think",
        "/plan",
        "/tools",
        "/read notes.txt",
        "/edit notes.txt",
        "/run echo from-the-terminal",
        "/permission",
        "/switch",
        "/long 2000",
        "/usage",
        "/title Scenario test",
        "hello",
        "/help",
    ]
    args = [arg for prompt in prompts for arg in ("-p", prompt)]
    run = await acp_tui(
        tmp_path, version, "--permission", "allow", "--output-format", "jsonl", *args
    )
    assert run.status == 0, run.err
    turns = dict(zip(prompts, run.turns(), strict=True))

    def text(turn: list[dict[str, Any]], kind: str = "message") -> str:
        return "".join(
            e["append"]["text"]
            for e in turn
            if e["type"] == kind and e.get("role") != "user" and "append" in e
        )

    def tools(turn: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return tool_calls(turn)

    assert "| Update" in text(turns["/markdown"]) and "```python" in text(turns["/markdown"])
    assert "rendering" not in text(turns["/think"], "thought")
    assert text(turns["/think"], "thought").startswith("The user asked to see my reasoning")
    plan = [e for e in turns["/plan"] if e["type"] == "plan"][-1]
    assert [entry["status"] for entry in plan["entries"]] == ["completed"] * 4
    tool_kinds = {call["kind"] for call in tools(turns["/tools"]).values()}
    assert len(tool_kinds) == 9
    [read] = tools(turns["/read notes.txt"]).values()
    assert read["status"] == "completed", read
    assert "remember the milk" in json.dumps(read["content"])
    assert "Edited by the ACP demo agent" in (workspace / "notes.txt").read_text()
    [run_call] = tools(turns["/run echo from-the-terminal"]).values()
    assert run_call["status"] == "completed"
    [run_terminal] = terminals(turns["/run echo from-the-terminal"]).values()
    assert "from-the-terminal" in run_terminal["output"]
    assert (run_terminal["exited"], run_terminal["exitCode"]) == (True, 0)
    assert [e for e in turns["/permission"] if e["type"] == "permission"]
    switched = [e for e in turns["/switch"] if e["type"] in ("modes", "config")]
    assert "'code'" in repr(switched[-1]) or '"code"' in json.dumps(switched[-1])
    long_messages: dict[str, str] = {}
    for event in turns["/long 2000"]:
        if event["type"] == "message" and "append" in event:
            long_messages[event["id"]] = (
                long_messages.get(event["id"], "") + event["append"]["text"]
            )
    # Its 2,000 chunks, whole and in order (those read together are printed as one).
    streamed = "".join(f"{i}{chr(10) if i % 20 == 0 else ' '}" for i in range(1, 2001))
    assert streamed in long_messages.values()
    [usage] = [e for e in turns["/usage"] if e["type"] == "usage"][-1:]
    assert usage["used"] > 0 and usage["size"] == 128_000 and usage["cost"]["currency"] == "USD"
    infos = [e for e in turns["/title Scenario test"] if e["type"] == "info"]
    assert infos[-1]["title"] == "Scenario test"
    assert "/help" in text(turns["hello"])
    assert [e for e in turns["/help"] if e["type"] == "commands"]
    run.assert_agent_valid()


@VERSIONS
@pytest.mark.parametrize(
    ("prompt", "status_v1", "status_v2"),
    [
        ("/refuse", 3, 3),
        ("/stop max_tokens", 4, 4),
        ("/stop max_turn_requests", 4, 4),
        ("/custom-stop", 0, 5),
        ("/error", 1, 1),
    ],
)
async def test_stop_reasons_and_errors(
    tmp_path: Path, version: int, prompt: str, status_v1: int, status_v2: int
) -> None:
    run = await acp_tui(tmp_path, version, "-p", prompt)
    assert run.status == (status_v2 if version == 2 else status_v1), run.err
    if prompt == "/error":
        assert "failed on purpose" in run.err or "on purpose" in run.err
    run.assert_agent_valid()


@VERSIONS
async def test_ctrl_c_cancels_a_slow_turn_at_once(tmp_path: Path, version: int) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    argv = [*ACP_TUI, "--cwd", str(workspace), "--protocol-version", str(version)]
    process = await asyncio.create_subprocess_exec(
        *argv,
        "-p",
        "/slow 30",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=demo_env(tmp_path),
    )
    assert process.stdout is not None
    seen = b""
    while b"\xe2\x8f\xb3" not in seen:  # the first ⏳ tick
        chunk = await asyncio.wait_for(process.stdout.read(256), 10)
        assert chunk, "acp-tui ended before the slow turn ticked"
        seen += chunk
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    await asyncio.wait_for(process.communicate(), 10)
    assert process.returncode == 130
    assert time.monotonic() - started < 3.0


# -- sessions through AgentClient -----------------------------------------------------------------


async def allow(pending: PendingPermission) -> None:
    pending.select("allow_once")


async def test_the_agents_own_command_is_a_live_terminal_in_acp_tui(tmp_path: Path) -> None:
    """`bash` over v1: acp-tui advertises `_meta.terminal_output_delta`, so the demo agent
    streams the command it runs itself in tool call `_meta`, and it becomes terminal state:
    output as it comes, then the exit."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("a note\n")
    transcript = tmp_path / "transcript.jsonl"
    options = ClientOptions(cwd=workspace, transcript=transcript)
    client = AgentClient(DEMO, options, decide_permission=allow)
    try:
        await client.start()
        session = await client.new_session()
        seen: list[tuple[bool, bytes]] = []

        def watch(_session: Any, change: Any) -> None:
            if change.kind == "terminal":
                seen.append((change.item.exited, bytes(change.item.output)))

        session.listeners.append(watch)
        assert await session.prompt([text_block("bash")]) == "end_turn"
    finally:
        await client.close()
    [call] = session.state.tool_calls.values()
    [item] = call.content
    terminal = session.state.terminals[item.terminal_id]
    steps = "".join(f"step {n} of 5\n" for n in range(1, 6))
    assert bytes(terminal.output) == f"{steps}notes.txt\n".encode()
    assert (terminal.exited, terminal.exit_code, terminal.cwd) == (True, 0, str(workspace))
    assert call.status == "completed" and terminal.command == call.title
    running = [output for exited, output in seen if not exited]
    assert b"step 1 of 5\n" in running and len(set(running)) > 2  # it grew while running
    assert validate_transcript(transcript, version=1, sender="agent") > 0


@VERSIONS
async def test_sessions_survive_the_agent_through_agent_client(
    tmp_path: Path, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    options = ClientOptions(cwd=tmp_path, protocol_version=version)
    first = AgentClient(DEMO, options, decide_permission=allow)
    try:
        await first.start()
        session = await first.new_session()
        assert await session.prompt([text_block("/title Keep me")]) == "end_turn"
        assert await session.prompt([text_block("/plan")]) == "end_turn"
        assert session.state.title == "Keep me"
        live_agent_text = [m.text for m in session.state.messages.values() if m.role == "agent"]
    finally:
        await first.close()

    second = AgentClient(DEMO, options, decide_permission=allow)
    try:
        await second.start()
        [info] = await second.list_sessions()
        assert (info.session_id, info.title) == (session.id, "Keep me")
        reopened = await second.open_session(session.id)
        state = reopened.state
        users = [m.text for m in state.messages.values() if m.role == "user"]
        assert users == ["/title Keep me", "/plan"]
        agents = [m.text for m in state.messages.values() if m.role == "agent"]
        assert agents == live_agent_text
        [plan] = state.plans.values()
        assert all(entry.status == "completed" for entry in plan.entries)
        assert state.title == "Keep me"
        assert await reopened.prompt([text_block("and now?")]) == "end_turn"
    finally:
        await second.close()
