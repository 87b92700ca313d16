"""Commands that work as typed: a relative agent command is the one beside where `acp-tui`
was started (not in the workspace, nor in `check`'s scratch one), one not found says where it
was looked for, `--help` names every subcommand, and the demo agent, without `--cwd`, works
in a folder of its own rather than in the checkout it was started in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from acp_tui.cli.parser import SUBCOMMANDS
from tests.support.cli import ACP_TUI, run_cli


def _agent_script(path: Path) -> Path:
    """A demo agent started by a script of its own (`./agents/mine.sh`), which notes the
    directory it runs in."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/bin/sh\n"
        f'pwd > "{path.parent}/ran-in"\n'
        f"exec {sys.executable} -m acp_tui.demo --speed 0 --no-persist\n"
    )
    path.chmod(0o755)
    return path


def test_a_relative_agent_command_is_found_where_acp_tui_was_started(tmp_path: Path) -> None:
    _agent_script(tmp_path / "agents" / "mine.sh")
    (tmp_path / "proj").mkdir()
    run = run_cli(tmp_path, "--cwd", "proj", "-p", "hello", "--", "./agents/mine.sh")
    assert run.returncode == 0, run.stderr
    assert "acp-tui demo agent" in run.stdout
    # Found from here, and run in the workspace.
    ran_in = (tmp_path / "agents" / "ran-in").read_text().strip()
    assert Path(ran_in).resolve() == (tmp_path / "proj").resolve()


def test_an_agent_command_not_found_says_where_it_was_looked_for(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    relative = run_cli(tmp_path, "--cwd", "proj", "-p", "hi", "--", "./agents/none.sh")
    assert relative.returncode == 1
    missing = tmp_path.resolve() / "agents" / "none.sh"
    assert relative.stderr.strip() == f"acp-tui: agent command not found: {missing}"

    bare = run_cli(tmp_path, "--cwd", "proj", "-p", "hi", "--", "no-such-agent-here")
    assert bare.returncode == 1
    path = os.environ["PATH"]
    assert f"agent command not found: no-such-agent-here (looked in PATH: {path[:50]}" in (
        bare.stderr
    )

    script = tmp_path / "agents" / "broken.sh"
    script.parent.mkdir()
    script.write_text("#!/no/such/interpreter -x\n")
    script.chmod(0o755)
    broken = run_cli(tmp_path, "--cwd", "proj", "-p", "hi", "--", "./agents/broken.sh")
    assert broken.returncode == 1
    assert broken.stderr.strip() == (
        f"acp-tui: cannot start {script.resolve()}: its interpreter (/no/such/interpreter -x) "
        "was not found"
    )


def test_check_runs_a_relative_agent_command_from_where_it_was_started(tmp_path: Path) -> None:
    """`check` runs the agent in a scratch workspace of its own: the command is still the
    one beside where `acp-tui check` was typed."""
    _agent_script(tmp_path / "agents" / "mine.sh")
    run = run_cli(tmp_path, "check", "--json", "--", "./agents/mine.sh")
    assert "not found" not in run.stderr, run.stderr
    assert '"acp-tui demo agent' in run.stdout, run.stderr
    ran_in = Path((tmp_path / "agents" / "ran-in").read_text().strip())
    assert ran_in.resolve() != tmp_path.resolve()  # the scratch workspace


def test_help_names_every_subcommand_and_a_misspelt_one_is_told_them(tmp_path: Path) -> None:
    shown = run_cli(tmp_path, "--help")
    assert shown.returncode == 0
    for name, summary in SUBCOMMANDS.items():
        assert f"    {name}" in shown.stdout and summary in shown.stdout
    assert "acp-tui {agents|sessions|export|logout|providers|check|changes|rewind|serve}" in (
        shown.stdout
    )

    wrong = run_cli(tmp_path, "chnages")
    assert wrong.returncode == 2
    assert "'chnages' is not a subcommand (they are: agents, sessions, export, logout, " in (
        wrong.stderr
    )
    assert "changes, rewind, serve); a prompt goes after -p" in wrong.stderr


def test_the_demo_works_in_a_folder_of_its_own_unless_given_one(tmp_path: Path) -> None:
    """Started in a checkout (the README's first command), the tour's edit lands in the
    demo's own workspace; `--cwd` still puts it where it says."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "ACP_TUI_DEMO_SPEED": "0",
    }

    def acp_tui(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*ACP_TUI, *args], capture_output=True, text=True, env=env, cwd=checkout, timeout=60
        )

    run = acp_tui("--permission", "allow", "-p", "/read", "-p", "/edit")
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in checkout.iterdir()) == [".git"]
    own = tmp_path / "data" / "acp-tui" / "demo-workspace"
    assert (own / "ACP_DEMO.md").is_file()
    assert "I read **" in run.stdout and "README.md" in run.stdout  # its own README
    # What it changed is found where it was made.
    hint = next(line for line in run.stderr.splitlines() if "acp-tui changes" in line)
    command = hint[hint.index("(acp-tui changes ") + 1 : -1].split()
    listed = acp_tui(*command[1:])
    assert listed.returncode == 0, listed.stderr
    assert "A  ACP_DEMO.md" in listed.stdout
    listed = acp_tui("sessions")
    assert f"Sessions with demo in {own.resolve()}" in listed.stdout

    given = acp_tui("--cwd", ".", "--permission", "allow", "-p", "/edit")
    assert given.returncode == 0, given.stderr
    assert (checkout / "ACP_DEMO.md").is_file()
