"""A registry on 127.0.0.1: an index and archives served by a threading `http.server`, with
ETag and Last-Modified so conditional requests can be seen, and archives built here: a tiny
real ACP agent (a launcher that runs `python -m acp_tui.demo`) and hostile ones."""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from acp_tui.registry.install import platform_key

LAST_MODIFIED = "Sat, 07 Feb 2026 12:00:00 GMT"


@dataclass
class Served:
    """What the server serves (path -> bytes, changeable while it runs) and what it saw."""

    files: dict[str, bytes] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    base: str = ""
    pace: float = 0.0
    """Seconds between chunks of 16 kB: a download slow enough to watch its progress."""
    declared: dict[str, int | None] = field(default_factory=dict)
    """A Content-Length to send instead of the body's own, by path; None: none at all (the
    body ends when the connection closes)."""
    stall_after: int | None = None
    """Bytes of a body sent before the server goes silent, until the test ends."""
    released: threading.Event = field(default_factory=threading.Event)
    """Set as the server stops: a stalled answer ends then."""

    def url(self, path: str) -> str:
        return f"{self.base}{path}"


@contextmanager
def serve(files: dict[str, bytes] | None = None) -> Iterator[Served]:
    served = Served(dict(files or {}))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.requests.append((self.path, dict(self.headers.items())))
            body = served.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", LAST_MODIFIED)
            length = served.declared.get(self.path, len(body))
            if length is not None:
                self.send_header("Content-Length", str(length))
            self.end_headers()
            if served.stall_after is not None:
                self.wfile.write(body[: served.stall_after])
                self.wfile.flush()
                served.released.wait()
            elif not served.pace:
                self.wfile.write(body)
            else:
                for start in range(0, len(body), 16_384):
                    self.wfile.write(body[start : start + 16_384])
                    self.wfile.flush()
                    time.sleep(served.pace)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.base = f"http://127.0.0.1:{server.server_address[1]}"
    # A short poll interval: shutdown() waits for it, and every test shuts a server down.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.released.set()
        server.shutdown()
        server.server_close()


def tar_gz(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def file_member(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.mode = mode
    return info, data


def link_member(name: str, target: str, hard: bool = False) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE if hard else tarfile.SYMTYPE
    info.linkname = target
    return info, None


def demo_agent_archive(padding: int = 0) -> bytes:
    """A release as an agent ships it: `bin/tiny-agent`, a launcher for the demo agent (mode
    0644 on purpose: the installer makes the command executable); `padding` bytes of noise
    make the download as big as a real one."""
    launcher = f'#!/bin/sh\nexec {sys.executable} -m acp_tui.demo "$@"\n'.encode()
    members = [file_member("bin/tiny-agent", launcher), file_member("README", b"tiny\n")]
    if padding:
        members.append(file_member("share/noise", os.urandom(padding)))
    return tar_gz(members)


def auth_agent_archive() -> bytes:
    """An agent that requires sign-in (`tests/agents/auth_agent.py`, in the archive) with its
    launcher `bin/auth-agent`: its terminal sign-in runs `bin/auth-agent --login`."""
    source = (Path(__file__).parent.parent / "agents" / "auth_agent.py").read_bytes()
    launcher = f'#!/bin/sh\nexec {sys.executable} "${{0%/*}}/auth_agent.py" "$@"\n'
    return tar_gz(
        [file_member("bin/auth-agent", launcher.encode()), file_member("bin/auth_agent.py", source)]
    )


def entry(agent_id: str, distribution: dict, version: str = "1.0.0", **extra: object) -> dict:
    return {
        "id": agent_id,
        "name": agent_id.replace("-", " ").title(),
        "version": version,
        "description": f"the {agent_id} agent",
        "distribution": distribution,
        **extra,
    }


def binary(
    served: Served, path: str, cmd: str, sha256: str | None = None, **target: object
) -> dict:
    """A binary distribution with this platform's archive at `path` (and one for another
    platform that must never be fetched)."""
    here = {"archive": served.url(path), "cmd": cmd, **target}
    if sha256:
        here["sha256"] = sha256
    other = "windows-x86_64" if platform_key() != "windows-x86_64" else "linux-x86_64"
    return {"binary": {platform_key(): here, other: {"archive": served.url("/nope"), "cmd": "x"}}}


def index(*entries: dict) -> bytes:
    return json.dumps({"version": "1.0.0", "agents": list(entries), "extensions": []}).encode()
