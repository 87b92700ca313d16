"""The TUI's rewind, on the real demo agent, with a path no checkpoint saved: the dialog and the
conversation say it is not put back, and why."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from acp_tui.session.state import Notice
from acp_tui.ui.app import AcpApp
from acp_tui.ui.screens.changes import ChangesScreen
from acp_tui.ui.screens.rewind import RewindScreen
from tests.support.pilot import send, wait_idle, wait_until
from tests.support.ui import started_app

REASON = "the checkpoint did not save how it was (a symbolic link to outside the workspace)"


def notices(app: AcpApp, severity: str) -> list[Notice]:
    assert app.session is not None
    timeline = app.session.state.timeline
    return [i for i in timeline if isinstance(i, Notice) and i.severity == severity]


async def test_a_rewind_in_the_tui_lists_what_it_did_not_put_back(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text("not the workspace's\n")
    async with started_app(tmp_path, permission="allow") as (app, pilot):
        workspace = app.options.cwd
        (workspace / "out").symlink_to(outside / "target.txt")
        await send(app, pilot, "/edit app.py")
        await wait_idle(app, pilot)
        (workspace / "out").unlink()  # the link, replaced by a file (by a command, say)
        (workspace / "out").write_text("a file now\n")

        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert isinstance(screen, ChangesScreen)
        await wait_until(pilot, lambda: screen.changes is not None)
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen))
        dialog = app.screen
        assert isinstance(dialog, RewindScreen)
        assert [f.path for f in dialog.plan.files] == ["app.py"]

        def shown() -> str:
            return "\n".join(str(part.render()) for part in dialog.query(Static))

        await wait_until(pilot, lambda: f"keep    out  not put back: {REASON}" in shown())

        await pilot.press("y")
        await wait_until(pilot, lambda: bool(notices(app, "rewind")))
        [notice] = notices(app, "rewind")
        assert notice.title == "Rewound turn 1: 1 file put back"
        assert f"not put back: out ({REASON})" in notice.detail
        assert (workspace / "out").read_text() == "a file now\n"
        assert [(p.name, p.read_text()) for p in outside.iterdir()] == [
            ("target.txt", "not the workspace's\n")
        ]
