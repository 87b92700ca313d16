"""Headless mode as a script uses it: the real `acp-tui` command against real agents.

Every message acp-tui sends is validated against the official schema of the version spoken.
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_tui.demo.picture import demo_png
from acp_tui.headless.events import JsonPrinter, TerminalEvents, ToolCallEvents
from acp_tui.headless.output import Output
from acp_tui.protocol.updates import decode_session_notification
from acp_tui.session import reducer
from acp_tui.session import terminals as terminal_steps
from acp_tui.session.change import Change
from acp_tui.session.state import SessionState, ToolCallState
from tests.support import TEST_AGENTS
from tests.support.jsonl import terminals, tool_calls
from tests.support.schema import validate_message, validate_transcript

ACP_TUI = [sys.executable, "-m", "acp_tui"]
DEMO_ENV = {"ACP_TUI_DEMO_SPEED": "0"}


@dataclass
class Run:
    status: int
    out: str
    err: str
    transcript: Path

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.splitlines()]

    def sent(self) -> list[dict[str, Any]]:
        lines = self.transcript.read_text().splitlines()
        return [e["msg"] for e in map(json.loads, lines) if e["dir"] == "send"]


async def acp_tui(
    tmp_path: Path, *args: str, agent: list[str] | None = None, timeout: float = 60
) -> Run:
    transcript = tmp_path / "transcript.jsonl"
    argv = [*ACP_TUI, "--cwd", str(tmp_path), "--transcript", str(transcript), *args]
    if agent is not None:
        argv += ["--", *agent]
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **DEMO_ENV},
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return Run(process.returncode, out.decode(), err.decode(), transcript)


async def test_text_streams_the_agents_answer_turn_by_turn(
    tmp_path: Path, python_sdk_echo_agent: list[str]
) -> None:
    run = await acp_tui(tmp_path, "-p", "hello there", "-p", "again", agent=python_sdk_echo_agent)
    assert (run.status, run.out) == (0, "hello there\nagain\n"), run.err
    assert validate_transcript(run.transcript, version=1, sender="client") == 4


async def test_jsonl_reports_each_change(
    tmp_path: Path, python_sdk_example_agent: list[str]
) -> None:
    run = await acp_tui(
        tmp_path, "--output-format", "jsonl", "-p", "hi", agent=python_sdk_example_agent
    )
    assert run.status == 0, run.err
    events = run.events()
    agent_text = "".join(
        e["append"]["text"] for e in events if e["type"] == "message" and e["role"] == "agent"
    )
    assert agent_text == "Client sent:hi"
    assert events[-1] == {"type": "status", "status": "idle", "stopReason": "end_turn"}
    validate_transcript(run.transcript, version=1, sender="client")


@pytest.mark.parametrize(
    "policy,option,status", [("allow", "allow", "completed"), ("reject", "reject", "rejected")]
)
async def test_permission_policy_answers_for_the_user(
    tmp_path: Path, ts_sdk_example_agent: list[str], policy: str, option: str, status: str
) -> None:
    run = await acp_tui(
        tmp_path,
        "--output-format",
        "jsonl",
        "--permission",
        policy,
        "-p",
        "go",
        agent=ts_sdk_example_agent,
    )
    assert run.status == 0, run.err
    events = run.events()
    decisions = [e for e in events if e["type"] == "permission"]
    assert [(d["toolCallId"], d["optionId"]) for d in decisions] == [("call_2", option)]
    final = {id: call["status"] for id, call in tool_calls(events).items()}
    assert final == {"call_1": "completed", "call_2": status}
    answers = [m for m in run.sent() if "result" in m and "outcome" in m["result"]]
    assert answers[0]["result"] == {"outcome": {"outcome": "selected", "optionId": option}}
    validate_transcript(run.transcript, version=1, sender="client")


async def test_ctrl_c_cancels_the_turn_and_exits_130(
    tmp_path: Path, ts_sdk_example_agent: list[str]
) -> None:
    transcript = tmp_path / "transcript.jsonl"
    process = await asyncio.create_subprocess_exec(
        *ACP_TUI,
        "--cwd",
        str(tmp_path),
        "--transcript",
        str(transcript),
        "--output-format",
        "jsonl",
        "-p",
        "go",
        "--",
        *ts_sdk_example_agent,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    events = []
    async with asyncio.timeout(30):
        while line := await process.stdout.readline():
            events.append(json.loads(line))
            if events[-1]["type"] == "tool_call":
                process.send_signal(signal.SIGINT)
                break
        rest, _ = await process.communicate()
    events += [json.loads(line) for line in rest.splitlines()]
    assert process.returncode == 130
    assert {"type": "status", "status": "idle", "stopReason": "cancelled"} in events
    run = Run(130, "", "", transcript)
    assert "session/cancel" in [m.get("method") for m in run.sent()]
    validate_transcript(transcript, version=1, sender="client")


async def test_offering_v2_to_a_v1_agent_falls_back_to_v1(
    tmp_path: Path, python_sdk_echo_agent: list[str]
) -> None:
    run = await acp_tui(
        tmp_path, "--protocol-version", "2", "-p", "hello", agent=python_sdk_echo_agent
    )
    assert (run.status, run.out) == (0, "hello\n"), run.err
    sent = run.sent()
    # The echo agent answers "2" in v1's shape: acp-tui starts afresh and speaks v1.
    assert [m["params"]["protocolVersion"] for m in sent if m.get("method") == "initialize"] == [
        2,
        1,
    ]
    validate_message(sent[0], version=2, sender="client")
    for message in sent[1:]:
        validate_message(message, version=1, sender="client")


@pytest.mark.parametrize("version", [1, 2])
async def test_the_demo_tour_runs_headless(tmp_path: Path, version: int) -> None:
    (tmp_path / "README.md").write_text("# A workspace\n")
    run = await acp_tui(
        tmp_path, "--protocol-version", str(version), "--permission", "allow", "-p", "tour"
    )
    assert run.status == 0, run.err
    assert run.out.strip()
    assert validate_transcript(run.transcript, version=version, sender="client") > 3
    assert validate_transcript(run.transcript, version=version, sender="agent") > 20


async def test_mentioned_files_and_images_go_with_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "cat.png").write_bytes(demo_png())
    (tmp_path / "notes.md").write_text("# Notes\n")
    run = await acp_tui(tmp_path, "--permission", "reject", "-p", "what is @cat.png? see @notes.md")
    assert run.status == 0, run.err
    assert "**cat.png**: a PNG image, **96×64** pixels" in run.out  # noqa: RUF001
    [prompt] = [m for m in run.sent() if m.get("method") == "session/prompt"]
    types = [block["type"] for block in prompt["params"]["prompt"]]
    assert types == ["text", "image", "resource"]
    assert validate_transcript(run.transcript, version=1, sender="client") == len(run.sent())


async def test_an_image_to_an_agent_that_takes_none_goes_as_a_link_and_says_so(
    tmp_path: Path, python_sdk_echo_agent: list[str]
) -> None:
    (tmp_path / "cat.png").write_bytes(demo_png())
    run = await acp_tui(tmp_path, "-p", "look at @cat.png", agent=python_sdk_echo_agent)
    assert run.status == 0, run.err
    assert "acp-tui: This agent does not take images: cat.png is sent as a link" in run.err
    [prompt] = [m for m in run.sent() if m.get("method") == "session/prompt"]
    assert [block["type"] for block in prompt["params"]["prompt"]] == ["text", "resource_link"]


async def test_an_agent_that_cannot_start_is_a_one_line_error(tmp_path: Path) -> None:
    run = await acp_tui(tmp_path, "-p", "hi", agent=["no-such-agent-xyz"])
    assert run.status == 1
    [line] = run.err.splitlines()  # one line, saying where it looked
    assert line.startswith("acp-tui: agent command not found: no-such-agent-xyz (looked in PATH: ")


async def test_an_agent_that_dies_mid_turn_is_reported_with_its_last_words(tmp_path: Path) -> None:
    agent = TEST_AGENTS / "dies_mid_turn.py"
    run = await acp_tui(tmp_path, "-p", "hi", agent=[sys.executable, str(agent)])
    assert run.status == 1
    expected = "acp-tui: the agent exited with code 3 (stderr: model backend exploded)\n"
    assert run.err == expected


async def test_a_shell_line_in_terminal_create_runs_through_the_shell(tmp_path: Path) -> None:
    """Agents written for Zed send `{"command": "echo hi && touch x"}` with no `args`."""
    agent = [sys.executable, str(TEST_AGENTS / "shell_line_agent.py")]
    # It runs the line without asking first: allowed, as the user would.
    argv = ("--permission", "allow", "-p", "echo hi && touch made.txt")
    run = await acp_tui(tmp_path, *argv, agent=agent)
    assert (run.status, run.out) == (0, "exit 0: hi\n"), run.err
    assert (tmp_path / "made.txt").is_file()
    create = next(
        m
        for m in map(json.loads, run.transcript.read_text().splitlines())
        if m["msg"].get("method") == "terminal/create"
    )
    assert "args" not in create["msg"]["params"]


@pytest.mark.parametrize("output_format", ["text", "jsonl"])
def test_a_closed_stdout_ends_the_run_quietly(tmp_path: Path, output_format: str) -> None:
    """`acp-tui -p tour | head -3`: the reader leaves; acp-tui stops the agent and ends as a
    program killed by SIGPIPE would, with no error on stderr."""
    argv = [*ACP_TUI, "--cwd", str(tmp_path), "--output-format", output_format, "-p", "tour"]
    env = {**os.environ, "ACP_TUI_DEMO_SPEED": "0.05"}
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout is not None and process.stderr is not None
    for _ in range(3):
        assert process.stdout.readline()
    process.stdout.close()
    status = process.wait(timeout=30)
    err = process.stderr.read().decode()
    assert status == 128 + signal.SIGPIPE, err
    assert "Error" not in err and "Traceback" not in err


def test_jsonl_tool_call_events_after_the_first_say_what_changed() -> None:
    """A call's first event has all of it; later ones only what the update changed, so its
    diff is printed once however many status updates follow."""
    state, events = SessionState(session_id="s"), ToolCallEvents()
    diff = {"type": "diff", "path": "/w/a.py", "oldText": "a", "newText": "b"}
    text = {"type": "content", "content": {"type": "text", "text": "done"}}
    updates: list[dict[str, Any]] = [
        {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Edit", "content": [diff]},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "in_progress"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "in_progress"},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c", "content": text},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "content": [text]},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "rawOutput": {"ok": 1}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "completed"},
    ]
    printed = []
    for update in updates:
        params = msgspec.json.encode({"sessionId": "s", "update": update})
        change = reducer.apply(state, decode_session_notification(params)[1])
        assert isinstance(change.item, ToolCallState)
        printed.append(json.loads(msgspec.json.encode(events(change.item))))
    first = {"type": "tool_call", "id": "c", "title": "Edit", "kind": "other"}
    first |= {"status": "pending", "locations": [], "content": [diff]}
    assert printed == [
        first | {"rawInput": None, "rawOutput": None},
        {"type": "tool_call", "id": "c", "status": "in_progress"},
        {"type": "tool_call", "id": "c"},  # nothing changed
        {"type": "tool_call", "id": "c", "append": text},
        {"type": "tool_call", "id": "c", "content": [text]},  # replaced
        {"type": "tool_call", "id": "c", "rawOutput": {"ok": 1}},
        {"type": "tool_call", "id": "c", "status": "completed"},
    ]
    # Read back as a script reads them, the events give the call as it stands.
    assert tool_calls(printed)["c"] == first | {
        "status": "completed",
        "content": [text],
        "rawInput": None,
        "rawOutput": {"ok": 1},
    }


def test_jsonl_terminal_events_after_the_first_say_what_changed() -> None:
    """Output streams as `append` and is never printed again; the end comes once, with its
    exit code; output the agent replaces (v2 `terminal_update`) comes whole."""
    state, events = SessionState(session_id="s"), TerminalEvents()
    replaced = {"sessionUpdate": "terminal_update", "terminalId": "t", "command": "make"}
    replaced["output"] = {"data": "bmV3Cg=="}  # "new\n"
    params = msgspec.json.encode({"sessionId": "s", "update": replaced})
    steps: list[Callable[[], Change]] = [
        lambda: terminal_steps.terminal_started(state, "t", "make test", "/w"),
        lambda: terminal_steps.terminal_output(state, "t", b"ok 1\n"),
        lambda: terminal_steps.terminal_output(state, "t", b"ok 2\n"),
        lambda: terminal_steps.terminal_exited(state, "t", 2, None),
        lambda: reducer.apply(state, decode_session_notification(params)[1]),
    ]
    printed = []
    for step in steps:
        change = step()
        printed.append(json.loads(msgspec.json.encode(events(change.item, change.delta))))
    ending = {"exited": False, "exitCode": None, "signal": None}
    assert printed == [
        {"type": "terminal", "id": "t", "command": "make test", "cwd": "/w", "output": ""} | ending,
        {"type": "terminal", "id": "t", "append": "ok 1\n"},
        {"type": "terminal", "id": "t", "append": "ok 2\n"},
        {"type": "terminal", "id": "t", "exited": True, "exitCode": 2, "signal": None},
        {"type": "terminal", "id": "t", "command": "make", "output": "new\n"},
    ]
    assert terminals(printed)["t"] == {
        "type": "terminal",
        "id": "t",
        "command": "make",
        "cwd": "/w",
        "output": "new\n",
        "exited": True,
        "exitCode": 2,
        "signal": None,
    }


async def test_jsonl_events_show_each_change_as_it_was_though_encoded_after_the_burst() -> None:
    """jsonl events are encoded at the end of the burst: an event still shows the call or
    message as it was when it changed, not as later updates of the same burst left it."""
    stream = io.StringIO()
    printer = JsonPrinter(Output(stream, lambda: None))
    state = SessionState(session_id="s")
    diff = {"type": "diff", "path": "/w/a.py", "oldText": "a", "newText": "b"}
    text = {"type": "content", "content": {"type": "text", "text": "done"}}
    hello = {"type": "text", "text": "hello"}
    updates: list[dict[str, Any]] = [
        {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Edit", "content": [diff]},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c", "content": text},
        {"sessionUpdate": "agent_message", "messageId": "m", "content": [hello]},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": hello},
    ]
    for update in updates:
        params = msgspec.json.encode({"sessionId": "s", "update": update})
        printer(None, reducer.apply(state, decode_session_notification(params)[1]))  # type: ignore[arg-type]
    assert stream.getvalue() == ""  # not before the burst ends
    await asyncio.sleep(0)
    printed = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [event.get("content", event.get("append")) for event in printed] == [
        [diff],
        text,
        [hello],
        hello,
    ]


async def test_output_writes_a_burst_whole_to_any_kind_of_stdout(tmp_path: Path) -> None:
    """Buffered (a file), unbuffered (`python -u`: the raw file) and text-only streams all
    get the burst's text, JSON and events (encoded at the end of it), in order, in the
    stream's encoding."""
    buffered, unbuffered = tmp_path / "buffered", tmp_path / "unbuffered"
    streams = {
        buffered: io.TextIOWrapper(io.BufferedWriter(io.FileIO(buffered, "w")), encoding="utf-8"),
        unbuffered: io.TextIOWrapper(
            io.FileIO(unbuffered, "w"), encoding="latin-1", write_through=True
        ),
        None: io.StringIO(),
    }
    for path, stream in streams.items():
        out = Output(stream, lambda: None)
        out.write("é: ")
        out.write_bytes(b'{"a":1}\n')
        out.write_event({"b": 2})
        out.write_event({"c": "é"})
        out.write_bytes(b'{"d":4}\n')
        out.write_event({"e": 5})
        out.write("end\n")
        expected = 'é: {"a":1}\n{"b":2}\n{"c":"é"}\n{"d":4}\n{"e":5}\nend\n'
        await asyncio.sleep(0)  # the burst ends: one write
        if isinstance(stream, io.StringIO):
            assert stream.getvalue() == expected
        else:
            assert path is not None
            # JSON is UTF-8 whatever the stream's encoding, as it was before (bytes).
            assert path.read_bytes() == (
                'é: {"a":1}\n'.encode(stream.encoding)
                + '{"b":2}\n{"c":"é"}\n{"d":4}\n{"e":5}\n'.encode()
                + b"end\n"
            )
            stream.close()


@pytest.fixture
def signal_handlers() -> Any:
    """`cli.main` run in this process sets SIGTERM's and SIGHUP's: put them back after."""
    kept = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    yield
    for sig, handler in kept.items():
        signal.signal(sig, handler)


def test_the_agent_spawned_ahead_is_the_one_acp_tui_speaks_to(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    signal_handlers: None,
) -> None:
    """`acp-tui` spawns the agent as soon as it has read its command line, before importing
    the rest of itself (`HeadStart`); the run takes that process rather than another."""
    from acp_tui import cli
    from acp_tui.transport.launcher import AgentProcess

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("ACP_TUI_DEMO_SPEED", "0")
    starts: list[tuple[int | None, int]] = []
    real_start = AgentProcess.start.__func__  # type: ignore[attr-defined]

    async def start(cls: type[AgentProcess], *args: Any, **kwargs: Any) -> AgentProcess:
        head_start = kwargs["head_start"]
        ahead = head_start._popen.pid if head_start and head_start._popen else None
        agent = await real_start(cls, *args, **kwargs)
        starts.append((ahead, agent.process.pid))
        return agent

    monkeypatch.setattr(AgentProcess, "start", classmethod(start))
    argv = ["--cwd", str(tmp_path), "--no-record", "--no-checkpoints", "-p", "hello"]
    try:
        assert cli.main(argv) == 0
    finally:
        gc.unfreeze()  # `main` freezes the heap for the interpreter's exit
    [(ahead, pid)] = starts
    assert ahead == pid
    assert "hello" in capsys.readouterr().out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_before_the_event_loop_stops_the_agent_spawned_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signal_handlers: None, sig: signal.Signals
) -> None:
    """SIGTERM or SIGHUP while acp-tui still imports what it runs, before its event loop
    takes them over: acp-tui exits by the signal, and the agent it spawned ahead is killed,
    not left behind waiting for a client."""
    from acp_tui.cli import run as cli
    from acp_tui.transport.head_start import HeadStart

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    spawned: list[Any] = []
    real_init = HeadStart.__init__

    def spying(self: HeadStart, *args: Any) -> None:
        real_init(self, *args)
        spawned.append(self._popen)

    def signalled(*_args: Any) -> int:
        os.kill(os.getpid(), sig)
        time.sleep(30)  # the handler raises here
        return 0

    monkeypatch.setattr(HeadStart, "__init__", spying)
    monkeypatch.setattr(cli, "_run", signalled)
    deaf = [
        sys.executable,
        "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)",
    ]
    with pytest.raises(SystemExit) as exited:
        cli.main(["--cwd", str(tmp_path), "-p", "hello", "--", *deaf])
    assert exited.value.code == 128 + sig
    [agent] = spawned
    assert agent.returncode == -signal.SIGKILL


def test_a_prompt_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    """Typed in another encoding (undecodable bytes in argv): said plainly, before anything
    starts, where it used to crash encoding the prompt for the agent."""
    done = subprocess.run(
        [*ACP_TUI, "--cwd", str(tmp_path), "-p", os.fsdecode(b"caf\xe9")],
        capture_output=True,
        timeout=60,
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")},
    )
    assert done.returncode == 2
    assert b"acp-tui: error: b'caf\\xe9' is not valid UTF-8 text" in done.stderr
    assert b"Traceback" not in done.stderr
