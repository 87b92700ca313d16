"""`acp-tui serve --certfile --keyfile`: TLS of its own, so that a token beyond loopback is not
sent in the clear: `wss://` and `https://` (HTTP/2 by ALPN), with a certificate the client
trusts; and a certificate that cannot be loaded is refused before the server starts."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.remote.serve_support import TOKEN, initialize, served, websocket


def _certificate(where: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("the test's certificate is made with the openssl command, not on PATH")
    cert, key = where / "cert.pem", where / "key.pem"
    request = ["openssl", "req", "-x509", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
    ec_key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    names = ["-addext", "subjectAltName=IP:127.0.0.1"]
    files = ["-keyout", str(key), "-out", str(cert)]
    subprocess.run([*request, *ec_key, *names, *files], check=True, capture_output=True)
    return cert, key


async def test_wss_and_https_over_http2_with_a_token(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    trust = ssl.create_default_context(cafile=str(cert))
    args = ("--listen", "0.0.0.0:0", "--certfile", str(cert), "--keyfile", str(key))
    with served(tmp_path, *args, env={TOKEN: "tls-token"}) as server:
        assert "at https://0.0.0.0:" in server.log[0] and "(wss://" in server.log[0]
        url = f"https://127.0.0.1:{server.port}/acp"
        auth = {"Authorization": "Bearer tls-token"}
        async with httpx.AsyncClient(http2=True, verify=trust, headers=auth) as http:
            answer = await http.post(url, json=initialize())
        assert (answer.status_code, answer.http_version) == (200, "HTTP/2")
        assert answer.json()["result"]["protocolVersion"] == 1
        # A context of its own: httpx set h2 on the other's ALPN, which a WebSocket cannot speak.
        trust = ssl.create_default_context(cafile=str(cert))
        async with websocket(url.replace("https", "wss"), ssl=trust, **auth) as socket:
            assert (await socket.call(initialize()))["result"]["protocolVersion"] == 1
        assert server.stop() == 0


def test_a_certificate_that_cannot_be_loaded_is_refused_at_once(tmp_path: Path) -> None:
    cert, _ = _certificate(tmp_path)
    command = [sys.executable, "-m", "acp_tui", "serve", "--certfile", str(cert)]
    done = subprocess.run(
        [*command, "--keyfile", str(cert), "--", "true"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "cannot serve TLS with" in done.stderr
    done = subprocess.run([*command, "--", "true"], capture_output=True, text=True)
    assert done.returncode == 2 and "TLS needs both --certfile and --keyfile" in done.stderr
