"""The client services against real agent processes, over real pipes.

A small client (`ServicesClient`) wires `transport.connection.Connection` to the services the
way the session client does: `fs/*` and `terminal/*` go to `ClientServices`, permission
requests to a `PermissionPolicy`. Agents:

- `tests/agents/escape_agent.py`, which tries every way out of the workspace we thought of: each
  attempt must get a JSON-RPC error, and nothing outside may be read or changed;
- the demo agent (`python -m acp_tui.demo`, v1), reading, editing and running a command;
- a tiny agent on the official Python SDK (`agent-client-protocol`), so that every result
  we send is also decoded by models no one here wrote.

Everything we send is also checked against the official v1 schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_tui.protocol.jsonrpc import (
    INVALID_PARAMS,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    method_not_found,
)
from acp_tui.protocol.methods import PermissionRequest
from acp_tui.services.dispatch import ClientServices
from acp_tui.services.fs import FileSystemService, WriteRecord
from acp_tui.services.permissions import Decision, PermissionPolicy
from acp_tui.services.terminals import TerminalService
from acp_tui.transport.connection import Connection
from acp_tui.workspace import Workspace
from tests.agents import escape_agent
from tests.support import TEST_AGENTS
from tests.support.schema import validate_transcript

ESCAPE_AGENT = TEST_AGENTS / "escape_agent.py"


class ServicesClient:
    """The client side of one session, for tests: services, a policy, and what was seen."""

    def __init__(self, services: ClientServices, policy: PermissionPolicy, cwd: Path) -> None:
        self.services = services
        self.policy = policy
        self.cwd = cwd
        self.updates: list[dict[str, Any]] = []
        self.decisions: list[Decision] = []
        self.traffic: list[str] = []

    async def handle_request(self, method: str, params: msgspec.Raw) -> Any:
        if self.services.serves(method):
            return await self.services.handle_request(method, params)
        if method == "session/request_permission":
            request = msgspec.json.decode(params, type=PermissionRequest)
            decision = self.policy.decide(request, workspace=self.cwd)
            self.decisions.append(decision)
            return decision.response()
        raise method_not_found(method)

    def handle_notification(self, method: str, params: msgspec.Raw) -> None:
        if method == "session/update":
            self.updates.append(msgspec.json.decode(params)["update"])

    def record(self, direction: str, line: bytes) -> None:
        self.traffic.append(json.dumps({"dir": direction, "ts": 0.0, "msg": json.loads(line)}))

    def said(self) -> str:
        """Everything the agent said (its message chunks), joined."""
        return "".join(
            update["content"].get("text", "")
            for update in self.updates
            if update.get("sessionUpdate") == "agent_message_chunk"
        )


@contextlib.asynccontextmanager
async def session(
    argv: list[str], client: ServicesClient, stderr: Path
) -> AsyncIterator[tuple[Connection, str]]:
    """Start the agent, initialize (v1, advertising what the services serve), open a session
    in the client's cwd; on exit close everything, terminals included."""
    with stderr.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log
        )
    assert process.stdin is not None and process.stdout is not None
    connection = Connection(process.stdout, process.stdin, client, on_traffic=client.record)
    reader = asyncio.create_task(connection.run())
    try:
        capabilities = msgspec.to_builtins(client.services.capabilities())
        await connection.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": capabilities,
                "clientInfo": {"name": "acp-tui-tests", "version": "0"},
            },
        )
        created = await connection.request(
            "session/new", {"cwd": str(client.cwd), "mcpServers": []}, dict
        )
        yield connection, created["sessionId"]
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            process.kill()
            await process.wait()
        await reader
        await client.services.close()
    validate_transcript(client.traffic, version=1, sender="client")


async def prompt(connection: Connection, session_id: str, text: str) -> dict[str, Any]:
    return await connection.request(
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        dict,
    )


def snapshot(directory: Path) -> dict[str, str]:
    """Every entry under `directory` (symlinks not followed): its type and content hash."""
    entries = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = Path(root, name)
            if path.is_symlink():
                entries[str(path)] = "link " + os.readlink(path)
            elif path.is_dir():
                entries[str(path)] = "dir"
            else:
                entries[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return entries


def file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# -- the escape agent ---------------------------------------------------------------------------

EXPECTED_REASONS = {
    # (method, probe name) -> data.reason of the error
    ("fs/read_text_file", "relative path"): "not_absolute",
    ("fs/read_text_file", "absolute outside"): "outside_workspace",
    ("fs/read_text_file", "absolute outside, missing file"): "outside_workspace",
    ("fs/read_text_file", "/etc/passwd"): "outside_workspace",
    ("fs/read_text_file", "dotdot"): "outside_workspace",
    ("fs/read_text_file", "symlink to /etc"): "outside_workspace",
    ("fs/read_text_file", "symlinked parent dir"): "outside_workspace",
    ("fs/read_text_file", "symlinked file"): "outside_workspace",
    ("fs/read_text_file", "symlink loop"): "symlink",
    ("fs/read_text_file", "/proc/self/root"): "outside_workspace",
    ("fs/read_text_file", "FIFO in workspace"): "not_a_file",
    ("fs/read_text_file", "a directory"): "is_directory",
    ("fs/read_text_file", "huge file"): "too_large",
    ("fs/read_text_file", "binary file"): "binary",
    ("fs/read_text_file", "Latin-1 file"): "binary",
    ("fs/read_text_file", "NUL byte"): "bad_path",
    ("fs/read_text_file", "prefix trick"): "outside_workspace",
    ("fs/read_text_file", "missing file inside"): "not_found",
    ("fs/read_text_file", "past the end"): "past_end",
    ("fs/write_text_file", "absolute outside, overwrite canary"): "outside_workspace",
    ("fs/write_text_file", "symlinked file"): "outside_workspace",
    ("fs/write_text_file", "dangling symlink"): "outside_workspace",
    ("fs/write_text_file", "FIFO in workspace"): "not_a_file",
    ("fs/write_text_file", "a directory"): "is_directory",
    ("fs/write_text_file", "trailing slash"): "is_directory",
    ("fs/write_text_file", "under a file"): "not_a_directory",
    ("terminal/create", "cwd through symlink to /etc"): "outside_workspace",
    ("terminal/create", "cwd is a file"): "not_a_directory",
}


async def test_escape_agent_gets_an_error_for_every_way_out(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "ws-outside"  # also a string-prefix trick: "/…/ws" + "-outside"
    outside.mkdir()
    (outside / "canary.txt").write_text("canary: must never be read or changed\n")
    outside_before = snapshot(outside)
    passwd_before = file_digest("/etc/passwd")
    probe_in_etc = Path("/etc/acp-tui-escape-probe")
    assert not probe_in_etc.exists()
    read_cap = 1024 * 1024

    workspace = Workspace([ws])
    writes: list[WriteRecord] = []
    services = ClientServices(
        FileSystemService(workspace, max_read_bytes=read_cap, on_write=writes.append),
        TerminalService(workspace, kill_grace=0.5),
    )
    client = ServicesClient(services, PermissionPolicy("allow", path=tmp_path / "p.toml"), ws)
    config = json.dumps({"outside": str(outside), "huge_bytes": 2 * read_cap})
    argv = [sys.executable, str(ESCAPE_AGENT)]
    try:
        async with session(argv, client, tmp_path / "agent.log") as (connection, session_id):
            answer = await asyncio.wait_for(prompt(connection, session_id, config), 60)
    finally:
        leaked = probe_in_etc.exists()
        probe_in_etc.unlink(missing_ok=True)
    assert answer == {"stopReason": "end_turn"}
    report = json.loads(client.said().split("ESCAPE-REPORT ", 1)[1])

    escapes = [p for p in report if p["expect"] == "error"]
    assert len(escapes) > 70
    wrong = [p for p in escapes if p["outcome"] != "error"]
    assert not wrong, json.dumps(wrong, indent=1)
    for probe in escapes:
        path = probe["params"].get("path", probe["params"].get("cwd"))
        where = f"{probe['method']} {probe['name']}: {probe['message']}"
        if "surrogate" in probe["name"]:
            # Strict JSON parsers (msgspec) refuse a lone surrogate: the line is unreadable.
            assert probe["code"] in (PARSE_ERROR, INVALID_PARAMS), where
            continue
        assert probe["code"] in (INVALID_PARAMS, RESOURCE_NOT_FOUND), where
        if probe["method"] != "terminal/create" and path:
            assert repr(path) in probe["message"], where  # the message names the path
        reason = EXPECTED_REASONS.get((probe["method"], probe["name"]))
        if reason is not None:
            assert probe["data"]["reason"] == reason, where
        if probe["data"] and probe["data"].get("reason") == "outside_workspace":
            assert "--allow-path" in probe["message"], where

    legit = {(p["method"], p["name"]): p for p in report if p["expect"] == "ok"}
    assert all(p["outcome"] == "ok" for p in legit.values()), json.dumps(legit, indent=1)
    assert legit["fs/read_text_file", "legit read"]["result"] == {"content": "hello\nworld\n"}
    assert legit["fs/read_text_file", "legit read, line 2"]["result"] == {"content": "world\n"}
    huge_line = legit["fs/read_text_file", "huge file, one line"]["result"]
    assert huge_line == {"content": "0123456789abcdef\n"}
    assert (ws / "new" / "deep" / "created.txt").read_text() == "planted by legit write, new dirs\n"
    pwd = legit["terminal/create", "pwd in workspace"]["output"]
    assert pwd["output"] == os.path.realpath(ws) + "\n"
    assert pwd["exitStatus"] == {"exitCode": 0, "signal": None}
    flood = legit["terminal/create", "huge output is truncated"]["output"]
    assert flood["truncated"] is True
    assert 4000 < len(flood["output"].encode()) <= 4096

    # Nothing outside was read (no content came back) or changed.
    everything = json.dumps(report)
    assert "canary: must never" not in everything
    assert "root:x:0:0" not in everything
    assert snapshot(outside) == outside_before
    assert file_digest("/etc/passwd") == passwd_before
    assert not leaked
    assert [w.path for w in writes] == [Path(os.path.realpath(ws)) / "new/deep/created.txt"]
    assert [d.reason for d in client.decisions] == ["--permission allow (allow_once)"]


async def test_escape_agent_with_fs_only_is_told_terminal_methods_do_not_exist(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "ws-outside"
    outside.mkdir()
    (outside / "canary.txt").write_text("canary\n")
    # No terminal to plant them with: the fixtures come with the workspace, as a malicious
    # repository would ship them.
    for argv in escape_agent.fixture_commands(str(ws), str(outside), 4 * 1024 * 1024):
        subprocess.run(argv, check=True)
    outside_before = snapshot(outside)
    services = ClientServices(FileSystemService(Workspace([ws]), max_read_bytes=1024 * 1024))
    # `terminal` is left out: absent means false.
    assert msgspec.to_builtins(services.capabilities()) == {
        "fs": {"readTextFile": True, "writeTextFile": True}
    }
    client = ServicesClient(services, PermissionPolicy("allow", path=tmp_path / "p.toml"), ws)
    async with session([sys.executable, str(ESCAPE_AGENT)], client, tmp_path / "agent.log") as (
        connection,
        session_id,
    ):
        await prompt(connection, session_id, json.dumps({"outside": str(outside)}))
        with pytest.raises(Exception, match="Method not found: terminal/create"):
            await services.handle_request("terminal/create", msgspec.Raw(b"{}"))
    report = json.loads(client.said().split("ESCAPE-REPORT ", 1)[1])
    assert {p["method"] for p in report} == {"fs/read_text_file", "fs/write_text_file"}
    wrong = [p for p in report if p["outcome"] != ("error" if p["expect"] == "error" else "ok")]
    assert not wrong, json.dumps(wrong, indent=1)
    assert snapshot(outside) == outside_before


# -- the demo agent -----------------------------------------------------------------------------


async def test_demo_agent_reads_edits_and_runs_through_the_services(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("# Demo\n\nhello\n")
    workspace = Workspace([ws])
    writes: list[WriteRecord] = []
    output: list[tuple[str, bytes]] = []
    services = ClientServices(
        FileSystemService(workspace, on_write=writes.append),
        TerminalService(workspace, on_output=lambda t, data: output.append((t, data))),
    )
    client = ServicesClient(services, PermissionPolicy("allow", path=tmp_path / "p.toml"), ws)
    argv = [sys.executable, "-m", "acp_tui.demo", "--max-protocol", "1", "--speed", "0"]
    argv.append("--no-persist")
    async with session(argv, client, tmp_path / "demo.log") as (connection, session_id):
        await prompt(connection, session_id, "/read README.md")
        assert "I read **3** lines of `README.md`" in client.said()

        await prompt(connection, session_id, "/edit README.md")
        assert (ws / "README.md").read_text() == (
            "# Demo\n\nhello\n<!-- Edited by the ACP demo agent (edit 1). -->\n"
        )
        [record] = writes
        assert record.written and record.old_text == "# Demo\n\nhello\n"
        assert "+<!-- Edited by the ACP demo agent (edit 1). -->\n" in record.diff

        await prompt(connection, session_id, "/run echo hello-from-a-terminal")
        assert "exited with code **0**" in client.said()
    streamed = b"".join(data for _, data in output)
    assert streamed == b"hello-from-a-terminal\n"
    embedded = [
        item["terminalId"]
        for update in client.updates
        if update["sessionUpdate"] in ("tool_call", "tool_call_update")
        for item in update.get("content") or []
        if item["type"] == "terminal"
    ]
    assert embedded == [output[0][0]]
    assert [d.outcome for d in client.decisions] == ["selected", "selected"]


# -- an agent on the official Python SDK --------------------------------------------------------

SDK_AGENT = textwrap.dedent(
    """
    import asyncio, json
    import acp
    from acp.schema import AgentMessageChunk, EnvVariable, InitializeResponse
    from acp.schema import NewSessionResponse, PromptResponse, TextContentBlock

    class Probe:
        def on_connect(self, conn):
            self.conn = conn

        async def initialize(self, protocol_version, **kwargs):
            return InitializeResponse(protocol_version=1)

        async def new_session(self, cwd, **kwargs):
            self.cwd = cwd
            return NewSessionResponse(session_id="sdk")

        async def prompt(self, prompt, session_id, **kwargs):
            c, report, path = self.conn, {}, self.cwd + "/sdk/notes.txt"
            written = await c.write_text_file(session_id=session_id, path=path,
                                              content="one\\ntwo\\nthree\\n")
            report["write"] = type(written).__name__
            read = await c.read_text_file(session_id=session_id, path=path, line=2, limit=1)
            report["read"] = read.content
            term = await c.create_terminal(
                session_id=session_id, command="sh",
                args=["-c", "echo out; echo err >&2; echo $PROBE; exit 7"],
                env=[EnvVariable(name="PROBE", value="from-env")], output_byte_limit=1000)
            done = await c.wait_for_terminal_exit(session_id=session_id,
                                                  terminal_id=term.terminal_id)
            report["exit"] = [done.exit_code, done.signal]
            out = await c.terminal_output(session_id=session_id, terminal_id=term.terminal_id)
            report["output"] = [out.output, out.truncated, out.exit_status.exit_code]
            await c.kill_terminal(session_id=session_id, terminal_id=term.terminal_id)
            await c.release_terminal(session_id=session_id, terminal_id=term.terminal_id)
            try:
                await c.read_text_file(session_id=session_id, path="/etc/passwd")
            except acp.RequestError as exc:
                report["outside"] = exc.code
            text = TextContentBlock(type="text", text=json.dumps(report))
            await c.session_update(session_id=session_id, update=AgentMessageChunk(
                session_update="agent_message_chunk", content=text))
            return PromptResponse(stop_reason="end_turn")

    asyncio.run(acp.run_agent(Probe()))
    """
)


async def test_official_sdk_agent_decodes_every_result(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    workspace = Workspace([ws])
    services = ClientServices(FileSystemService(workspace), TerminalService(workspace))
    client = ServicesClient(services, PermissionPolicy("reject", path=tmp_path / "p.toml"), ws)
    argv = [sys.executable, "-c", SDK_AGENT]
    async with session(argv, client, tmp_path / "sdk.log") as (connection, session_id):
        answer = await prompt(connection, session_id, "go")
    assert answer["stopReason"] == "end_turn", (tmp_path / "sdk.log").read_text()
    assert json.loads(client.said()) == {
        "write": "WriteTextFileResponse",
        "read": "two\n",
        "exit": [7, None],
        "output": ["out\nerr\nfrom-env\n", False, 7],
        "outside": INVALID_PARAMS,
    }
    assert (ws / "sdk" / "notes.txt").read_text() == "one\ntwo\nthree\n"
