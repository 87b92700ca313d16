"""`acp-tui serve` with clients no one here wrote: acpremote's `mirror` (PyPI), which turns a
WebSocket endpoint back into a stdio agent, run by acp-tui itself as its agent (at `/acp`, and
at `/acp/ws` where acpremote serves); and acp-http-client (npm), a Streamable HTTP client that
names its connection by its path (`/acp/NAME`) and reads one SSE stream."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.remote.serve_support import DEMO, served
from tests.support.cli import run_cli
from tests.support.external_agents import acp_http_client

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
