"""`acp-tui agents` and `acp-tui --agent ID` with the registry served on 127.0.0.1: a binary
agent downloaded and really started headless, npx and uvx agents started through the tool,
asked once, configured agents first."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui import cli
from tests.support.registry import Served, binary, demo_agent_archive, entry, index, serve

ACP_TUI = [sys.executable, "-m", "acp_tui"]
NPX = {"npx": {"package": "@acme/agent@1.2.3", "args": ["--acp"], "env": {"ACME": "on"}}}


@pytest.fixture
def registry() -> Iterator[Served]:
    with serve() as served:
        served.files["/tiny.tar.gz"] = demo_agent_archive()
        served.files["/registry.json"] = index(
            entry(
                "tiny", binary(served, "/tiny.tar.gz", "./bin/tiny-agent", args=["--speed", "0"])
            ),
            entry("acme", NPX),
            entry("demo", NPX),
            entry("pyagent", {"uvx": {"package": "py-agent==2.0", "args": ["serve"]}}),
        )
        yield served


def _env(home: Path, served: Served, path: str | None = None) -> dict[str, str]:
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "ACP_TUI_REGISTRY_URL": served.url("/registry.json"),
        "ACP_TUI_DEMO_SPEED": "0",
    }
    if path is not None:
        env["PATH"] = path
    return env


def _run(home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ACP_TUI, *args, "--no-record", "--no-checkpoints"],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_a_binary_registry_agent_is_installed_once_and_really_started(
    tmp_path: Path, registry: Served
) -> None:
    env = _env(tmp_path, registry)
    refused = _run(tmp_path, env, "--agent", "tiny", "-p", "hello")
    assert refused.returncode == 1
    assert f"registry: {registry.url('/registry.json')}, fetched just now" in refused.stderr
    assert "Tiny (tiny) comes from the ACP Registry and has not been started here before" in (
        refused.stderr
    )
    assert "Nobody is at a terminal to say yes: add --yes." in refused.stderr
    assert "/tiny.tar.gz" not in [path for path, _ in registry.requests]

    first = _run(tmp_path, env, "--agent", "tiny", "--yes", "-p", "hello")
    assert first.returncode == 0, first.stderr
    assert "I'm the **acp-tui demo agent**" in first.stdout  # the archive's agent answered
    folder = tmp_path / "cache" / "acp-tui" / "agents" / "tiny" / "1.0.0"
    assert "registry: cached copy of" in first.stderr
    assert f"installing Tiny 1.0.0 into {folder}" in first.stderr
    assert re.search(r"downloading tiny: (\d+ B) of \1\n", first.stderr)

    again = _run(tmp_path, env, "--agent", "tiny", "-p", "hello")  # asked once: no --yes now
    assert again.returncode == 0, again.stderr
    assert "cached copy of" in again.stderr and "installing" not in again.stderr
    assert [path for path, _ in registry.requests].count("/tiny.tar.gz") == 1


def test_an_npx_agent_runs_through_npx_with_the_entry_env(tmp_path: Path, registry: Served) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    seen = tmp_path / "npx-saw"
    # A stand-in npx that records how it was called, then runs a real ACP agent.
    (tools / "npx").write_text(
        f'#!/bin/sh\necho "$@ ACME=$ACME" > {seen}\nexec {sys.executable} -m acp_tui.demo\n'
    )
    (tools / "npx").chmod(0o755)
    env = _env(tmp_path, registry, path=f"{tools}{os.pathsep}/usr/bin{os.pathsep}/bin")
    result = _run(tmp_path, env, "--agent", "acme", "--yes", "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert seen.read_text() == "-y -- @acme/agent@1.2.3 --acp ACME=on\n"


def test_a_missing_uvx_is_said_plainly_with_how_to_get_it(
    tmp_path: Path,
    registry: Served,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, value in _env(tmp_path, registry, path=str(tmp_path / "empty")).items():
        monkeypatch.setenv(name, value)
    assert cli.main(["--agent", "pyagent", "--yes", "-p", "hello"]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "acp-tui: Pyagent (pyagent) runs with uvx: uvx is not on PATH: install uv "
        "(https://docs.astral.sh/uv/getting-started/installation/), which brings uvx"
    )


def test_agents_lists_configured_agents_first_then_the_registry(
    tmp_path: Path,
    registry: Served,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, value in _env(tmp_path, registry).items():
        monkeypatch.setenv(name, value)
    registry.files["/registry.json"] = registry.files["/registry.json"].replace(
        b'"agents": [', b'"agents": [{"id": "broken"}, '
    )
    assert cli.main(["agents"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    registry_at = next(i for i, line in enumerate(lines) if line.startswith("ACP Registry ("))
    assert any(line.split()[1:2] == ["demo"] for line in lines[:registry_at])
    rows = {line.split()[0]: line.split() for line in lines[registry_at + 2 :] if line}
    assert rows["tiny"][:5] == ["tiny", "Tiny", "1.0.0", "binary", "no"]
    assert rows["acme"][3] == "npx"
    assert "demo" not in rows
    assert "Configured agents of the same id win: demo." in out
    assert "acp-tui: registry: agent #1 ('broken'): Object missing required field" in err

    assert cli.main(["agents"]) == 0 and len(registry.requests) == 1  # the cached copy
    assert cli.main(["agents", "--update"]) == 0 and len(registry.requests) == 2
    assert "unchanged on the server (checked just now)" in capsys.readouterr().out
