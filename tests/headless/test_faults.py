"""Headless acp-tui against hostile agents (`tests/agents/hostile/`), each a real process.

Every case checks three things: what the user sees (exit status, stdout, the `acp-tui: …`
lines on stderr), what the agent got back (its own log of every line it read), and that the
transcript is complete and parseable (`check_transcript`: every line the agent wrote is in it,
in order, and what it says acp-tui sent is what the agent got).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agents.hostile import (
    AGENTS,
    LOG_ENV,
    AgentLog,
    HostileAgent,
    check_transcript,
    process_gone,
    read_transcript,
)
from tests.support.jsonl import tool_calls

ACP_TUI = [sys.executable, "-m", "acp_tui"]
MEASURED_ACP_TUI = [
    sys.executable,
    "-c",
    # acp-tui in this very process, then its peak memory on the last line of stderr. (Not
    # getrusage: on Linux its peak survives exec, so it would count the forking pytest.)
    "import sys\n"
    "from acp_tui.cli import main\n"
    "status = main(sys.argv[1:])\n"
    "peak = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
    "print(peak.strip(), file=sys.stderr)\n"
    "sys.exit(status)\n",
]


@dataclass
class Run:
    status: int
    out: str
    err: str
    transcript: Path
    log: AgentLog
    workspace: Path

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.splitlines()]

    def warnings(self) -> list[str]:
        return [line.removeprefix("acp-tui: ") for line in self.err.splitlines()]

    def entries(self) -> list[dict[str, Any]]:
        return read_transcript(self.transcript)

    def check_transcript(self, *, agent_read_all: bool = True) -> list[dict[str, Any]]:
        entries = self.entries()
        check_transcript(entries, self.log, agent_read_all=agent_read_all)
        return entries

    def agent_text(self) -> str:
        """The agent's message text, from the jsonl events."""
        return "".join(
            e["append"]["text"]
            for e in self.events()
            if e["type"] == "message" and e["role"] == "agent" and "append" in e
        )

    def assert_agent_gone(self) -> None:
        assert self.log.pids, "the agent never logged its pid"
        for pid in self.log.pids:
            assert process_gone(pid), f"agent {pid} outlived acp-tui"


class Headless:
    """One `acp-tui -p …` run against a hostile agent, watched as it goes."""

    def __init__(self, tmp_path: Path, agent: HostileAgent, *args: str, **options: Any) -> None:
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir(exist_ok=True)
        self.transcript = Path(options.pop("transcript", tmp_path / "transcript.jsonl"))
        self.log_path = tmp_path / "agent.log"
        prompts = options.pop("prompts", ["hi"])
        launcher = MEASURED_ACP_TUI if options.pop("measure", False) else ACP_TUI
        self.argv = [*launcher, "--cwd", str(self.workspace), "--transcript", str(self.transcript)]
        for prompt in prompts:
            self.argv += ["-p", prompt]
        self.argv += [*args, "--", *agent.argv()]
        self.env = {
            **os.environ,
            LOG_ENV: str(self.log_path),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            **options.pop("env", {}),
        }
        assert not options, options
        self.out: list[bytes] = []

    async def __aenter__(self) -> Headless:
        self.started = time.monotonic()
        self.process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
        )
        assert self.process.stderr is not None
        self._err = asyncio.ensure_future(self.process.stderr.read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()

    async def event(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 20) -> None:
        """Read jsonl events until one matches."""
        assert self.process.stdout is not None
        async with asyncio.timeout(timeout):
            while line := await self.process.stdout.readline():
                self.out.append(line)
                if predicate(json.loads(line)):
                    return
        raise AssertionError("acp-tui ended before the event")

    def signal(self, sig: signal.Signals) -> None:
        self.process.send_signal(sig)

    async def finish(self, timeout: float = 30) -> Run:
        assert self.process.stdout is not None
        async with asyncio.timeout(timeout):
            self.out.append(await self.process.stdout.read())
            err = await self._err
            status = await self.process.wait()
        return Run(
            status,
            b"".join(self.out).decode(),
            err.decode(),
            self.transcript,
            AgentLog.read(self.log_path),
            self.workspace,
        )


async def headless(tmp_path: Path, name: str, *args: str, **options: Any) -> Run:
    async with Headless(tmp_path, AGENTS[name], *args, **options) as run:
        return await run.finish()


def jsonl(*args: str) -> tuple[str, ...]:
    return ("--output-format", "jsonl", *args)


# -- the agent exits or crashes ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name,last_words,got",
    [
        ("exits-before-initialize", "fatal: ANTHROPIC_API_KEY is not set", []),
        ("exits-during-initialize", "fatal: cannot parse initialize", ["initialize"]),
        ("exits-after-initialize", "fatal: lost the model backend", ["initialize"]),
    ],
)
async def test_an_agent_that_exits_at_start_up_is_one_line_with_its_last_words(
    tmp_path: Path, name: str, last_words: str, got: list[str]
) -> None:
    run = await headless(tmp_path, name)
    assert run.status == 1
    assert run.out == ""
    reason = f"could not start a session: the agent exited with code 3 (stderr: {last_words})"
    assert run.warnings() == [reason]
    assert run.log.methods() == got
    if got:
        run.assert_agent_gone()
    # The agent never read what came after its death: the transcript has more than it got.
    run.check_transcript(agent_read_all=False)


async def test_an_agent_that_crashes_mid_turn_leaves_text_transcript_and_reason(
    tmp_path: Path,
) -> None:
    run = await headless(tmp_path, "crashes-mid-turn")
    assert run.status == 1
    # What streamed before the crash stays, on a line of its own; the reason is the exit
    # code and the tail of stderr (not the 50 lines of traceback before it).
    assert run.out == "Working on it\n"
    assert run.warnings() == [
        "the agent exited with code 3 (stderr: frame 49: in some_function | "
        "Traceback (most recent call last): | RuntimeError: model backend exploded)"
    ]
    assert run.log.methods() == ["initialize", "session/new", "session/prompt"]
    run.assert_agent_gone()
    run.check_transcript()


async def test_a_crash_mid_turn_in_jsonl_ends_the_turn_with_an_error_notice(
    tmp_path: Path,
) -> None:
    run = await headless(tmp_path, "crashes-mid-turn", *jsonl())
    assert run.status == 1
    events = run.events()
    assert run.agent_text() == "Working on it"
    assert run.log.methods() == ["initialize", "session/new", "session/prompt"]
    started = {"type": "tool_call", "id": "call-1", "status": "in_progress"}
    assert started.items() <= events[-4].items()
    notice, closed, status = events[-3:]
    assert notice["type"] == "notice" and notice["severity"] == "error"
    assert notice["title"].startswith("the agent exited with code 3")
    # The call the agent never finished ends with its turn.
    assert {"type": "tool_call", "id": "call-1", "status": "cancelled"}.items() <= closed.items()
    assert status == {"type": "status", "status": "idle", "stopReason": None}
    run.check_transcript()


# -- the agent does not answer ----------------------------------------------------------------


@pytest.mark.parametrize(
    "name,method",
    [
        ("never-answers-initialize", "initialize"),
        ("answers-initialize-with-wrong-id", "initialize"),
        ("never-answers-session-new", "session/new"),
    ],
)
async def test_start_up_times_out_with_a_clear_message(
    tmp_path: Path, name: str, method: str
) -> None:
    started = time.monotonic()
    run = await headless(tmp_path, name, "--startup-timeout", "1")
    assert run.status == 1
    assert time.monotonic() - started < 10
    warnings = run.warnings()
    reason = f"could not start a session: the agent did not answer {method} within 1 s"
    assert warnings[-1] == reason
    if name == "answers-initialize-with-wrong-id":
        assert warnings[0].startswith("agent answered a request we never sent or had: ")
        assert '"id":4242' in warnings[0]
    else:
        assert len(warnings) == 1
    # The request it never answered is the last one, withdrawn (`$/cancel_request`) if the
    # agent was still reading.
    assert [m for m in run.log.methods() if m != "$/cancel_request"][-1] == method
    run.assert_agent_gone()
    run.check_transcript()


async def test_a_long_turn_is_not_timed_out(tmp_path: Path) -> None:
    # The turn takes 2.5 s of silence; the start-up timeout (1 s) does not apply to it.
    run = await headless(tmp_path, "slow-turn", "--startup-timeout", "1")
    assert (run.status, run.out, run.err) == (0, "done after a long think\n", "")
    run.check_transcript()


async def test_cancel_ends_a_silent_turn(tmp_path: Path) -> None:
    async with Headless(tmp_path, AGENTS["never-answers-prompt"], *jsonl()) as acp_tui:
        await acp_tui.event(lambda e: e["type"] == "message" and e["role"] == "user")
        acp_tui.signal(signal.SIGINT)
        run = await acp_tui.finish()
    assert run.status == 130
    assert run.events()[-1] == {"type": "status", "status": "idle", "stopReason": "cancelled"}
    assert run.err == ""
    assert run.log.methods() == ["initialize", "session/new", "session/prompt", "session/cancel"]
    run.check_transcript()


async def test_an_agent_deaf_to_cancel_is_killed_after_the_grace(tmp_path: Path) -> None:
    async with Headless(
        tmp_path, AGENTS["deaf-to-cancel"], *jsonl("--cancel-grace", "1")
    ) as acp_tui:
        await acp_tui.event(lambda e: e["type"] == "message" and e["role"] == "agent")
        acp_tui.signal(signal.SIGINT)
        cancelled = time.monotonic()
        run = await acp_tui.finish()
    # 1 s of grace, then the shutdown ladder: stdin closed (2 s), SIGTERM (2 s), SIGKILL.
    assert time.monotonic() - cancelled < 9
    assert run.status == 130
    assert run.warnings() == ["the agent ignored the cancel for 1 s; stopping it"]
    notice, status = run.events()[-2:]
    assert notice["severity"] == "error" and "ignored the cancel" in notice["title"]
    assert status == {"type": "status", "status": "idle", "stopReason": None}
    assert "session/cancel" in run.log.methods()
    run.assert_agent_gone()
    run.check_transcript()


# -- what is not ACP on stdout ----------------------------------------------------------------


async def test_noise_on_stdout_is_reported_and_never_answered(tmp_path: Path) -> None:
    run = await headless(tmp_path, "stdout-noise")
    assert run.status == 0
    assert run.out == "Hello, world\n"
    assert run.warnings() == [
        "agent wrote a line that is not JSON: Starting hostile-agent v1.2.3 ...",
        "agent wrote a line that is not JSON: To sign in, open "
        "https://auth.example.com/device?code=WXYZ-1234 in your browser",
        "agent wrote a line that is not JSON: [INFO] loaded 3 tools",
        "agent wrote a line that is not JSON: \x1b[32mDEBUG\x1b[0m token stream open",
        "agent sent an object that is not a JSON-RPC message: "
        '{"level":"info","msg":"structured log line"}',
        "agent wrote a line that is not JSON: [INFO] turn done",
    ]
    assert run.log.answers() == []  # log lines get no answer (and no error)
    entries = run.check_transcript()
    raw = [e["raw"] for e in entries if e["msg"] is None]
    assert raw[:2] == [
        "Starting hostile-agent v1.2.3 ...",
        "To sign in, open https://auth.example.com/device?code=WXYZ-1234 in your browser",
    ]


async def test_broken_json_rpc_is_answered_as_json_rpc_says_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    run = await headless(tmp_path, "protocol-junk", *jsonl())
    assert run.status == 0
    # What the agent got back, by the id of its request (None: a line that was no JSON).
    assert run.log.error_codes() == {
        None: -32700,  # invalid JSON
        "j1": -32600,  # JSON, not JSON-RPC
        "j2": -32601,  # session/update sent as a request: no such request method
        "j3": -32601,  # unknown method
        "j4": -32601,  # unknown extension method
        "j5": -32602,  # permission params of the wrong type
        "j6": -32602,  # fs params of the wrong type
        "j7": -32602,  # permission for an unknown session
    }
    assert len(run.log.answers()) == 8  # nothing else: notifications get no answer
    # What the user sees: the answer, whole, and nothing from the junk in it.
    assert run.agent_text() == "before the junk, after the junk"
    events = run.events()
    notices = [e["title"] for e in events if e["type"] == "notice"]
    assert notices == [
        "unknown update kind 'hologram'",
        "unreadable agent_message_chunk: Object missing required field `content`",
    ]
    calls = [(e["id"], e["status"]) for e in events if e["type"] == "tool_call"]
    assert calls == [
        ("call-bad-status", "pending"),  # read, its bad field dropped
        ("call-bad-status", "cancelled"),  # left open: the turn's end closes it
    ]
    assert events[-1] == {"type": "status", "status": "idle", "stopReason": "end_turn"}
    warnings = run.warnings()
    unknown = [w for w in warnings if w.startswith("agent answered a request we never sent")]
    assert len(unknown) == 4  # two unknown ids, two duplicate answers
    assert any(w.startswith("agent wrote a line that is not JSON: {") for w in warnings)
    assert any(w.startswith("session/update without a usable sessionId") for w in warnings)
    run.check_transcript()


async def test_a_malformed_answer_fails_the_request_instead_of_hanging(tmp_path: Path) -> None:
    run = await headless(tmp_path, "malformed-answer")
    assert run.status == 1
    assert run.out == "Let me see\n"
    assert run.warnings() == [
        "agent sent JSON that is not a JSON-RPC message (Expected `object`, got `str` - at "
        '`$.error`): {"jsonrpc":"2.0","id":2,"error":"model overloaded"}',
        "the agent failed the prompt: the agent answered session/prompt with a malformed "
        "response: Expected `object`, got `str` - at `$.error`",
    ]
    assert run.log.answers() == []
    run.check_transcript()


# -- sizes and shapes no one planned for ------------------------------------------------------


@pytest.mark.xdist_group("floods")  # one at a time: each keeps a core busy
async def test_a_50_mb_line_arrives_whole(tmp_path: Path) -> None:
    run = await headless(tmp_path, "huge-line")
    assert (run.status, run.out, run.err) == (0, "Regenerated big.txt\n", "")
    entries = run.check_transcript()
    (size,) = [line.length for line in run.log.sent if line.text is None]
    assert size > 50 * 1024 * 1024
    (diff,) = [e["msg"] for e in entries if "big-diff" in str(e["msg"])[:400]]
    new_text = diff["params"]["update"]["content"][0]["newText"]
    line = "+ an added line of the generated file\n"  # 39 bytes on the wire (\\n), 38 here
    repeat = len(new_text) // len(line)
    assert new_text == line * repeat and repeat * 39 > 50 * 1024 * 1024


@pytest.mark.xdist_group("floods")  # one at a time: each keeps a core busy
async def test_100k_updates_in_a_burst(tmp_path: Path) -> None:
    run = await headless(tmp_path, "update-burst")
    assert (run.status, run.err) == (0, "")
    assert run.out == "".join(f"{number} " for number in range(100_000)) + "\n"
    assert len(run.check_transcript()) == 100_000 + 6  # 3 requests, their 3 answers


@pytest.mark.xdist_group("floods")  # one at a time: each keeps a core busy
async def test_a_100_mb_stderr_flood_neither_blocks_the_agent_nor_fills_memory(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    run = await headless(tmp_path, "stderr-flood", measure=True)
    assert time.monotonic() - started < 30
    assert (run.status, run.out) == (0, "Flooding stderr, and still here\n")
    label, kib, unit = run.err.split()
    # The whole of acp-tui (Python, msgspec, the loop) stays far below the 100 MB it read.
    assert (label, unit) == ("VmHWM:", "kB") and int(kib) < 80 * 1024, kib
    run.check_transcript()


async def test_json_nested_too_deep_to_read_is_reported_and_skipped(tmp_path: Path) -> None:
    run = await headless(tmp_path, "deeply-nested", *jsonl())
    assert run.status == 0
    assert run.agent_text() == "still streaming"
    warnings = run.warnings()
    assert len(warnings) == 3
    assert all(w.startswith("agent wrote a line that is JSON nested too deeply") for w in warnings)
    call, closed = [e for e in run.events() if e["type"] == "tool_call"]
    assert call["id"] == "deep-enough"  # 100 levels: read as it came
    assert (closed["id"], closed["status"]) == ("deep-enough", "cancelled")  # left open
    depth, node = 0, call["rawInput"]
    while isinstance(node, dict):
        depth, node = depth + 1, node["a"]
    assert depth == 100
    # A line that may be a request but cannot be read gets a parse error; a bare array none.
    assert [(a["id"], a["error"]["code"]) for a in run.log.answers()] == [
        (None, -32700),
        (None, -32700),
    ]
    run.check_transcript()


async def test_invalid_utf8_is_replaced_in_text_and_refused_in_requests(tmp_path: Path) -> None:
    run = await headless(tmp_path, "invalid-utf8")
    assert run.status == 0
    assert run.out == "caf\ufffd \ufffd| clean text\n"
    assert [w.split(":")[0] for w in run.warnings()] == [
        "agent sent text that is not valid UTF-8",
        "agent wrote a line that is not JSON",
        "agent sent text that is not valid UTF-8",
    ]
    (answer,) = run.log.answers()
    assert answer["id"] == "utf" and answer["error"]["code"] == -32602
    assert "not valid UTF-8" in answer["error"]["message"]
    run.check_transcript()


# -- updates and requests out of turn ---------------------------------------------------------


async def test_updates_after_the_turn_for_old_turns_and_unknown_tool_calls(
    tmp_path: Path,
) -> None:
    run = await headless(tmp_path, "late-updates", *jsonl(), prompts=["one", "two"])
    assert (run.status, run.err) == (0, "")
    events = run.events()
    appended = [
        (e["id"], e["append"]["text"])
        for e in events
        if e["type"] == "message" and e["role"] == "agent"
    ]
    assert appended == [
        ("m1", "first"),
        ("m1", " (late)"),
        ("m1", " (from an old turn)"),
        ("m2", "second"),
        ("m2", " (after the end)"),
    ]
    calls = [(e["id"], e["status"]) for e in events if e["type"] == "tool_call"]
    assert calls[:4] == [
        ("t1", "completed"),
        ("t-ghost", "completed"),  # never announced: created, as the spec asks
        ("t1", "failed"),  # a tool call of the old turn still takes its update
        ("t-ghost-2", "in_progress"),
    ]
    # The answer and that update are read in one go, so the update lands before the turn is
    # seen to end; the end then closes the call it left open.
    assert calls[4:] in ([], [("t-ghost-2", "cancelled")])
    ends = [e for e in events if e["type"] == "status" and e["status"] == "idle"]
    assert [e["stopReason"] for e in ends] == ["end_turn", "end_turn"]
    run.check_transcript()


async def test_a_permission_request_after_cancel_is_answered_cancelled(tmp_path: Path) -> None:
    args = jsonl("--permission", "allow")
    async with Headless(tmp_path, AGENTS["permission-after-cancel"], *args) as acp_tui:
        await acp_tui.event(lambda e: e["type"] == "tool_call")
        acp_tui.signal(signal.SIGINT)
        run = await acp_tui.finish()
    assert run.status == 130
    # Both requests, the one while the cancel was in flight and the one after the turn
    # ended, are answered cancelled: never approved, though the policy allows everything.
    assert run.log.answers() == [
        {"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}},
        {"jsonrpc": "2.0", "id": 1, "result": {"outcome": {"outcome": "cancelled"}}},
    ]
    events = run.events()
    assert not [e for e in events if e["type"] == "permission"]
    assert {"type": "status", "status": "idle", "stopReason": "cancelled"} in events
    assert [call["status"] for call in tool_calls(events).values()][-1] == "cancelled"
    run.check_transcript()


# -- acp-tui is stopped mid-turn --------------------------------------------------------------


async def _stop_mid_command(tmp_path: Path, *signals: signal.Signals) -> tuple[Run, int]:
    """Run the long-command agent, and when its command runs, send acp-tui `signals`."""
    # It runs its command without asking: allowed, as the user would for this test.
    allow = ("--permission", "allow")
    async with Headless(tmp_path, AGENTS["long-command"], *jsonl(*allow)) as acp_tui:
        await acp_tui.event(lambda e: e["type"] == "tool_call")
        pid_file = acp_tui.workspace / "command.pid"
        async with asyncio.timeout(10):
            while not pid_file.exists() or not pid_file.read_text().strip():
                await asyncio.sleep(0.02)
        for sig in signals:
            acp_tui.signal(sig)
            await asyncio.sleep(0.2)
        run = await acp_tui.finish(timeout=15)
    return run, int(pid_file.read_text())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
async def test_sigterm_and_sighup_stop_the_agent_and_its_terminals(
    tmp_path: Path, sig: signal.Signals
) -> None:
    run, command = await _stop_mid_command(tmp_path, sig)
    assert run.status == 128 + sig
    assert run.warnings() == [f"stopped by {sig.name}"]
    run.assert_agent_gone()
    assert process_gone(command), "the agent's terminal command outlived acp-tui"
    entries = run.check_transcript()
    assert any(e["msg"].get("method") == "terminal/create" for e in entries if e["msg"])


async def test_quitting_mid_turn_stops_the_agent_and_its_terminals(tmp_path: Path) -> None:
    # Ctrl+C cancels (the agent ignores it); a second Ctrl+C quits at once.
    run, command = await _stop_mid_command(tmp_path, signal.SIGINT, signal.SIGINT)
    assert run.status == 130
    assert run.warnings() == ["interrupted"]
    run.assert_agent_gone()
    assert process_gone(command), "the agent's terminal command outlived acp-tui"
    run.check_transcript()


async def test_a_resized_terminal_does_not_disturb_streaming(tmp_path: Path) -> None:
    async with Headless(tmp_path, AGENTS["update-stream"]) as acp_tui:
        assert acp_tui.process.stdout is not None
        acp_tui.out.append(await acp_tui.process.stdout.read(4096))
        sent = 0
        # While it streams: on a quiet machine the rest of the stream takes less than the
        # 20 resizes spread out (and a signal to a process that has ended is an error).
        while sent < 20 and acp_tui.process.returncode is None:
            acp_tui.signal(signal.SIGWINCH)
            sent += 1
            await asyncio.sleep(0.005)
        run = await acp_tui.finish()
    assert sent
    assert (run.status, run.err) == (0, "")
    assert run.out == "".join(f"{number} " for number in range(20_000)) + "\n"
    run.check_transcript()


# -- acp-tui's own disk -----------------------------------------------------------------------


async def test_a_full_disk_for_the_transcript_is_a_warning(tmp_path: Path) -> None:
    run = await headless(tmp_path, "polite", transcript="/dev/full", prompts=["a", "b"])
    assert run.status == 0
    assert run.out == "Hello from a polite agent\n" * 2
    assert run.warnings() == [
        "transcript /dev/full not writable (No space left on device); recording stopped"
    ]
    assert run.log.methods() == ["initialize", "session/new", "session/prompt", "session/prompt"]


async def test_an_unwritable_transcript_and_data_dir_are_warnings(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    transcript = blocker / "transcript.jsonl"
    env = {"XDG_DATA_HOME": str(blocker / "data")}
    run = await headless(tmp_path, "polite", transcript=transcript, env=env)
    assert run.status == 0
    assert run.out == "Hello from a polite agent\n"
    assert run.log.methods() == ["initialize", "session/new", "session/prompt"]
    warnings = run.warnings()
    stopped = f"transcript {transcript} not writable (File exists); recording stopped"
    assert stopped in warnings
    # Whatever else acp-tui keeps in its data directory (records, checkpoints) only warns.
    assert all(str(blocker / "data") in warning for warning in warnings if warning != stopped)
