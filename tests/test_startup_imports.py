"""The first frame imports only what the first screen needs (issue 14: first frame <= 400 ms).

The real app runs in a fresh process (a module imported by an earlier test would hide a
regression) up to its first frame, then lists what it has imported: what only later steps
need (the live protocol check's JSON Schema validator, the ACP Registry's downloader) must not
be there yet (nor what talks to the agent, started after it: `acp-tui` spawns the agent
process before the app, through the launcher, and the app only takes it over after its first
frame). `bench/bench_startup.py` measures the time itself.

Headless mode likewise (`acp-tui -p`): a turn imports neither the TUI nor what only some runs
need (a config file, a remote agent, a rewind, an export, a file's diff).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import TEST_AGENTS

FIRST_FRAME = """
import sys
from pathlib import Path

from acp_tui.ui.app import AcpApp
from acp_tui.session.options import ClientOptions

app = AcpApp([sys.executable, "-c", "pass"], ClientOptions(cwd=Path(sys.argv[1])))


def first_frame() -> None:
    print("\\n".join(sorted(sys.modules)))
    app.exit()


app._after_first_frame = first_frame
app.run(headless=True, size=(120, 40))
"""

LOADED_AFTER_THE_FIRST_FRAME = (
    "jsonschema",  # the live protocol check's validator, started with the agent
    "acp_tui.check.validator",
    "acp_tui.registry",  # the agent picker (Ctrl+N)
    "acp_tui.ui.screens.agent_picker",
    "urllib.request",
    "acp_tui.session.client",  # what talks to the agent, started after the first frame
    "acp_tui.transport.connection",  # (not the launcher: `acp-tui` spawns the agent before the app)
    "acp_tui.services.fs",
    "acp_tui.services.terminals",
    "acp_tui.records",
    "acp_tui.checkpoints",
    "acp_tui.conversation.sign_in",
    "markdown_it",  # Markdown, parsed and rendered from the first message on
    "rich.markdown",
    "pygments",  # code highlighting, warmed up in a thread after the first frame
    "acp_tui.ui.widgets.permission_panel",  # the dialogs, mounted when the agent first asks
    "acp_tui.ui.widgets.elicitation_panel",
    "acp_tui.session.elicitation",
    "acp_tui.conversation.conversation",  # what runs an agent: the conversation and below
    "acp_tui.conversation.agent_link",
    "tomllib",  # reads the config file (when there is one) and the permission rules
)


def test_the_first_frame_loads_nothing_that_only_the_agent_or_a_dialog_needs(
    tmp_path: Path,
) -> None:
    env = dict(os.environ, HOME=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).parent.parent), env.get("PYTHONPATH", "")]
    )
    done = subprocess.run(
        [sys.executable, "-c", FIRST_FRAME, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )
    loaded = set(done.stdout.split())
    assert "acp_tui.ui.chat_screen" in loaded  # the first frame was drawn
    assert loaded.isdisjoint(LOADED_AFTER_THE_FIRST_FRAME), sorted(
        loaded.intersection(LOADED_AFTER_THE_FIRST_FRAME)
    )


def test_starting_the_agent_leaves_the_schema_machinery_to_the_validator() -> None:
    """The TUI imports the live check and the controller as the agent starts; JSON Schema
    (a tenth of acp-tui's imports) is for the live check's validator process only."""
    script = "import sys, acp_tui.check.live, acp_tui.session.client; print(sorted(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert "jsonschema" not in done.stdout and "acp_tui.check.cases" not in done.stdout


AT_THE_HEAD_START = """
import sys
import acp_tui.transport.head_start

def spawned(self, argv, cwd, env):
    print(" ".join(sorted(sys.modules)))
    raise SystemExit(0)

acp_tui.transport.head_start.HeadStart.__init__ = spawned
from acp_tui.cli import main
main(["-p", "hi", "--", sys.executable, "-c", "pass"])
"""


def test_the_agent_is_spawned_before_asyncio_and_the_protocol_are_imported(
    tmp_path: Path,
) -> None:
    """`acp-tui` spawns the agent as soon as it has read its config (`HeadStart`): the agent's
    own start-up then overlaps the rest of acp-tui's, of which asyncio and the protocol's
    types are a fifth."""
    env = dict(os.environ, HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", AT_THE_HEAD_START],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    loaded = set(done.stdout.split())
    assert "acp_tui.config" in loaded  # the agent's command and environment were read
    later = {
        "asyncio",
        "acp_tui.protocol.methods",
        "acp_tui.transport.launcher",
        "ssl",  # a remote agent's TLS (the config names one): asyncio imports it after
        "difflib",  # a file's diff, as the agent writes it
    }
    assert loaded.isdisjoint(later), sorted(loaded & later)


AFTER_A_HEADLESS_TURN = """
import sys
from acp_tui.cli import main

status = main(["-p", "hi", "--output-format", "jsonl", "--", sys.executable, *sys.argv[1:]])
print(status, " ".join(sorted(sys.modules)), file=sys.stderr)
"""

NOT_IN_A_HEADLESS_TURN = (
    "textual",  # the TUI
    "acp_tui.ui",
    "acp_tui.registry",  # `--agent ID` of the ACP Registry
    "urllib.request",
    "acp_tui.remote.client",  # a remote agent
    "acp_tui.check.live",  # `--live-check`
    "jsonschema",
    "tomllib",  # a config file, saved permission rules
    "acp_tui.checkpoints.rewind",  # rewinding a turn
    "acp_tui.records.export",  # exporting the session
    "difflib",  # a file the agent writes, shown as a diff
    "mimetypes",  # a prompt that mentions a file
)


def test_a_headless_turn_loads_only_what_it_uses(tmp_path: Path) -> None:
    """`acp-tui -p` against an agent that answers at once, recorded and checkpointed (the
    defaults): what only some runs need is not imported, at start or during the turn."""
    flood = tmp_path / "empty.jsonl"
    flood.write_bytes(b"")
    agent = [str(TEST_AGENTS / "flood_agent.py"), str(flood)]
    done = subprocess.run(
        [sys.executable, "-c", AFTER_A_HEADLESS_TURN, *agent],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, HOME=str(tmp_path)),
        cwd=tmp_path,
        check=True,
    )
    status, modules = done.stderr.splitlines()[-1].split(" ", 1)
    assert status == "0", done.stderr
    loaded = set(modules.split())
    unwanted = {
        name
        for name in loaded
        if any(name == top or name.startswith(top + ".") for top in NOT_IN_A_HEADLESS_TURN)
    }
    assert "acp_tui.headless.run" in loaded and not unwanted, sorted(unwanted)
