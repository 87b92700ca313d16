"""`acp-tui --connect URL` against `acp-tui serve` fronting the demo agent, over both of the
RFD's profiles (WebSocket, and Streamable HTTP: POSTs and SSE streams): a permission that
lets the agent write the client's own file, a token the server asks for, a cancel, and the
server killed mid-turn and started again, the session going on."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.remote.connect_support import Cable, Client, free_port
from tests.remote.serve_support import Served
from tests.remote.test_serve_tls import _certificate

DEMO = [sys.executable, "-m", "acp_tui.demo", "--speed", "0"]
"""Its sessions kept on disk: an agent the restarted server starts reopens them."""

PROFILES = ["ws", "http"]


def _serve(home: Path, port: int = 0, *args: str) -> Served:
    return Served(home, "--listen", f"127.0.0.1:{port}", *args, agent=DEMO).start()


def _url(server: Served, profile: str) -> str:
    return server.url.replace("http://", f"{profile}://")


def _workspace(home: Path) -> Path:
    workspace = home / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    return workspace


@pytest.mark.parametrize("profile", PROFILES)
def test_a_permission_lets_the_agent_write_the_clients_file_with_the_token(
    tmp_path: Path, profile: str
) -> None:
    workspace = _workspace(tmp_path)
    token = tmp_path / "token"
    token.write_text("s3cret\n", encoding="utf-8")
    server = _serve(tmp_path, 0, "--token-file", str(token))
    try:
        url = _url(server, profile)
        refused = Client(tmp_path, "--connect", url, "--cwd", str(workspace), "-p", "hi")
        status, _out, err = refused.finish()
        assert status == 1 and "401" in err and "ACP_TUI_TOKEN" in err, err
        run = Client(
            tmp_path, "--connect", url, "--token-file", str(token), "--cwd", str(workspace),
            "--permission", "allow", "-p", "/edit notes.txt",
        )  # fmt: skip
        status, out, err = run.finish()
    finally:
        server.stop()
    assert status == 0, err
    assert "`notes.txt` updated" in out
    assert "permission for Edit notes.txt: allow_once" in err
    assert "Edited by the ACP demo agent" in (workspace / "notes.txt").read_text()


@pytest.mark.parametrize("profile", PROFILES)
def test_ctrl_c_cancels_the_remote_turn(tmp_path: Path, profile: str) -> None:
    workspace = _workspace(tmp_path)
    server = _serve(tmp_path)
    try:
        run = Client(
            tmp_path, "--connect", _url(server, profile), "--cwd", str(workspace),
            "-p", "/slow 30",
        )  # fmt: skip
        run.wait_for("⏳ 1/30")
        run.process.send_signal(signal.SIGINT)
        status, out, err = run.finish()
    finally:
        server.stop()
    assert status == 130, err
    assert "nobody cancelled me" not in out


@pytest.mark.parametrize("profile", PROFILES)
def test_a_server_killed_mid_turn_and_started_again_takes_the_session_back(
    tmp_path: Path, profile: str
) -> None:
    workspace = _workspace(tmp_path)
    port = free_port()
    first = _serve(tmp_path, port)
    url = _url(first, profile)
    run = Client(
        tmp_path, "--connect", url, "--cwd", str(workspace), "-p", "/slow 30",
        "-p", "after the drop",
    )  # fmt: skip
    try:
        run.wait_for("⏳ 2/30")
        first.process.kill()
        first.process.wait()
        second = _serve(tmp_path, port)
        try:
            status, out, err = run.finish()
        finally:
            second.stop()
    finally:
        if run.process.poll() is None:
            run.process.kill()
    assert f"the connection to {url} was lost" in err
    assert f"acp-tui: Reconnected to {url}: the session goes on" in err.splitlines()
    assert status == 1, err
    assert "> after the drop" in out


@pytest.mark.parametrize("profile", PROFILES)
def test_a_network_drop_is_taken_up_again_and_the_turn_goes_on(
    tmp_path: Path, profile: str
) -> None:
    """`acp-tui serve` keeps a connection whose client dropped (its grace period): the client
    takes it up again at once (a new WebSocket naming it; the SSE streams opened again), and
    the turn under way ends as if nothing happened."""
    workspace = _workspace(tmp_path)
    server = _serve(tmp_path)
    cable = Cable(server.port)
    try:
        url = f"{profile}://127.0.0.1:{cable.port}/acp"
        run = Client(tmp_path, "--connect", url, "--cwd", str(workspace), "-p", "/slow 4")
        run.wait_for("⏳ 1/4")
        cable.cut()
        status, out, err = run.finish()
    finally:
        cable.close()
        server.stop()
    assert status == 0, err
    assert "was lost" not in err
    assert "⏳ 4/4" in out and "nobody cancelled me" in out


def test_check_runs_its_cases_over_streamable_http(tmp_path: Path) -> None:
    """`acp-tui check --connect URL`: each of its fresh processes a fresh connection."""
    server = Served(tmp_path, "--listen", "127.0.0.1:0", agent=[*DEMO[:3], "--speed", "1"])
    server.start()
    try:
        run = Client(tmp_path, "check", "--connect", server.url)
        status, out, err = run.finish(timeout=300)
    finally:
        server.stop()
    assert status == 0, out + err
    assert f"command: {server.url}" in out
    assert "exits when stdin closes" in out and "a remote agent: its server owns" in out
    assert " 0 failed (every MUST holds)" in out


@pytest.mark.parametrize("profile", ["wss", "https"])
def test_tls_is_verified_and_a_certificate_trusted_gets_through(
    tmp_path: Path, profile: str
) -> None:
    cert, key = _certificate(tmp_path)
    workspace = _workspace(tmp_path)
    server = _serve(tmp_path, 0, "--certfile", str(cert), "--keyfile", str(key))
    try:
        url = f"{profile}://127.0.0.1:{server.port}/acp"
        refused = Client(tmp_path, "--connect", url, "--cwd", str(workspace), "-p", "hi")
        status, _out, err = refused.finish()
        assert status == 1 and "CERTIFICATE_VERIFY_FAILED" in err, err
        trusted = Client(
            tmp_path, "--connect", url, "--cwd", str(workspace), "-p", "hi",
            env={"SSL_CERT_FILE": str(cert)},
        )  # fmt: skip
        status, out, err = trusted.finish()
    finally:
        server.stop()
    assert status == 0, err
    assert "> hi" in out


def test_a_server_without_cleartext_http2_is_asked_again_over_http_1_1(tmp_path: Path) -> None:
    """Over plain http:// HTTP/2 goes first (prior knowledge, as the RFD wants HTTP/2); the
    standard library's HTTP/1.1 server cannot speak it, and answers the second attempt."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None and "Serving HTTP" in server.stdout.readline()
        run = Client(tmp_path, "--connect", f"http://127.0.0.1:{port}/acp", "-p", "hi")
        status, _out, err = run.finish()
    finally:
        server.kill()
        server.wait()
    assert status == 1
    assert "the server refused initialize: HTTP 501" in err, err
