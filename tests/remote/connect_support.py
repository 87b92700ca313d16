"""Remote agents for the client's tests (`acp-tui --connect`): acpremote's `expose` (an
implementation of remote ACP no one here wrote) in front of the demo agent, started as its
users start it, on 127.0.0.1 and a port chosen here, so that a new one can take the place of
one that was killed; and `acp-tui --connect` itself, run as a user runs it."""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from acp_tui.config import AgentConfig, Config, Startup
from acp_tui.remote.target import RemoteTarget
from acp_tui.session.options import ClientOptions
from acp_tui.ui.app import AcpApp
from tests.support.cli import ACP_TUI

DEMO = [sys.executable, "-m", "acp_tui.demo"]
"""The demo agent as a server runs it: its sessions kept (in the home's data directory), so
that one reopens on the agent a reconnection starts."""


def user_env(home: Path, **more: str) -> dict[str, str]:
    """A user's environment under `home` (config, data), the demo agent without delays."""
    inherited = {name: value for name, value in os.environ.items() if name != "ACP_TUI_TOKEN"}
    return {
        **inherited,
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "ACP_TUI_DEMO_SPEED": "0",
        **more,
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def remote_app(workspace: Path, state: Path, url: str) -> AcpApp:
    """The app on the remote agent at `url` (`acp-tui --connect URL`), its conversations
    recorded, history and rules kept under `state`."""
    target = RemoteTarget(url)
    startup = Startup(Config(state / "config.toml"), AgentConfig.for_url(target), "ask")
    options = ClientOptions(cwd=workspace, remote=target)
    return AcpApp(
        [], options, history_dir=state / "history", config_dir=state / "config", startup=startup
    )


class Exposed:
    """`acpremote expose --port PORT -- DEMO`, in a process of its own."""

    def __init__(self, home: Path, port: int, *args: str) -> None:
        self.home, self.port = home, port
        self.process = subprocess.Popen(
            [sys.executable, "-m", "acpremote", "expose", "--port", str(port), *args, "--", *DEMO],
            cwd=home,
            env=user_env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_lines, args=(self.process.stderr, lines), daemon=True).start()
        deadline = time.monotonic() + 30
        while (line := lines.get(timeout=max(0.0, deadline - time.monotonic()))) is not None:
            if "Serving ACP WebSocket" in line:
                return
        raise AssertionError(f"acpremote expose ended before it served (port {port})")

    @property
    def url(self) -> str:
        """The RFD's endpoint: acpremote serves at `/acp/ws`, and says so at `/acp`."""
        return f"ws://127.0.0.1:{self.port}/acp"

    def kill(self) -> None:
        """Gone at once, as a crashed server or a dropped network is: no close frame."""
        self.process.kill()
        self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()


@contextlib.contextmanager
def exposed(home: Path, *args: str) -> Iterator[Exposed]:
    server = Exposed(home, free_port(), *args)
    try:
        yield server
    finally:
        server.kill()


class Client:
    """`acp-tui ARGS` in the background, its stdout read line by line as it comes."""

    def __init__(self, home: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [*ACP_TUI, *args],
            cwd=home,
            env=user_env(home, **(env or {})),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=_lines, args=(self.process.stdout, self._lines))
        reader.daemon = True
        reader.start()

    def wait_for(self, text: str, timeout: float = 30) -> None:
        """Until a line of stdout holds `text`."""
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.out):
            line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"acp-tui ended without {text!r}: {self.out}")
            self.out.append(line)

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        """Its exit status, all of stdout and stderr."""
        status = self.process.wait(timeout=timeout)
        while (line := self._lines.get(timeout=5)) is not None:
            self.out.append(line)
        assert self.process.stderr is not None
        return status, "".join(self.out), self.process.stderr.read()


def _lines(stream: object, lines: queue.Queue[str | None]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        lines.put(line)
    lines.put(None)


class Cable:
    """A TCP relay on 127.0.0.1 in front of a server, whose connections can be cut at once:
    a network that drops, with the server still up."""

    def __init__(self, port: int) -> None:
        self.upstream = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:
                return
            far = socket.create_connection(("127.0.0.1", self.upstream))
            with self._lock:
                self._open += [near, far]
            for source, sink in ((near, far), (far, near)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()

    def cut(self) -> None:
        """Every connection through it ends now, mid-stream (new ones still get through)."""
        with self._lock:
            cut, self._open = self._open, []
        for end in cut:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        self.listener.close()
        self.cut()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
