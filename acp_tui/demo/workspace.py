"""The demo agent's own workspace: a folder in acp-tui's data directory.

`acp-tui` runs the demo there unless `--cwd` says otherwise, so that trying the tour in a
checkout (as the README's first command does) never writes into it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from acp_tui.paths import data_dir

README = """\
# The demo agent's workspace

acp-tui runs its built-in demo agent in this folder of its own, so that the tour's edits
and commands stay out of your projects. Allowed to, the demo writes `ACP_DEMO.md` here;
F3 in acp-tui shows what each turn changed, and undoes it.

`acp-tui --cwd DIR` runs the demo in DIR instead; `acp-tui -- AGENT ...` runs a real agent
in the directory you are in.
"""


def demo_workspace() -> Path:
    """The folder (made if missing, with a README for the tour to read)."""
    path = data_dir() / "demo-workspace"
    path.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError), open(path / "README.md", "x") as readme:
        readme.write(README)
    return path
