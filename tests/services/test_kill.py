"""acp-tui killed at the worst moment: mid-write, and with terminals running.

Each test runs the service in a child Python process (as acp-tui would), SIGKILLs that process
at a chosen moment, and checks what is left: the written file holds the old or the new content,
never a part of either; no process a terminal started survives.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SIZE = 256 * 1024
"""Bytes written: 64 slow chunks, so a kill after the first lands mid-content."""

WRITER = textwrap.dedent(
    """
    import asyncio, json, os, sys, time
    from pathlib import Path
    import msgspec
    from acp_tui.services import fs
    from acp_tui.workspace import Workspace

    workspace, target, size, use_tmpfile = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    fs._USE_TMPFILE = use_tmpfile == "tmpfile"
    real_write = os.write

    def slow_write(fd, data):
        # Small slow chunks, so that the kill lands in the middle of the content.
        written = real_write(fd, bytes(data[:4096]))
        print("writing", flush=True)
        time.sleep(0.002)
        return written

    os.write = slow_write
    service = fs.FileSystemService(Workspace([Path(workspace)]))
    params = {"sessionId": "s", "path": target, "content": "N" * size}
    asyncio.run(service.write_text_file(msgspec.Raw(json.dumps(params).encode())))
    print("done", flush=True)
    """
)


def run_writer(ws: Path, target: Path, *, use_tmpfile: str, kill_after: str) -> None:
    """Run WRITER on `target` and SIGKILL it once it printed `kill_after`, or let it finish."""
    argv = [sys.executable, "-c", WRITER, str(ws), str(target), str(SIZE), use_tmpfile]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if line.strip() == kill_after:
                process.send_signal(signal.SIGKILL)
                break
        process.wait(timeout=10)


@pytest.mark.parametrize("use_tmpfile", ["tmpfile", "named temp"])
@pytest.mark.parametrize("kill_after", ["writing", "done"])
@pytest.mark.parametrize("existed", [True, False], ids=["overwrite", "new file"])
def test_killed_mid_write_leaves_old_or_new_content_never_a_part(
    tmp_path: Path, use_tmpfile: str, kill_after: str, existed: bool
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = ws / "notes.txt"
    old = "old content\n" * 1000
    if existed:
        target.write_text(old)
        target.chmod(0o640)
    run_writer(ws, target, use_tmpfile=use_tmpfile, kill_after=kill_after)
    others = sorted(p.name for p in ws.iterdir() if p != target)
    if kill_after == "done":
        assert target.read_text() == "N" * SIZE
        assert others == []
        if existed:
            assert target.stat().st_mode & 0o777 == 0o640
        return
    # Killed while the content was being written: the target is untouched.
    if existed:
        assert target.read_text() == old
    else:
        assert not target.exists()
    if use_tmpfile == "tmpfile":
        assert others == []  # the unnamed temporary file vanished with the process
    else:
        # A named temporary file may remain: hidden, and never mistaken for the target.
        assert all(n.startswith(".notes.txt.acp-tui-") and n.endswith(".tmp") for n in others)


TERMINALS = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    import msgspec
    from acp_tui.services.terminals import TerminalService
    from acp_tui.workspace import Workspace

    COMMANDS = [
        # a plain command
        ["sh", "-c", "echo leader=$$; exec sleep 60"],
        # a command with a child in its process group
        ["sh", "-c", "echo leader=$$; sleep 60 & echo child=$!; wait"],
        # a command (and child) that ignore SIGTERM: only SIGKILL ends them
        ["sh", "-c", "trap '' TERM; echo leader=$$; sleep 60 & echo child=$!; "
         "while :; do sleep 1; done"],
    ]

    async def main():
        service = TerminalService(
            Workspace([Path(sys.argv[1])]),
            on_output=lambda terminal, data: print(data.decode(), end="", flush=True),
            kill_grace=0.3,
        )
        for argv in COMMANDS:
            params = {"sessionId": "s", "command": argv[0], "args": argv[1:]}
            await service.create(msgspec.Raw(json.dumps(params).encode()))
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


def gone(pid: int) -> bool:
    """Whether `pid` has exited (a zombie waiting for init to reap it counts as exited)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def test_killing_acp_tui_leaves_no_process_behind(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", TERMINALS, str(tmp_path)]
    pids: list[int] = []
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            pids.append(int(line.split("=")[1]))
            if len(pids) == 5:  # 3 leaders, 2 children
                break
        assert all(not gone(pid) for pid in pids)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    deadline = time.monotonic() + 5
    while not all(gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if not gone(pid)] == []
