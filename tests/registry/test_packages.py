"""An npx or uvx package string is only ever a package name with an optional version: anything
else (an option such as `--call=...`, a path, a URL) is refused as the index is read, and again
as an agent would start; the tool's own options end with `--` before it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from acp_tui import cli
from acp_tui.registry.index import PackageDistribution, RegistryAgent, decode_index
from acp_tui.registry.install import InstallError, plan_launch
from tests.support.registry import entry, index, serve


@pytest.mark.parametrize(
    ("kind", "package"),
    [
        ("npx", "@acme/agent@1.2.3"),
        ("npx", "agent"),
        ("npx", "agent@latest"),
        ("npx", "@acme/agent.js@^1.2.0-beta.1"),
        ("npx", "JSONStream@~1.3"),
        ("uvx", "py-agent==2.0"),
        ("uvx", "py_agent@2.0.1"),
        ("uvx", "py.agent[acp,extra]==1!2.0+local"),
        ("uvx", "mistral-vibe@latest"),
    ],
)
def test_a_package_name_with_a_version_is_accepted(kind: str, package: str) -> None:
    agents = decode_index(index(entry("ok", {kind: {"package": package}})))
    assert agents.problems == [] and list(agents.agents) == ["ok"]


@pytest.mark.parametrize(
    ("kind", "package"),
    [
        ("npx", "--call=touch FILE"),
        ("npx", "-y"),
        ("npx", "@acme/agent --call=x"),
        ("npx", "./agent"),
        ("npx", "../agent"),
        ("npx", "/tmp/agent"),
        ("npx", "github:acme/agent"),
        ("npx", "git+https://example.com/agent.git"),
        ("npx", "https://example.com/agent.tgz"),
        ("npx", "file:agent.tgz"),
        ("npx", "agent@-1"),
        ("npx", "@/agent"),
        ("npx", ""),
        ("npx", "agent\n"),
        ("uvx", "--with=evil"),
        ("uvx", "-p"),
        ("uvx", "agent==1.0; touch x"),
        ("uvx", "agent>=1.0"),
        ("uvx", "agent @ https://example.com/agent.whl"),
        ("uvx", "agent-"),
    ],
)
def test_anything_else_is_refused_as_the_index_is_read(kind: str, package: str) -> None:
    agents = decode_index(index(entry("bad", {kind: {"package": package}}), entry("ok", {})))
    assert list(agents.agents) == ["ok"]
    assert agents.problems == [
        f"agent 'bad': its {kind} package {package!r} is not a package name with an optional "
        "version; skipped"
    ]


def test_a_package_that_is_an_option_never_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    target = tmp_path / "FILE"
    with serve(
        {"/registry.json": index(entry("evil", {"npx": {"package": f"--call=touch {target}"}}))}
    ) as served:
        monkeypatch.setenv("ACP_TUI_REGISTRY_URL", served.url("/registry.json"))
        # Where npx is on PATH, were the package given to it, it would run the command.
        assert cli.main(["--agent", "evil", "--yes", "-p", "hello"]) == 2
    err = capsys.readouterr().err
    assert f"registry: agent 'evil': its npx package '--call=touch {target}' is not" in err
    assert "unknown agent 'evil'" in err
    # Made some other way than from an index, it is refused all the same as it would start.
    sneaked = RegistryAgent(
        "evil", "Evil", "1.0", npx=PackageDistribution(f"--call=touch {target}")
    )
    with pytest.raises(InstallError, match=r"^Evil \(evil\) is refused: its npx package"):
        plan_launch(sneaked, tmp_path, lambda tool: f"/usr/bin/{tool}")
    assert not target.exists()


def test_every_entry_of_the_real_registry_is_accepted(tmp_path: Path) -> None:
    snapshot = resources.files("acp_tui.registry").joinpath("snapshot.json").read_bytes()
    agents = decode_index(snapshot)
    assert agents.problems == [] and len(agents.agents) >= 10
    for agent in agents.agents.values():
        for kind, package in agent.packages():
            plan = plan_launch(
                RegistryAgent(agent.id, agent.name, agent.version, **{kind: package}),
                tmp_path,
                lambda tool: f"/usr/bin/{tool}",
            )
            # The tool's options end before the package; the agent's arguments follow it.
            assert plan.command[plan.command.index("--") + 1 :] == [package.package, *package.args]
