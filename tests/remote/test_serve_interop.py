"""`acp-tui serve` with clients no one here wrote: acpremote's `mirror` (PyPI), which turns a
WebSocket endpoint back into a stdio agent, run by acp-tui itself as its agent (at `/acp`, and
at `/acp/ws` where acpremote serves); and acp-http-client (npm), a Streamable HTTP client that
names its connection by its path (`/acp/NAME`) and reads one SSE stream; and in front of an
agent no one here wrote, the TypeScript SDK's example agent."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.remote.serve_support import DEMO, http_client, prompt, request, served, text_of
from tests.support.cli import run_cli
from tests.support.external_agents import acp_http_client, ts_sdk_example_agent

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("path", ["/acp", "/acp/ws"])
def test_acp_tui_runs_serve_through_an_acpremote_mirror(tmp_path: Path, path: str) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with served(tmp_path, "--cwd", str(workspace)) as server:
        mirror = [
            sys.executable,
            "-m",
            "acpremote",
            "mirror",
            f"ws://127.0.0.1:{server.port}{path}",
        ]
        args = ["--cwd", str(workspace), "--permission", "allow", "-p", "permission"]
        done = run_cli(tmp_path, *args, "--", *mirror)
        assert done.returncode == 0, done.stderr
        assert "You chose **allow once**" in done.stdout
        assert "permission for Install the `left-pad` package" in done.stderr
        assert server.stop() == 0
        line = server.wait_for(r"ended: the server shut down")
        assert " websocket " in line and "messages in" in line


def test_acp_http_client_drives_serve_at_a_named_path(tmp_path: Path) -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("acp-http-client is an npm package: node and npm are needed to run it")
    root = acp_http_client()
    with served(tmp_path, agent=DEMO) as server:
        base = f"http://127.0.0.1:{server.port}"
        drive = ["node", str(HERE / "acp_http_client_drive.mjs"), str(root), base, "/acp/drive-1"]
        done = subprocess.run(
            [*drive, str(tmp_path)], capture_output=True, text=True, timeout=90, check=False
        )
        assert done.returncode == 0, done.stderr
        steps = {step.pop("step"): step for step in map(json.loads, done.stdout.splitlines())}
        assert steps["initialize"] == {"agent": "acp-tui-demo"}
        assert steps["session/new"]["sessionId"].startswith("sess_")
        turn = steps["permission"]
        assert (turn["stopReason"], turn["asked"]) == ("end_turn", 1)
        assert "You chose **allow once**" in turn["text"]
        assert steps["cancel"] == {"stopReason": "cancelled"}
        line = server.wait_for(r"ended: ")
        assert " http drive-1 " in line and "ended by the client (DELETE)" in line
        assert server.stop() == 0


async def test_serve_fronts_the_typescript_sdks_agent_over_http(tmp_path: Path) -> None:
    """An agent no one here wrote: its permission request goes on the session's stream."""
    with served(tmp_path, agent=ts_sdk_example_agent()) as server:
        async with http_client(server.url) as client:
            await client.initialize()
            await client.open_stream()
            new = request(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
            await client.post(new)
            session = (await client.answer(2))["result"]["sessionId"]
            await client.open_stream(session)
            await client.post(prompt(3, session, "hello"), session)
            asked = await client.until(
                lambda m: m.get("method") == "session/request_permission", session
            )
            outcome = {"outcome": {"outcome": "selected", "optionId": "allow"}}
            await client.post({"jsonrpc": "2.0", "id": asked["id"], "result": outcome}, session)
            assert (await client.answer(3, session))["result"]["stopReason"] == "end_turn"
            assert "Perfect!" in text_of(client.streams[session])
        assert server.stop() == 0
