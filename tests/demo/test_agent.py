"""The demo agent (`python -m acp_tui.demo`), driven over real pipes in ACP v1 and v2.

Each test starts the agent with `--speed 0`, talks to it through acp-tui's JSON-RPC peer
(`transport.connection.Connection`) with a small but real client behind it (files are really read
and written, commands really run), and records the traffic: at the end every message the agent
sent is checked against the official schema of the negotiated version.

Races, failures and shutdown are tested with the agent in this process instead, behind a
`LocalConnection`, where the test decides what the client answers and when.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_tui.demo import agent as demo_agent
from acp_tui.demo import scenarios
from acp_tui.demo.agent import DemoAgent
from acp_tui.demo.store import SessionRecord, SessionStore
from acp_tui.demo.turn import ScenarioError, Turn
from acp_tui.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    ConnectionClosed,
    RpcError,
)
from acp_tui.transport.connection import Connection
from acp_tui.transport.transcript import Transcript
from tests.services.test_kill import gone
from tests.support.schema import validate_transcript

Answer = str | Callable[[dict[str, Any]], Any]


class DemoClient:
    """A minimal ACP client: real `fs/*` and `terminal/*` (v1), scripted permission answers."""

    def __init__(
        self,
        tmp_path: Path,
        version: int,
        *,
        fs: bool = True,
        terminal: bool = True,
        boolean_options: bool = True,
        meta: dict[str, Any] | None = None,
        agent_args: tuple[str, ...] = (),
    ) -> None:
        self.tmp_path = tmp_path
        self.version = version
        self.fs = fs
        self.terminal = terminal
        self.boolean_options = boolean_options
        self.meta = meta  # v1 `clientCapabilities._meta`
        self.agent_args = agent_args
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir(exist_ok=True)
        self.transcript_path = tmp_path / f"transcript-{time.monotonic_ns()}.jsonl"
        self.updates: list[dict[str, Any]] = []  # session/update params, in order
        self.requests: list[tuple[str, dict[str, Any]]] = []  # agent -> client requests
        self.permission: Answer = "allow_once"
        self.negotiated = version
        self.check_own = True
        self._idle: dict[str, asyncio.Future[str | None]] = {}
        self._terminals: dict[str, tuple[asyncio.subprocess.Process, bytearray, asyncio.Task]] = {}
        self._watchers: dict[str, Callable[[dict[str, Any]], None]] = {}

    async def __aenter__(self) -> DemoClient:
        env = {**os.environ, "XDG_DATA_HOME": str(self.tmp_path / "data")}
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "acp_tui.demo",
            "--speed",
            "0",
            *self.agent_args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=self.workspace,
            env=env,
        )
        assert self.process.stdout is not None and self.process.stdin is not None
        self.transcript = Transcript(self.transcript_path)
        self.connection = Connection(
            self.process.stdout, self.process.stdin, self, transcript=self.transcript
        )
        self.reader = asyncio.create_task(self.connection.run())
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        finally:
            if self.process.returncode is None:
                self.process.kill()
        await self.reader
        self.transcript.close()
        for process, _, _ in self._terminals.values():
            if process.returncode is None:
                process.kill()
        if exc_info[0] is None:
            self.assert_valid()

    def assert_valid(self) -> None:
        """Every message the agent sent validates against the negotiated version's schema."""
        count = validate_transcript(self.transcript_path, version=self.negotiated, sender="agent")
        assert count > 0
        if self.check_own and self.version == self.negotiated:  # keep this client honest
            validate_transcript(self.transcript_path, version=self.negotiated, sender="client")

    # -- calling the agent ----------------------------------------------------------------------

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        raw = await self.connection.request(method, params)
        return msgspec.json.decode(raw)

    async def initialize(self) -> dict[str, Any]:
        if self.version >= 2:
            params: dict[str, Any] = {
                "protocolVersion": self.version,
                "info": {"name": "demo-test", "version": "0"},
                "capabilities": {},
            }
        else:
            capabilities: dict[str, Any] = {
                "fs": {"readTextFile": self.fs, "writeTextFile": self.fs},
                "terminal": self.terminal,
            }
            if self.boolean_options:
                capabilities["session"] = {"configOptions": {"boolean": {}}}
            if self.meta is not None:
                capabilities["_meta"] = self.meta
            params = {
                "protocolVersion": self.version,
                "clientCapabilities": capabilities,
                "clientInfo": {"name": "demo-test", "version": "0"},
            }
        result = await self.call("initialize", params)
        self.negotiated = result["protocolVersion"]
        return result

    async def new_session(self) -> str:
        await self.initialize()
        params: dict[str, Any] = {"cwd": str(self.workspace), "mcpServers": []}
        self.setup = await self.call("session/new", params)
        return self.setup["sessionId"]

    async def prompt(self, session_id: str, text: str | list[dict[str, Any]]) -> str | None:
        """Run one turn to its end; return the stop reason (v1: the result; v2: the idle
        `state_update`)."""
        blocks = [{"type": "text", "text": text}] if isinstance(text, str) else text
        params = {"sessionId": session_id, "prompt": blocks}
        if self.negotiated < 2:
            result = await self.call("session/prompt", params)
            self.last_result = result
            return result["stopReason"]
        idle = self._idle[session_id] = asyncio.get_running_loop().create_future()
        assert await self.call("session/prompt", params) == {}
        return await asyncio.wait_for(idle, 20)

    async def cancel(self, session_id: str) -> None:
        await self.connection.notify("session/cancel", {"sessionId": session_id})

    def watch(self, name: str, predicate: Callable[[dict[str, Any]], bool]) -> asyncio.Future:
        """A future that resolves with the first update matching `predicate`."""
        future = asyncio.get_running_loop().create_future()

        def check(update: dict[str, Any]) -> None:
            if not future.done() and predicate(update):
                future.set_result(update)
                del self._watchers[name]

        self._watchers[name] = check
        return future

    # -- what the agent sent -------------------------------------------------------------------

    def of(self, kind: str, session_id: str | None = None) -> list[dict[str, Any]]:
        return [
            params["update"]
            for params in self.updates
            if params["update"]["sessionUpdate"] == kind
            and (session_id is None or params["sessionId"] == session_id)
        ]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"].get("text", "") for u in self.of(kind))

    def mark(self) -> int:
        return len(self.updates)

    def since(self, mark: int) -> list[dict[str, Any]]:
        return [params["update"] for params in self.updates[mark:]]

    def tool_calls(self, since: int = 0) -> dict[str, dict[str, Any]]:
        """Tool calls as a client would see them: created, patched, content appended."""
        calls: dict[str, dict[str, Any]] = {}
        for update in self.since(since):
            kind = update["sessionUpdate"]
            if kind in ("tool_call", "tool_call_update"):
                call = calls.setdefault(update["toolCallId"], {"statuses": []})
                fields = {k: v for k, v in update.items() if k != "sessionUpdate"}
                call.update(fields)
                if "status" in update:
                    call["statuses"].append(update["status"])
            elif kind == "tool_call_content_chunk":
                call = calls[update["toolCallId"]]
                call["content"] = [*call.get("content", []), update["content"]]
        return calls

    def requested(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.requests if name == method]

    # -- Handler: the agent calling us ---------------------------------------------------------

    def handle_notification(self, method: str, params: msgspec.Raw) -> None:
        assert method == "session/update", method
        data = msgspec.json.decode(params)
        self.updates.append(data)
        update = data["update"]
        for check in list(self._watchers.values()):
            check(update)
        if update["sessionUpdate"] == "state_update" and update["state"] == "idle":
            future = self._idle.get(data["sessionId"])
            if future is not None and not future.done():
                future.set_result(update.get("stopReason"))

    async def handle_request(self, method: str, params: msgspec.Raw) -> Any:
        data = msgspec.json.decode(params)
        self.requests.append((method, data))
        if method == "session/request_permission":
            answer = self.permission
            if callable(answer):
                answer = await answer(data) if asyncio.iscoroutinefunction(answer) else answer(data)
            if answer == "cancelled":
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected", "optionId": answer}}
        if method == "fs/read_text_file":
            path = Path(data["path"])
            if not path.exists():
                raise RpcError(RESOURCE_NOT_FOUND, f"no such file: {path}")
            lines = path.read_text().splitlines(keepends=True)
            start = (data.get("line") or 1) - 1
            limit = data.get("limit") or len(lines)
            return {"content": "".join(lines[start : start + limit])}
        if method == "fs/write_text_file":
            path = Path(data["path"])
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(data["content"])
            return {}
        if method.startswith("terminal/"):
            return await self._terminal(method, data)
        raise RpcError(METHOD_NOT_FOUND, method)

    async def _terminal(self, method: str, data: dict[str, Any]) -> Any:
        if method == "terminal/create":
            process = await asyncio.create_subprocess_exec(
                data["command"],
                *data.get("args", []),
                cwd=data.get("cwd"),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            output = bytearray()
            terminal_id = f"term-{len(self._terminals) + 1}"
            collector = asyncio.create_task(self._collect(process, output))
            self._terminals[terminal_id] = (process, output, collector)
            return {"terminalId": terminal_id}
        process, output, collector = self._terminals[data["terminalId"]]
        if method == "terminal/wait_for_exit":
            code = await process.wait()
            await collector
            return {"exitCode": code} if code >= 0 else {"signal": "SIGKILL"}
        if method == "terminal/output":
            result: dict[str, Any] = {"output": output.decode(), "truncated": False}
            if process.returncode is not None:
                result["exitStatus"] = {"exitCode": process.returncode}
            return result
        if method in ("terminal/kill", "terminal/release"):
            if process.returncode is None:
                process.kill()
            if method == "terminal/release":
                del self._terminals[data["terminalId"]]
            return {}
        raise RpcError(METHOD_NOT_FOUND, method)

    @staticmethod
    async def _collect(process: asyncio.subprocess.Process, output: bytearray) -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(4096):
            output += chunk


VERSIONS = pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])


def messages(client: DemoClient, kind: str = "agent_message_chunk") -> dict[str, str]:
    """Streamed text per messageId, in order of appearance."""
    texts: dict[str, str] = {}
    for update in client.of(kind):
        texts[update["messageId"]] = texts.get(update["messageId"], "") + update["content"]["text"]
    return texts


# -- initialize -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("offered", "answered"), [(1, 1), (2, 2), (3, 2), (0, 2)], ids=["1", "2", "3", "0"]
)
async def test_version_negotiation(tmp_path: Path, offered: int, answered: int) -> None:
    """The same version if supported, else the agent's latest (initialization.mdx)."""
    async with DemoClient(tmp_path, offered) as client:
        result = await client.initialize()
        assert result["protocolVersion"] == answered
        if answered == 2:
            assert result["info"]["name"] == "acp-tui-demo"
            assert set(result["capabilities"]["session"]) >= {"prompt", "delete"}
            assert "agentCapabilities" not in result
        else:
            assert result["agentCapabilities"]["loadSession"] is True
            assert set(result["agentCapabilities"]["sessionCapabilities"]) >= {
                "list",
                "resume",
                "close",
            }
        client.negotiated = answered


async def test_max_protocol_1_answers_v1_to_a_v2_client(tmp_path: Path) -> None:
    async with DemoClient(tmp_path, 2, agent_args=("--max-protocol", "1")) as client:
        result = await client.initialize()
        assert result["protocolVersion"] == 1 and "agentInfo" in result
        client.negotiated = 1


# -- every scenario, every message valid ----------------------------------------------------------

SCENARIOS = [
    ("/help", "end_turn"),
    ("markdown", "end_turn"),
    ("/think", "end_turn"),
    ("/plan", "end_turn"),
    ("/tools", "end_turn"),
    ("/read notes.txt", "end_turn"),
    ("/edit notes.txt", "end_turn"),
    ("/run echo hi", "end_turn"),
    ("bash", "end_turn"),
    ("/permission", "end_turn"),
    ("/switch", "end_turn"),
    ("/long 50", "end_turn"),
    ("/usage", "end_turn"),
    ("/title Scenario sweep", "end_turn"),
    ("/refuse", "refusal"),
    ("/stop max_tokens", "max_tokens"),
    ("/stop max_turn_requests", "max_turn_requests"),
    ("/nonsense", "end_turn"),
    ("What can you do?", "end_turn"),
]


@VERSIONS
async def test_every_scenario_validates(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        (client.workspace / "notes.txt").write_text("first line\nsecond line\n")
        session_id = await client.new_session()
        for prompt, expected in SCENARIOS:
            assert await client.prompt(session_id, prompt) == expected, prompt
        custom = await client.prompt(session_id, "/custom-stop")
        assert custom == ("_demo_custom_stop" if version == 2 else "end_turn")
        if version == 1:
            assert client.last_result["_meta"] == {"acp-tui.demo/stopReason": "_demo_custom_stop"}
        kinds = {update["sessionUpdate"] for update in client.since(0)}
        common = {
            "available_commands_update",
            "agent_message_chunk",
            "agent_thought_chunk",
            "tool_call_update",
            "config_option_update",
            "session_info_update",
            "usage_update",
        }
        if version == 2:
            expected_kinds = common | {
                "user_message",
                "state_update",
                "plan_update",
                "tool_call_content_chunk",
                "terminal_update",
                "terminal_output_chunk",
                "agent_message",
                "agent_thought",
            }
        else:
            expected_kinds = common | {"tool_call", "plan", "current_mode_update"}
        assert expected_kinds <= kinds
        tool_kinds = {call.get("kind") for call in client.tool_calls().values()}
        assert tool_kinds >= {
            "read",
            "edit",
            "delete",
            "move",
            "search",
            "execute",
            "think",
            "fetch",
            "other",
            "switch_mode",
        }
        statuses = {s for call in client.tool_calls().values() for s in call["statuses"]}
        assert statuses >= {"pending", "in_progress", "completed", "failed"}
        if version == 2:
            assert "cancelled" in statuses


@VERSIONS
async def test_tour(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        (client.workspace / "README.md").write_text("# My project\n\nHello.\n")
        session_id = await client.new_session()
        assert await client.prompt(session_id, "/tour") == "end_turn"
        plans = client.of("plan_update" if version == 2 else "plan")
        final = plans[-1]["plan"]["entries"] if version == 2 else plans[-1]["entries"]
        assert len(final) == 8 and all(entry["status"] == "completed" for entry in final)
        assert client.of("agent_thought_chunk")
        assert len(client.tool_calls()) >= 12
        assert client.requested("session/request_permission")
        assert (client.workspace / "ACP_DEMO.md").read_text().startswith("# ACP demo notes")
        assert client.of("session_info_update")[-1]["title"] == "Tour of the ACP demo agent"
        assert client.of("usage_update")
        if version == 1:
            assert client.requested("fs/read_text_file")
            assert client.requested("fs/write_text_file")
            assert client.requested("terminal/release")
        else:
            assert client.of("terminal_output_chunk")


# -- files, permission, terminals -----------------------------------------------------------------


@VERSIONS
@pytest.mark.parametrize("answer", ["allow_once", "allow_always", "reject_once", "reject_always"])
async def test_edit_happens_only_when_allowed(tmp_path: Path, version: int, answer: str) -> None:
    async with DemoClient(tmp_path, version) as client:
        target = client.workspace / "hello.py"
        target.write_text("print('hello')\n")
        session_id = await client.new_session()
        client.permission = answer
        mark = client.mark()
        assert await client.prompt(session_id, "/edit hello.py") == "end_turn"
        [request] = client.requested("session/request_permission")
        assert {o["kind"] for o in request["options"]} == {
            "allow_once",
            "allow_always",
            "reject_once",
            "reject_always",
        }
        call = next(iter(client.tool_calls(mark).values()))
        # The diff is shown before permission is asked.
        diff = call["content"][0]
        if version == 2:
            assert request["title"] and request["subject"]["type"] == "tool_call"
            assert diff["changes"] == [
                {"operation": "modify", "path": str(target), "fileType": "text"}
            ]
            assert "+# Edited by the ACP demo agent (edit 1)." in diff["patch"]["text"]
        else:
            assert request["toolCall"]["toolCallId"] == call["toolCallId"]
            assert diff == {
                "type": "diff",
                "path": str(target),
                "oldText": "print('hello')\n",
                "newText": "print('hello')\n# Edited by the ACP demo agent (edit 1).\n",
            }
        allowed = answer.startswith("allow")
        edited = "Edited by the ACP demo agent" in target.read_text()
        assert edited == allowed
        assert call["status"] == (
            "completed" if allowed else "cancelled" if version == 2 else "failed"
        )
        if version == 1:
            assert bool(client.requested("fs/write_text_file")) == allowed

        # "always" answers are remembered; "once" answers are asked again.
        assert await client.prompt(session_id, "/edit hello.py") == "end_turn"
        asked_again = len(client.requested("session/request_permission")) == 2
        assert asked_again == answer.endswith("_once")
        assert target.read_text().count("Edited by") == (2 if allowed else 0)


@VERSIONS
async def test_edit_creates_a_new_file_and_stays_in_the_workspace(
    tmp_path: Path, version: int
) -> None:
    async with DemoClient(tmp_path, version) as client:
        session_id = await client.new_session()
        mark = client.mark()
        assert await client.prompt(session_id, "/edit docs/new.md") == "end_turn"
        assert (client.workspace / "docs" / "new.md").read_text().startswith("# ACP demo notes")
        [call] = client.tool_calls(mark).values()
        diff = call["content"][0]
        if version == 2:
            assert diff["changes"][0]["operation"] == "add"
            assert "new file mode" in diff["patch"]["text"]
        else:
            assert diff["oldText"] is None
        outside = tmp_path / "outside.txt"
        assert await client.prompt(session_id, f"/edit {outside}") == "end_turn"
        assert await client.prompt(session_id, "/edit ../escape.txt") == "end_turn"
        assert not outside.exists() and not (tmp_path / "escape.txt").exists()
        assert "outside this session's workspace" in client.text()


@VERSIONS
async def test_code_mode_edits_without_asking_and_answers_tersely(
    tmp_path: Path, version: int
) -> None:
    async with DemoClient(tmp_path, version) as client:
        session_id = await client.new_session()
        if version == 1:
            assert client.setup["modes"]["currentModeId"] == "ask"
            assert (
                await client.call("session/set_mode", {"sessionId": session_id, "modeId": "code"})
                == {}
            )
        else:
            assert "modes" not in client.setup
            result = await client.call(
                "session/set_config_option",
                {"sessionId": session_id, "configId": "mode", "type": "id", "value": "code"},
            )
            [mode] = [o for o in result["configOptions"] if o["configId"] == "mode"]
            assert mode["currentValue"] == "code"
        assert await client.prompt(session_id, "/edit code.txt") == "end_turn"
        assert not client.requested("session/request_permission")
        assert (client.workspace / "code.txt").exists()
        mark = client.mark()
        assert await client.prompt(session_id, "Refactor this") == "end_turn"
        reply = "".join(
            u["content"]["text"]
            for u in client.since(mark)
            if "content" in u and u["sessionUpdate"] == "agent_message_chunk"
        )
        assert reply.startswith("```python") and "Code mode" in reply


@VERSIONS
async def test_read_a_workspace_file(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        (client.workspace / "data.txt").write_text("alpha\nbeta\ngamma\n")
        session_id = await client.new_session()
        assert await client.prompt(session_id, "/read data.txt") == "end_turn"
        [call] = client.tool_calls().values()
        assert call["kind"] == "read" and call["status"] == "completed"
        assert call["locations"] == [{"path": str(client.workspace / "data.txt"), "line": 1}]
        assert "alpha\nbeta\ngamma" in call["content"][0]["content"]["text"]
        if version == 1:
            [request] = client.requested("fs/read_text_file")
            assert request["path"] == str(client.workspace / "data.txt")
        assert await client.prompt(session_id, "/read missing.txt") == "end_turn"
        missing = list(client.tool_calls().values())[-1]
        assert missing["status"] == "failed"


@VERSIONS
async def test_run_a_real_command(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        session_id = await client.new_session()
        mark = client.mark()
        command = "echo demo-output-$((6*7)) && exit 3"
        assert await client.prompt(session_id, f"/run {command}") == "end_turn"
        [request] = client.requested("session/request_permission")
        [call] = client.tool_calls(mark).values()
        assert call["kind"] == "execute" and call["status"] == "failed"  # exit code 3
        [terminal] = [c for c in call["content"] if c["type"] == "terminal"]
        if version == 1:
            [create] = client.requested("terminal/create")
            assert create["command"] == "sh" and create["args"] == ["-c", command]
            assert create["cwd"] == str(client.workspace)
            order = [name for name, _ in client.requests if name.startswith("terminal/")]
            assert order == [
                "terminal/create",
                "terminal/output",
                "terminal/wait_for_exit",
                "terminal/output",
                "terminal/release",
            ]
            assert call["rawOutput"]["exitCode"] == 3
        else:
            assert request["subject"] == {
                "type": "command",
                "command": command,
                "cwd": str(client.workspace),
                "toolCallId": call["toolCallId"],
                "terminalId": terminal["terminalId"],
            }
            chunks = [
                base64.b64decode(u["data"])
                for u in client.of("terminal_output_chunk")
                if u["terminalId"] == terminal["terminalId"]
            ]
            assert b"".join(chunks) == b"demo-output-42\n"
            last = client.of("terminal_update")[-1]
            assert last["exitStatus"]["exitCode"] == 3
        assert "demo-output-42" in client.text()


BASH_OUTPUT = "".join(f"step {n} of 5\n" for n in range(1, 6)) + "notes.txt\n"
BOTH = {"terminal_output": True, "terminal_output_delta": True}


@pytest.mark.parametrize(
    ("version", "meta"),
    [(1, BOTH), (1, {"terminal_output": True}), (1, {"terminal_output_delta": False}), (2, None)],
    ids=["v1-delta", "v1-output", "v1-none", "v2"],
)
async def test_bash_the_agent_runs_a_command_itself(
    tmp_path: Path, version: int, meta: dict[str, bool] | None
) -> None:
    """`bash`: no permission asked, no `terminal/*`: the agent runs the command and shows it as
    the client can. Over v1 `_meta` (claude-agent-acp's Bash tool), the output comes live."""
    async with DemoClient(tmp_path, version, meta=meta) as client:
        (client.workspace / "notes.txt").write_text("a note\n")
        session_id = await client.new_session()
        mark = client.mark()
        assert await client.prompt(session_id, "bash") == "end_turn"
        assert client.requests == []
        updates = [
            u for u in client.since(mark) if u["sessionUpdate"] in ("tool_call", "tool_call_update")
        ]
        first, *middle, last = updates
        assert first["title"] == scenarios.BASH_COMMAND and first["kind"] == "execute"
        assert first["rawInput"] == {
            "command": scenarios.BASH_COMMAND,
            "cwd": str(client.workspace),
        }
        assert [u.get("status") for u in updates if "status" in u] == [
            "pending",
            "in_progress",
            "completed",
        ]
        assert last["rawOutput"] == {"exitCode": 0}
        text = client.text()
        if version == 2:
            [terminal] = middle[0]["content"]
            chunks = [
                base64.b64decode(u["data"])
                for u in client.of("terminal_output_chunk")
                if u["terminalId"] == terminal["terminalId"]
            ]
            assert b"".join(chunks).decode() == BASH_OUTPUT and len(chunks) > 1
            assert client.of("terminal_update")[-1]["exitStatus"]["exitCode"] == 0
            assert all("_meta" not in u for u in updates)
            assert "display terminal" in text
        elif meta == BOTH or meta == {"terminal_output": True}:
            key = "terminal_output_delta" if meta == BOTH else "terminal_output"
            terminal_id = first["_meta"]["terminal_info"]["terminal_id"]
            info = {"terminal_id": terminal_id, "cwd": str(client.workspace)}
            assert first["sessionUpdate"] == "tool_call" and first["_meta"] == {
                "terminal_info": info
            }
            assert first["content"] == [{"type": "terminal", "terminalId": terminal_id}]
            pieces = [u["_meta"][key] for u in updates if key in u.get("_meta", {})]
            assert all(piece["terminal_id"] == terminal_id for piece in pieces)
            assert "".join(piece["data"] for piece in pieces) == BASH_OUTPUT
            assert len(pieces) > 1  # as it came, not all at the end
            exits = [u for u in updates if "terminal_exit" in u.get("_meta", {})]
            assert exits == [last]
            exit_status = {"terminal_id": terminal_id, "exit_code": 0, "signal": None}
            assert last["_meta"]["terminal_exit"] == exit_status
            assert f"`{key}`" in text
        else:
            assert all("_meta" not in u for u in updates)
            [content] = last["content"]
            assert content["type"] == "content"
            assert BASH_OUTPUT.rstrip("\n") in content["content"]["text"]
            assert "could not watch the output live" in text
        assert "exited with code **0**" in text


async def test_bash_cancelled_ends_its_meta_terminal(tmp_path: Path) -> None:
    async with DemoClient(tmp_path, 1, meta=BOTH) as client:
        session_id = await client.new_session()
        mark = client.mark()
        started = client.watch("delta", lambda u: "terminal_output_delta" in u.get("_meta", {}))
        turn = asyncio.create_task(client.prompt(session_id, "bash"))
        await asyncio.wait_for(started, 5)
        await client.cancel(session_id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        updates = [u for u in client.since(mark) if u["sessionUpdate"] == "tool_call_update"]
        [ended] = [u for u in updates if "terminal_exit" in u.get("_meta", {})]
        assert ended["_meta"]["terminal_exit"]["signal"] == "SIGTERM"
        assert updates[-1]["status"] == "failed"  # v1 has no `cancelled`
        assert updates.index(ended) < len(updates) - 1


async def test_v1_without_client_capabilities_skips_gracefully(tmp_path: Path) -> None:
    async with DemoClient(tmp_path, 1, fs=False, terminal=False, boolean_options=False) as client:
        session_id = await client.new_session()
        for prompt in ("/read README.md", "/edit notes.md", "/run ls", "/tour"):
            assert await client.prompt(session_id, prompt) == "end_turn"
        assert not [name for name, _ in client.requests if name.startswith(("fs/", "terminal/"))]
        text = client.text()
        assert "Skipping the read" in text and "Skipping the command" in text
        assert "nothing was written" in text
        assert not (client.workspace / "notes.md").exists()
        # Without `session.configOptions.boolean` the boolean option falls back to a select.
        [thoughts] = [o for o in client.setup["configOptions"] if o["id"] == "show_thoughts"]
        assert thoughts["type"] == "select" and thoughts["currentValue"] == "on"


# -- cancellation ---------------------------------------------------------------------------------


@VERSIONS
async def test_cancel_a_slow_turn_promptly(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        session_id = await client.new_session()
        ticking = client.watch("tick", lambda u: "⏳" in u.get("content", {}).get("text", ""))
        turn = asyncio.create_task(client.prompt(session_id, "/slow 30"))
        await asyncio.wait_for(ticking, 5)
        started = time.monotonic()
        await client.cancel(session_id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        assert time.monotonic() - started < 3.0  # of a 30 s turn; a loaded machine is slow
        [call] = [c for c in client.tool_calls().values() if c["kind"] == "other"]
        assert call["status"] == ("cancelled" if version == 2 else "failed")
        # The session still works afterwards.
        assert await client.prompt(session_id, "hello") == "end_turn"


@VERSIONS
async def test_long_stream_count_and_cancel(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        session_id = await client.new_session()
        assert await client.prompt(session_id, "/long 2000") == "end_turn"
        counts: dict[str, int] = {}
        for update in client.of("agent_message_chunk"):
            counts[update["messageId"]] = counts.get(update["messageId"], 0) + 1
        assert 2000 in counts.values()
        numbers = [t for t in messages(client).values() if t.startswith("1 2 3")]
        assert numbers[0].split() == [str(i) for i in range(1, 2001)]

        mark = client.mark()
        streaming = client.watch("many", lambda u: u.get("content", {}).get("text") == "501 ")
        turn = asyncio.create_task(client.prompt(session_id, "/long 200000"))
        await asyncio.wait_for(streaming, 10)
        started = time.monotonic()
        await client.cancel(session_id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        assert time.monotonic() - started < 2.0
        assert len(client.since(mark)) < 150_000


@VERSIONS
async def test_cancel_while_permission_is_pending(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        session_id = await client.new_session()

        async def cancel_instead(request: dict[str, Any]) -> str:
            await client.cancel(session_id)
            return "cancelled"

        client.permission = cancel_instead
        assert await client.prompt(session_id, "/edit never.txt") == "cancelled"
        assert not (client.workspace / "never.txt").exists()
        assert not client.requested("fs/write_text_file")
        if version == 2:
            states = [u["state"] for u in client.of("state_update")]
            assert states == ["running", "requires_action", "idle"]


# -- stop reasons and errors ----------------------------------------------------------------------


@VERSIONS
async def test_error_scenario(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        session_id = await client.new_session()
        with pytest.raises(RpcError) as failure:
            await client.prompt(session_id, "/error")
        assert failure.value.code == -32603 and failure.value.data["scenario"] == "error"
        if version == 2:
            # Not accepted, so no user message and no state change.
            assert not client.of("user_message") and not client.of("state_update")
        else:
            assert "something is about to go wrong" in client.text()
        assert await client.prompt(session_id, "hello again") == "end_turn"


@VERSIONS
async def test_unknown_and_removed_methods(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        client.check_own = False  # this test sends what it should not
        session_id = await client.new_session()
        with pytest.raises(RpcError) as failure:
            await client.call("_demo/nothing", {})
        assert failure.value.code == METHOD_NOT_FOUND
        params = {"sessionId": session_id, "modeId": "code"}
        if version == 2:
            for method in ("session/set_mode", "session/load"):
                with pytest.raises(RpcError) as failure:
                    await client.call(method, params)
                assert failure.value.code == METHOD_NOT_FOUND
        with pytest.raises(RpcError) as failure:
            await client.call(
                "session/set_config_option",
                {"sessionId": session_id, "configId": "model", "value": "gpt-99"}
                | ({"type": "id"} if version == 2 else {}),
            )
        assert failure.value.code == INVALID_PARAMS
        with pytest.raises(RpcError) as failure:
            await client.call("session/new", {"cwd": "relative/path", "mcpServers": []})
        assert failure.value.code == INVALID_PARAMS


# -- configuration --------------------------------------------------------------------------------


@VERSIONS
async def test_config_options_change_behaviour(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        session_id = await client.new_session()
        key = "configId" if version == 2 else "id"
        options = {o[key]: o for o in client.setup["configOptions"]}
        assert options["model"]["category"] == "model"
        assert options["mode"]["category"] == "mode"
        assert options["show_thoughts"]["type"] == "boolean"

        def setting(config_id: str, value: str | bool) -> dict[str, Any]:
            params = {"sessionId": session_id, "configId": config_id, "value": value}
            if isinstance(value, bool):
                params["type"] = "boolean"
            elif version == 2:
                params["type"] = "id"
            return params

        result = await client.call("session/set_config_option", setting("show_thoughts", False))
        assert {o[key]: o["currentValue"] for o in result["configOptions"]}[
            "show_thoughts"
        ] is False
        assert await client.prompt(session_id, "/think") == "end_turn"
        assert not client.of("agent_thought_chunk")
        assert "hidden" in client.text()

        await client.call("session/set_config_option", setting("show_thoughts", True))
        await client.call("session/set_config_option", setting("model", "demo-smart"))
        assert await client.prompt(session_id, "hi") == "end_turn"  # smart thinks first
        assert client.of("agent_thought_chunk")
        assert client.of("usage_update")[-1]["size"] == 200_000

        # The agent changes the mode itself (after asking) and says so.
        assert await client.prompt(session_id, "/switch") == "end_turn"
        [update] = client.of("config_option_update")[-1:]
        assert {o[key]: o["currentValue"] for o in update["configOptions"]}["mode"] == "code"
        if version == 1:
            assert client.of("current_mode_update")[-1]["currentModeId"] == "code"


@VERSIONS
async def test_prompt_with_attachments(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as client:
        session_id = await client.new_session()
        blocks = [
            {"type": "text", "text": "Look at these"},
            {"type": "resource_link", "name": "main.py", "uri": "file:///tmp/main.py"},
            {
                "type": "resource",
                "resource": {
                    "uri": "file:///tmp/a.txt",
                    "text": "one\ntwo",
                    "mimeType": "text/plain",
                },
            },
            {
                "type": "image",
                "data": base64.b64encode(b"x" * 300).decode(),
                "mimeType": "image/png",
            },
        ]
        assert await client.prompt(session_id, blocks) == "end_turn"
        text = client.text()
        assert "main.py" in text and "2 lines" in text and "image/png" in text
        if version == 2:
            [user] = client.of("user_message")
            assert user["content"] == blocks


# -- sessions -------------------------------------------------------------------------------------


@VERSIONS
async def test_sessions_are_listed_and_replayed_across_runs(tmp_path: Path, version: int) -> None:
    async with DemoClient(tmp_path, version) as first:
        (first.workspace / "notes.txt").write_text("note\n")
        session_id = await first.new_session()
        assert await first.prompt(session_id, "/title Replay me") == "end_turn"
        assert await first.prompt(session_id, "/plan") == "end_turn"
        assert await first.prompt(session_id, "/run echo replayed-output") == "end_turn"
        empty = await first.call("session/new", {"cwd": str(first.workspace), "mcpServers": []})
        await first.call("session/close", {"sessionId": session_id})
        live_calls = first.tool_calls()

    async with DemoClient(tmp_path, version) as client:
        await client.initialize()
        listed = await client.call("session/list", {"cwd": str(client.workspace)})
        [info] = listed["sessions"]  # the session nobody prompted is not listed
        assert info["sessionId"] == session_id and info["title"] == "Replay me"
        assert info["sessionId"] != empty["sessionId"] and "nextCursor" not in listed
        assert (await client.call("session/list", {"cwd": str(tmp_path)}))["sessions"] == []

        params = {"sessionId": session_id, "cwd": str(client.workspace), "mcpServers": []}
        # Resume without replay: no history.
        await client.call("session/resume", params)
        assert not [u for u in client.since(0) if "message" in u["sessionUpdate"]]
        mark = client.mark()
        if version == 2:
            result = await client.call("session/resume", params | {"replayFrom": {"type": "start"}})
            users = [u for u in client.since(mark) if u["sessionUpdate"] == "user_message"]
            assert [u["content"][0]["text"] for u in users] == [
                "/title Replay me",
                "/plan",
                "/run echo replayed-output",
            ]
            assert any(u["sessionUpdate"] == "terminal_update" for u in client.since(mark))
        else:
            result = await client.call("session/load", params)
            users = [u for u in client.since(mark) if u["sessionUpdate"] == "user_message_chunk"]
            assert [u["content"]["text"] for u in users] == [
                "/title Replay me",
                "/plan",
                "/run echo replayed-output",
            ]
            assert result["modes"]["currentModeId"] == "ask"
        assert "configOptions" in result
        replayed = client.tool_calls(mark)
        assert replayed.keys() == live_calls.keys()
        assert all(call["status"] == "completed" for call in replayed.values())
        replayed_text = json.dumps(list(replayed.values()))
        assert "replayed-output" in replayed_text
        agent_text = "".join(
            block["text"]
            for u in client.since(mark)
            if u["sessionUpdate"] in ("agent_message", "agent_message_chunk")
            for block in (u["content"] if isinstance(u["content"], list) else [u["content"]])
        )
        assert "All done" in agent_text
        # And the conversation goes on.
        assert await client.prompt(session_id, "still there?") == "end_turn"
        with pytest.raises(RpcError) as failure:
            await client.call("session/resume", params | {"sessionId": "sess_nope"})
        assert failure.value.code == RESOURCE_NOT_FOUND
        await client.call("session/delete", {"sessionId": session_id})
        assert (await client.call("session/list", {}))["sessions"] == []


async def test_a_v1_session_replays_over_v2(tmp_path: Path) -> None:
    async with DemoClient(tmp_path, 1) as first:
        (first.workspace / "a.txt").write_text("a\n")
        session_id = await first.new_session()
        assert await first.prompt(session_id, "/tools") == "end_turn"
        assert await first.prompt(session_id, "/edit a.txt") == "end_turn"
    async with DemoClient(tmp_path, 2) as client:
        await client.initialize()
        params = {"sessionId": session_id, "cwd": str(client.workspace)}
        await client.call("session/resume", params | {"replayFrom": {"type": "start"}})
        assert len(client.tool_calls()) == 10
        assert client.of("user_message") and client.of("agent_message")


def test_session_files_that_are_not_objects_are_skipped(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    record = SessionRecord.new("/w", [])
    store.save(record)
    (tmp_path / "sess_list.json").write_text("[1]")
    assert [r.session_id for r in store.all()] == [record.session_id]
    assert store.load("sess_list") is None


# -- in this process: races, failures, shutdown ---------------------------------------------------


class LocalConnection:
    """What `DemoAgent` sends through, when it runs in this process: keeps the updates and the
    requests, and answers each request with `answer`."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.requests: list[str] = []
        self.closed = False

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if self.closed:
            raise ConnectionClosed()
        self.updates.append(msgspec.json.decode(msgspec.json.encode(params["update"])))

    async def request(self, method: str, params: dict[str, Any]) -> bytes:
        self.requests.append(method)
        return msgspec.json.encode(await self.answer(method, params))

    async def answer(self, method: str, params: dict[str, Any]) -> Any:
        """A client that allows everything, and whose terminals' commands exit at once."""
        if method == "session/request_permission":
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        if method == "terminal/create":
            return {"terminalId": "term-1"}
        if method == "terminal/output":
            return {"output": "", "truncated": False, "exitStatus": {"exitCode": 0}}
        return {}

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [update for update in self.updates if update["sessionUpdate"] == kind]

    def statuses(self) -> list[str]:
        """The statuses tool calls were given, in order."""
        return [u["status"] for u in self.updates if u.get("toolCallId") and "status" in u]


async def call(agent: DemoAgent, method: str, params: dict[str, Any]) -> Any:
    return await agent.handle_request(method, msgspec.Raw(msgspec.json.encode(params)))


async def local_agent(version: int) -> tuple[DemoAgent, LocalConnection]:
    agent = DemoAgent(speed=0)
    agent.connection = LocalConnection()  # type: ignore[assignment]
    capabilities = {"terminal": True}
    await call(
        agent, "initialize", {"protocolVersion": version, "clientCapabilities": capabilities}
    )
    return agent, agent.connection  # type: ignore[return-value]


async def local_session(agent: DemoAgent, cwd: Path) -> str:
    created = await call(agent, "session/new", {"cwd": str(cwd), "mcpServers": []})
    await settled(agent)
    return created["sessionId"]


async def local_prompt(agent: DemoAgent, session_id: str, *blocks: Any) -> Any:
    """`session/prompt` with text blocks (a str) or any blocks; its result (in v2, `{}`)."""
    prompt = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
    return await call(agent, "session/prompt", {"sessionId": session_id, "prompt": prompt})


async def settled(agent: DemoAgent) -> None:
    """Wait for what the agent does after its responses: a session's welcome, v2 turns."""
    await asyncio.wait_for(asyncio.gather(*agent._tasks, return_exceptions=True), 5)


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0.01)


async def test_initialize_comes_once(tmp_path: Path) -> None:
    agent, _ = await local_agent(1)
    with pytest.raises(RpcError) as caught:
        await call(agent, "initialize", {"protocolVersion": 2})
    assert caught.value.code == INVALID_REQUEST
    assert agent.peer is not None and agent.peer.version == 1


@pytest.mark.parametrize("block", [{"type": "text"}, {"type": "text", "text": 5}])
async def test_a_text_block_without_text_is_invalid_params(
    tmp_path: Path, block: dict[str, Any]
) -> None:
    agent, _ = await local_agent(1)
    session_id = await local_session(agent, tmp_path)
    with pytest.raises(RpcError) as caught:
        await local_prompt(agent, session_id, "hello", block)
    assert caught.value.code == INVALID_PARAMS


async def test_prompts_play_one_at_a_time_and_a_cancel_reaches_them_all(tmp_path: Path) -> None:
    """A slow turn, then two prompts at once: each prompt cancels the one before it (playing
    or waiting its turn), only one plays at a time, and `session/cancel` reaches the last."""
    agent, connection = await local_agent(1)
    session_id = await local_session(agent, tmp_path)

    def ticking() -> int:
        """How many turns began to tick."""
        texts = [u.get("content", {}).get("text", "") for u in connection.updates]
        return sum(text.startswith("⏳ 1/") for text in texts)

    prompts = [asyncio.ensure_future(local_prompt(agent, session_id, "/slow 30"))]
    await until(lambda: ticking() == 1)
    prompts += [asyncio.ensure_future(local_prompt(agent, session_id, "/slow 30")) for _ in "ab"]
    await until(lambda: ticking() >= 2)
    agent.handle_notification("session/cancel", msgspec.json.encode({"sessionId": session_id}))
    results = await asyncio.wait_for(asyncio.gather(*prompts), 5)
    assert [result["stopReason"] for result in results] == ["cancelled"] * 3
    assert ticking() == 2  # the one in the middle never played


@VERSIONS
@pytest.mark.parametrize(
    "failure",
    [ScenarioError(INTERNAL_ERROR, "failed on purpose"), RuntimeError("a bug")],
    ids=["scenario error", "bug"],
)
async def test_a_failing_scenario_still_ends_its_turn_properly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: int, failure: Exception
) -> None:
    """v1: the prompt fails, its tool calls closed first; v2 (accepted): `idle` all the same."""

    async def failing(turn: Turn, arg: str) -> None:
        await turn.tool("Half done", "other")
        raise failure

    monkeypatch.setitem(scenarios.SCENARIOS, "help", failing)
    agent, connection = await local_agent(version)
    session_id = await local_session(agent, tmp_path)
    if version == 1:
        with pytest.raises(RpcError) as caught:
            await local_prompt(agent, session_id, "/help")
        assert caught.value.code == INTERNAL_ERROR
        assert connection.statuses() == ["pending", "failed"]
    else:
        assert await local_prompt(agent, session_id, "/help") == {}
        await settled(agent)
        assert connection.statuses() == ["pending", "cancelled"]
        last = connection.updates[-1]
        assert last.pop("usage")["outputTokens"] > 0  # what the turn said before it failed
        assert last == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}


async def test_v1_a_failing_client_terminal_fails_the_tool_call_not_the_prompt(
    tmp_path: Path,
) -> None:
    agent, connection = await local_agent(1)
    session_id = await local_session(agent, tmp_path)

    async def answer(method: str, params: dict[str, Any]) -> Any:
        if method == "terminal/wait_for_exit":
            raise RpcError(INTERNAL_ERROR, "the terminal broke")
        return await LocalConnection.answer(connection, method, params)

    connection.answer = answer  # type: ignore[method-assign]
    assert (await local_prompt(agent, session_id, "/run make"))["stopReason"] == "end_turn"
    assert connection.statuses()[-1] == "failed"
    assert connection.requests[-1] == "terminal/release"


async def test_v2_the_final_terminal_snapshot_keeps_the_bytes(tmp_path: Path) -> None:
    agent, connection = await local_agent(2)
    session_id = await local_session(agent, tmp_path)
    await local_prompt(agent, session_id, r"/run printf '\377ok\n'")
    await settled(agent)
    last = connection.of("terminal_update")[-1]
    assert base64.b64decode(last["output"]["data"]) == b"\xffok\n"


@pytest.mark.parametrize("ending", ["client gone", "agent shut down"])
async def test_v2_a_command_never_outlives_its_turn(tmp_path: Path, ending: str) -> None:
    agent, connection = await local_agent(2)
    session_id = await local_session(agent, tmp_path)
    await local_prompt(agent, session_id, "/run echo $$; while :; do echo tick; sleep 0.05; done")
    await until(lambda: bool(connection.of("terminal_output_chunk")))
    leader = int(base64.b64decode(connection.of("terminal_output_chunk")[0]["data"]).split()[0])
    if ending == "client gone":
        connection.closed = True  # the next update fails
    else:
        for task in agent._tasks:  # as `shutdown` does with turns that outlast its grace
            task.cancel()
    await settled(agent)
    assert gone(leader)


async def test_shutdown_stops_every_session_at_once_within_the_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two turns that cannot end (a client slow to kill a command) hold shutdown back no
    longer than one grace, not one each."""
    monkeypatch.setattr(demo_agent, "SHUTDOWN_GRACE", 0.3)
    agent, connection = await local_agent(1)
    killed = asyncio.Event()

    async def answer(method: str, params: dict[str, Any]) -> Any:
        if method in ("terminal/wait_for_exit", "terminal/kill"):
            await killed.wait()
        return await LocalConnection.answer(connection, method, params)

    connection.answer = answer  # type: ignore[method-assign]
    sessions = [await local_session(agent, tmp_path) for _ in "ab"]
    prompts = [asyncio.ensure_future(local_prompt(agent, s, "/run sleep 30")) for s in sessions]
    await until(lambda: connection.requests.count("terminal/wait_for_exit") == 2)
    started = time.monotonic()
    await agent.shutdown()
    assert time.monotonic() - started < 3.0  # not the commands' 30 s
    killed.set()
    results = await asyncio.wait_for(asyncio.gather(*prompts), 5)
    assert [result["stopReason"] for result in results] == ["cancelled"] * 2
