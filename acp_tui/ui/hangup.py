"""Ending acp-tui when its terminal goes away (SIGHUP: the pane or the window was closed) or it
is told to (SIGTERM): always, within seconds, with every process it started.

Why Textual could not be left to it (Textual 8.2): closing the pane hangs the terminal up, and
from then on every write to it fails (EIO). Textual writes the screen from a thread that dies
at its first failed write, and its queue (30 writes) is then never emptied: the next frames,
and the driver's `close` at the end of the shutdown, wait forever for room in it, on the event
loop's thread. The loop never turns again, so a SIGTERM it would handle waits forever too:
acp-tui stayed for good, at times with its agent (7 of 20 runs that were streaming when the
pane closed: `tests/cli/test_tui_signals.py`).
The kernel also sends SIGCONT with the SIGHUP, on which Textual starts application mode again
(another writer thread, another input thread) though it never left it.

So:
- `HangupSafeDriver` is Textual's Linux driver whose output drops what it cannot write (and
  everything, once the terminal is gone), and which restarts nothing on a hung-up terminal's
  SIGCONT;
- `SignalWatch` learns of SIGTERM and SIGHUP on a thread of its own, through the signal wakeup
  fd (whichever thread the signal interrupted, whatever the loop is doing), asks the app to
  quit as Ctrl+Q does, and, if acp-tui is still there `GRACE` seconds later, ends every process
  group it started and itself, once the record's writer has written what it was given (each
  save is committed as it is written: what the loop never handed over is lost, and only that).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from textual.drivers.linux_driver import LinuxDriver

TERMINATING = (signal.SIGTERM, signal.SIGHUP)

GRACE = 5.0
"""Seconds the orderly shutdown gets after the signal: stopping an agent that ignores its
closed stdin takes 2 (then SIGTERM), and up to 4 if it ignores SIGTERM too (then SIGKILL)."""

KILL_GRACE = 1.0
"""Seconds the processes get between SIGTERM and SIGKILL once the grace is over."""

RECORD_PATIENCE = 2.0
"""Seconds the record's writer gets to write what it was given before acp-tui ends anyway."""


class _TerminalOutput:
    """The terminal's output for Textual's writer thread: a write that fails (the terminal is
    gone) is dropped instead of ending the thread, and so is everything after it."""

    def __init__(self, file: TextIO) -> None:
        self._file = file
        self.gone = False

    def write(self, text: str) -> None:
        if not self.gone:
            try:
                self._file.write(text)
            except OSError:
                self.gone = True

    def flush(self) -> None:
        if not self.gone:
            try:
                self._file.flush()
            except OSError:
                self.gone = True

    def fileno(self) -> int:
        return self._file.fileno()


class HangupSafeDriver(LinuxDriver):
    """Textual's Linux driver, safe to keep using after the terminal hung up."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        assert self._file is not None  # sys.__stderr__: acp-tui runs in a terminal
        self._output = _TerminalOutput(self._file)
        # What Textual's writer thread is given: it only writes, flushes and asks the fileno.
        self._file = self._output  # type: ignore[assignment]

    def hang_up(self) -> None:
        """The terminal is gone: draw nothing more (nothing could be seen)."""
        self._output.gone = True

    def _sigcont_application(self, *args: Any) -> None:
        if not self._output.gone:
            super()._sigcont_application(*args)


class SignalWatch:
    """SIGTERM and SIGHUP, watched on a thread: `quit(status)` is called (from that thread) on
    the first, with status 128 + the signal; `GRACE` seconds on, the process groups of
    acp-tui's children are ended, and acp-tui with that status."""

    def __init__(
        self,
        quit: Callable[[int], None],
        *,
        hang_up: Callable[[], None],
        record_busy: Callable[[], bool],
        grace: float = GRACE,
    ) -> None:
        self._quit = quit
        self._hang_up = hang_up
        self._record_busy = record_busy
        self._grace = grace
        self.status: int | None = None
        """128 + the signal that ends acp-tui, once one came."""
        self._read, self._write = os.pipe()

    def start(self) -> None:
        """Catch the signals (from the main thread), except one ignored (`nohup`)."""
        os.set_blocking(self._write, False)  # written from a C signal handler: never wait
        for sig in TERMINATING:
            if signal.getsignal(sig) is not signal.SIG_IGN:
                signal.signal(sig, self._on_signal)
        # Every signal with a handler writes its number there, from its C handler, whatever
        # the main thread is doing.
        signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        threading.Thread(target=self._watch, name="signal watch", daemon=True).start()

    def _on_signal(self, signum: int, _frame: object) -> None:
        # On the main thread, before any SIGCONT sent with the SIGHUP is handled.
        if signum == signal.SIGHUP:
            self._hang_up()
        # The watch is told again (it acts once), in case something took the wakeup fd over.
        with contextlib.suppress(BlockingIOError):
            os.write(self._write, bytes([signum]))

    def _watch(self) -> None:
        sig = self._next_terminating()
        self.status = 128 + sig
        if sig == signal.SIGHUP:
            self._hang_up()
        self._quit(self.status)
        time.sleep(self._grace)
        # Still here: the shutdown is stuck.
        end_children(os.getpid())
        deadline = time.monotonic() + RECORD_PATIENCE
        while self._record_busy() and time.monotonic() < deadline:
            time.sleep(0.05)
        os._exit(self.status)

    def _next_terminating(self) -> int:
        while True:
            for number in os.read(self._read, 256):
                if number in TERMINATING:
                    return number


def end_children(pid: int) -> None:
    """End the process group of every child of `pid` (each agent and each terminal command
    leads its own): SIGTERM, then SIGKILL after `KILL_GRACE` seconds."""
    groups = children(pid)
    for group in groups:
        _signal_group(group, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE
    while set(children(pid, zombies=False)) & set(groups) and time.monotonic() < deadline:
        time.sleep(0.05)
    for group in groups:
        _signal_group(group, signal.SIGKILL)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:  # a child that leads no group of its own
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    except PermissionError:
        pass


def children(pid: int, *, zombies: bool = True) -> list[int]:
    """The processes whose parent is `pid` (with those that exited, not yet waited for, unless
    `zombies` is False)."""
    proc = Path("/proc")
    if not proc.is_dir():  # macOS
        ps = subprocess.run(
            ["ps", "-A", "-o", "pid=,ppid=,stat="], capture_output=True, text=True, check=False
        )
        rows = [line.split() for line in ps.stdout.splitlines()]
        return [
            int(row[0])
            for row in rows
            if len(row) == 3 and int(row[1]) == pid and (zombies or not row[2].startswith("Z"))
        ]
    found = []
    for entry in os.listdir(proc):
        if entry.isdigit():
            try:
                stat = (proc / entry / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            state, parent = stat.rsplit(")", 1)[1].split()[:2]
            if int(parent) == pid and (zombies or state != "Z"):
                found.append(int(entry))
    return found
