"""Telling the terminal that something needs the user: the escape sequence of a desktop
notification that this terminal shows, or the bell; and `notify-send`, when asked for.

Terminals agree on no one sequence, and none can be asked which it shows, so it is picked
from what the terminal puts in the environment:

- kitty (`KITTY_WINDOW_ID`, `TERM=xterm-kitty`): OSC 99, its own protocol, title and body;
- iTerm2 (`TERM_PROGRAM=iTerm.app`, `LC_TERMINAL=iTerm2`), Windows Terminal (`WT_SESSION`),
  ConEmu (`ConEmuPID`): OSC 9, one line of text;
- WezTerm, Ghostty, foot, rxvt-unicode (`TERM_PROGRAM`, `WEZTERM_PANE`,
  `GHOSTTY_RESOURCES_DIR`, `TERM=foot…|rxvt…|xterm-ghostty`): OSC 777, title and body;
- any other: the bell, which every terminal shows somehow (a sound, a flash, an urgent
  window), and which a sequence it did not know would not be.

Inside tmux (`TMUX`), `TERM` and `TERM_PROGRAM` are tmux's own; the variables the outer
terminal set are inherited, so the same table picks. The sequence goes through tmux wrapped
for passthrough (`ESC P tmux; … ESC \\`), which tmux forwards only with `allow-passthrough on`
(off by default), so the bell goes too: tmux marks the window with it in its status line and
passes it on to the terminal. And tmux tells a program it left for another window only with
`focus-events on` (off by default): so tmux is asked whether it shows the pane
(`tmux_pane_shown`) before a user who seems to look is taken to.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import shutil
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from acp_tui.config.model import Sequence

ESC = "\x1b"
BEL = "\x07"
ST = f"{ESC}\\"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

OSC_99 = ("KITTY_WINDOW_ID",)
OSC_9 = ("WT_SESSION", "ConEmuPID", "ITERM_SESSION_ID")
OSC_777 = ("WEZTERM_PANE", "GHOSTTY_RESOURCES_DIR")
"""Variables each terminal sets, by the sequence it shows (tmux keeps them: they are read
inside it too)."""
PROGRAMS = {"iTerm.app": "osc9", "WezTerm": "osc777", "ghostty": "osc777"}
"""`TERM_PROGRAM`, outside tmux."""
TERMS = (("xterm-kitty", "osc99"), ("xterm-ghostty", "osc777"), ("foot", "osc777"))
TERM_PREFIXES = (("rxvt", "osc777"),)
T = TypeVar("T")
_NUMBERS = itertools.count(1)
"""kitty's notifications are numbered: one of the same number replaces the one before."""


def terminal_sequence(environ: Mapping[str, str]) -> Sequence:
    """The sequence this terminal shows as a notification, from its environment (see the
    module docstring); `bell` when none is known."""
    if any(name in environ for name in OSC_99):
        return "osc99"
    if any(name in environ for name in OSC_9) or environ.get("LC_TERMINAL") == "iTerm2":
        return "osc9"
    if any(name in environ for name in OSC_777):
        return "osc777"
    program = PROGRAMS.get(environ.get("TERM_PROGRAM", ""))
    if program is not None:
        return program  # type: ignore[return-value]
    term = environ.get("TERM", "")
    for name, sequence in TERMS:
        if term == name or term.startswith(f"{name}-"):
            return sequence  # type: ignore[return-value]
    for prefix, sequence in TERM_PREFIXES:
        if term.startswith(prefix):
            return sequence  # type: ignore[return-value]
    return "bell"


def notification(
    title: str, body: str, environ: Mapping[str, str], sequence: Sequence = "auto"
) -> str:
    """What to write to the terminal to show `title` and `body`: `sequence` (picked for the
    terminal when `auto`), wrapped for tmux inside it, with the bell there too."""
    kind = terminal_sequence(environ) if sequence == "auto" else sequence
    title, body = _plain(title), _plain(body)
    if kind == "osc777":
        # `;` separates the title from the body: one in the title would cut it there.
        written = f"{ESC}]777;notify;{title.replace(';', ',')};{body}{BEL}"
    elif kind == "osc9":
        written = f"{ESC}]9;{title}: {body}{BEL}"
    elif kind == "osc99":
        # The title, then the body, of one notification (`i`), shown once done (`d=1`).
        key = f"acp-tui-{next(_NUMBERS)}"
        written = f"{ESC}]99;i={key}:d=0;{title}{ST}{ESC}]99;i={key}:d=1:p=body;{body}{ST}"
    else:
        return BEL
    if "TMUX" in environ:
        return tmux_passthrough(written) + BEL
    return written


def tmux_passthrough(sequence: str) -> str:
    """`sequence` wrapped for tmux to pass on to the outer terminal: each ESC doubled."""
    return f"{ESC}Ptmux;{sequence.replace(ESC, ESC + ESC)}{ST}"


def _plain(text: str) -> str:
    """`text` without control characters: one in a sequence would end it early, or start
    another."""
    return _CONTROL.sub(" ", text).strip()


async def tmux_pane_shown(environ: Mapping[str, str]) -> bool:
    """Whether tmux shows acp-tui's pane: its window is the current one of a session that a
    client has attached. True outside tmux, or when tmux cannot say."""
    pane, program = environ.get("TMUX_PANE"), shutil.which("tmux")
    if "TMUX" not in environ or not pane or program is None:
        return True
    try:
        process = await asyncio.create_subprocess_exec(
            program,
            "display-message",
            "-p",
            "-t",
            pane,
            "#{window_active} #{session_attached}",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        out, _ = await _within(process, process.communicate(), 5)
    except (OSError, TimeoutError):
        return True
    active, _, attached = out.decode(errors="replace").strip().partition(" ")
    if process.returncode != 0 or not attached.isdigit():
        return True
    return active == "1" and int(attached) > 0


async def desktop_notification(title: str, body: str) -> None:
    """`notify-send TITLE BODY`, where it is installed; a failure is no one's concern (the
    terminal was told anyway)."""
    program = shutil.which("notify-send")
    if program is None:
        return
    with contextlib.suppress(OSError, TimeoutError):
        process = await asyncio.create_subprocess_exec(
            program,
            "--app-name=acp-tui",
            "--",
            title,
            body,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        await _within(process, process.wait(), 10)


async def _within(
    process: asyncio.subprocess.Process, waiting: Coroutine[Any, Any, T], timeout: float
) -> T:
    """`waiting` (the process's end) within `timeout`: a process given up on, or left at the
    app's exit, is killed, not left behind (`notify-send` without a D-Bus session hangs)."""
    try:
        return await asyncio.wait_for(waiting, timeout)
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
