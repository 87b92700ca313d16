"""The ACP Registry: the index read leniently, cached with conditional requests, and the
fallbacks (cached copy, packaged snapshot) said plainly; binary agents installed safely."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import threading
import time
import zipfile
from pathlib import Path

import pytest

from acp_tui.config import ConfigError
from acp_tui.registry import load_registry
from acp_tui.registry.index import RegistryAgent, decode_index
from acp_tui.registry.install import (
    InstallError,
    extract_archive,
    install_binary,
    installed_versions,
    plan_launch,
)
from acp_tui.registry.source import SNAPSHOT_DATE
from acp_tui.registry.start import downloaded, registry_agent
from acp_tui.versions import version_key
from tests.support.registry import (
    Served,
    binary,
    demo_agent_archive,
    entry,
    file_member,
    index,
    link_member,
    serve,
    tar_gz,
)

NPX = {"npx": {"package": "@acme/agent@1.2.3", "args": ["--acp"], "env": {"ACME": "1"}}}
UVX = {"uvx": {"package": "py-agent==2.0", "args": ["serve"]}}


def test_a_malformed_entry_is_reported_and_skipped_unknowns_ignored() -> None:
    data = index(
        entry("good", {**NPX, "flatpak": {"app": "x"}}, homepage="https://x", future=[1]),
        entry("noname", NPX) | {"name": 5},
        {"id": "nothing-else"},
        entry("../evil", NPX),
        entry("odd-version", NPX, version="../1"),
        entry("newline\n", NPX),
        entry("trailing", NPX, version="1.0\n"),
        entry("good", UVX),
        entry("only-unknown", {"snap": {"name": "x"}}),
        entry(
            "half",
            {
                "binary": {
                    "linux-x86_64": {"cmd": "x"},
                    "linux-aarch64": {"archive": "u", "cmd": "y"},
                }
            },
        ),
    )
    result = decode_index(data)
    assert list(result.agents) == ["good", "only-unknown", "half"]
    assert result.agents["good"].npx is not None and result.agents["good"].kinds == ["npx"]
    assert result.agents["only-unknown"].kinds == []
    assert list(result.agents["half"].binary) == ["linux-aarch64"]
    problems = "\n".join(result.problems)
    assert "agent #2 ('noname'): Expected `str`, got `int` - at `$.name`; skipped" in problems
    assert "agent #3 ('nothing-else'): Object missing required field `name`" in problems
    assert "agent '../evil': its id is not lowercase" in problems
    assert "'odd-version': its version '../1' is not a plain version" in problems
    assert "agent 'newline\\n': its id is not lowercase" in problems  # ids name directories
    assert "'trailing': its version '1.0\\n' is not a plain version" in problems
    assert "agent 'good': listed twice" in problems
    assert "agent 'half', binary linux-x86_64: Object missing required field `archive`" in problems


def test_versions_in_the_order_people_count() -> None:
    assert sorted(["10.0", "9.0", "1.10", "1.2", "1.2.1"], key=version_key) == [
        "1.2", "1.2.1", "1.10", "9.0", "10.0"
    ]  # fmt: skip
    assert version_key("2.0-beta") < version_key("2.0-rc1") < version_key("2.1")
    # Semver: a pre-release comes before its release; build metadata does not count.
    versions = ["1.0.0", "1.0.0-rc.1", "1.0.0-alpha.beta", "1.0.0-alpha.1", "0.9.9"]
    assert sorted(versions, key=version_key) == [
        "0.9.9", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-rc.1", "1.0.0"
    ]  # fmt: skip
    assert version_key("1.0.0+build.7") == version_key("1.0.0")


def test_sizes_are_1024_based_everywhere() -> None:
    assert downloaded(1536, 3 * 1024 * 1024) == "1.5 KB of 3.0 MB"
    assert downloaded(700, None) == "700 B"


def test_fetched_then_cached_then_revalidated_with_a_conditional_request(
    tmp_path: Path,
) -> None:
    with serve({"/registry.json": index(entry("acme", NPX))}) as served:
        url = served.url("/registry.json")
        first = load_registry(url=url, cache=tmp_path)
        assert first.source == "network" and list(first.index.agents) == ["acme"]
        assert first.describe() == f"registry: {url}, fetched just now"

        second = load_registry(url=url, cache=tmp_path)  # within the time-to-live: no request
        assert second.source == "cache" and len(served.requests) == 1
        assert "cached copy of" in second.describe() and "fetched less than a minute ago" in (
            second.describe()
        )

        third = load_registry(url=url, cache=tmp_path, ttl=0)
        headers = served.requests[-1][1]
        assert headers["If-None-Match"].startswith('"') and "If-Modified-Since" in headers
        assert third.source == "cache" and third.unchanged
        assert "unchanged on the server" in third.describe()

        served.files["/registry.json"] = index(entry("acme", NPX), entry("beta", UVX))
        fourth = load_registry(url=url, cache=tmp_path, refresh=True)
        assert fourth.source == "network" and list(fourth.index.agents) == ["acme", "beta"]


def test_offline_uses_the_cached_copy_and_says_how_old(tmp_path: Path) -> None:
    with serve({"/registry.json": index(entry("acme", NPX))}) as served:
        url = served.url("/registry.json")
        load_registry(url=url, cache=tmp_path)
    meta = tmp_path / "registry" / "registry.meta.json"
    stale = json.loads(meta.read_text()) | {"fetched_at": time.time() - 3 * 3600}
    meta.write_text(json.dumps(stale))
    offline = load_registry(url=url, cache=tmp_path)  # the server is gone
    assert offline.source == "cache" and list(offline.index.agents) == ["acme"]
    line = offline.describe()
    assert f"cached copy of {url}, fetched 3 h ago" in line
    assert "the registry could not be reached: [Errno 111] Connection refused" in line


def test_with_nothing_cached_and_no_network_the_packaged_snapshot(tmp_path: Path) -> None:
    loaded = load_registry(url="http://127.0.0.1:9/registry.json", cache=tmp_path)
    assert loaded.source == "snapshot" and loaded.index.problems == []
    assert {"codex-acp", "gemini", "claude-code-acp"} <= set(loaded.index.agents)
    days = int((time.time() - SNAPSHOT_DATE.timestamp()) // 86400)
    assert loaded.describe().startswith(
        f"registry: the snapshot shipped with acp-tui, taken 2026-02-07, {days} days old; "
        "the registry could not be reached"
    )


def test_a_malformed_index_is_reported_and_never_replaces_the_cached_copy(
    tmp_path: Path,
) -> None:
    with serve({"/registry.json": index(entry("acme", NPX))}) as served:
        url = served.url("/registry.json")
        load_registry(url=url, cache=tmp_path)
        served.files["/registry.json"] = b'{"agents": {"not": "a list"}}'
        broken = load_registry(url=url, cache=tmp_path, refresh=True)
        assert broken.source == "cache" and list(broken.index.agents) == ["acme"]
        assert "could not be reached: not a registry index: Expected `array`" in broken.describe()
        served.files["/registry.json"] = b"<html>"
        fallback = load_registry(url=url, cache=tmp_path / "empty")
        assert fallback.source == "snapshot" and "not a registry index" in fallback.describe()


# -- how an agent is started ------------------------------------------------------------------


def test_npx_and_uvx_commands_and_a_plain_word_when_the_tool_is_missing(tmp_path: Path) -> None:
    agents = decode_index(index(entry("acme", NPX), entry("py", UVX), entry("both", NPX | UVX)))
    on_path = {"npx": "/usr/bin/npx", "uvx": "/usr/bin/uvx"}
    acme = plan_launch(agents.agents["acme"], tmp_path, on_path.get)
    assert (acme.kind, acme.command, acme.env) == (
        "npx",
        ["npx", "-y", "--", "@acme/agent@1.2.3", "--acp"],
        {"ACME": "1"},
    )
    assert acme.installed
    py = plan_launch(agents.agents["py"], tmp_path, on_path.get)
    assert py.command == ["uvx", "--", "py-agent==2.0", "serve"]
    both = plan_launch(agents.agents["both"], tmp_path, {"uvx": "/bin/uvx"}.get)
    assert both.kind == "uvx"
    with pytest.raises(InstallError) as error:
        plan_launch(agents.agents["both"], tmp_path, lambda name: None)
    assert str(error.value) == (
        "Both (both) runs with npx or uvx: npx is not on PATH: install Node.js "
        "(https://nodejs.org/), which brings npx; uvx is not on PATH: install uv "
        "(https://docs.astral.sh/uv/getting-started/installation/), which brings uvx"
    )


def _binary_agent(
    served: Served,
    archive: bytes,
    version: str = "1.0.0",
    sha256: str | None = None,
    cmd: str = "./bin/tiny-agent",
) -> RegistryAgent:
    served.files[f"/tiny-{version}.tar.gz"] = archive
    data = index(
        entry(
            "tiny",
            binary(served, f"/tiny-{version}.tar.gz", cmd, sha256, args=["--speed", "0"]),
            version,
        )
    )
    return decode_index(data).agents["tiny"]


def test_a_binary_is_downloaded_checked_unpacked_and_made_executable(tmp_path: Path) -> None:
    archive = demo_agent_archive()
    with serve() as served:
        agent = _binary_agent(served, archive, sha256=hashlib.sha256(archive).hexdigest())
        plan = plan_launch(agent, tmp_path)
        assert plan.kind == "binary" and not plan.installed
        seen: list[tuple[int, int | None]] = []
        folder = install_binary(plan, lambda got, total: seen.append((got, total)))
        assert seen[-1] == (len(archive), len(archive))
        command = folder / "bin" / "tiny-agent"
        assert plan.command == [str(command), "--speed", "0"]
        assert os.access(command, os.X_OK) and plan.installed
        assert [path for path, _ in served.requests] == ["/tiny-1.0.0.tar.gz"]

        install_binary(plan)  # installed: nothing is fetched again
        assert len(served.requests) == 1

        # 1.0.0 runs in a conversation: installing 1.1.0 beside it leaves it there.
        newer = plan_launch(_binary_agent(served, archive, "1.1.0"), tmp_path)
        install_binary(newer, in_use=[command])
        assert installed_versions("tiny", tmp_path) == ["1.0.0", "1.1.0"]
        newest = plan_launch(_binary_agent(served, archive, "1.2.0"), tmp_path)
        install_binary(newest)  # nothing runs 1.0.0 now: the next install removes it
        assert installed_versions("tiny", tmp_path) == ["1.2.0"]
        assert not any(p.name.startswith(".") for p in (tmp_path / "agents" / "tiny").iterdir())


def test_a_cache_that_cannot_be_written_is_said(tmp_path: Path) -> None:
    (tmp_path / "agents").write_text("not a directory")  # as a full or read-only disk fails
    with serve() as served:
        plan = plan_launch(_binary_agent(served, demo_agent_archive()), tmp_path)
        with pytest.raises(InstallError, match=r"^could not install into .*tiny/1\.0\.0: "):
            install_binary(plan)
    assert served.requests == []


def test_a_download_stops_once_cancelled(tmp_path: Path) -> None:
    cancel = threading.Event()
    seen: list[int] = []

    def progress(received: int, total: int | None) -> None:
        seen.append(received)
        cancel.set()  # after the first chunk, as Esc would

    with serve() as served:
        served.pace = 0.05
        archive = demo_agent_archive(padding=200_000)
        plan = plan_launch(_binary_agent(served, archive), tmp_path)
        with pytest.raises(InstallError, match=r"^cancelled$"):
            install_binary(plan, progress, cancel=cancel)
    assert len(seen) == 1 and seen[0] < len(archive)
    assert list((tmp_path / "agents" / "tiny").iterdir()) == []  # nothing half-done is left


def test_a_bad_checksum_is_refused_and_nothing_installed(tmp_path: Path) -> None:
    with serve() as served:
        plan = plan_launch(_binary_agent(served, demo_agent_archive(), sha256="ab" * 32), tmp_path)
        with pytest.raises(InstallError, match=r"checksum is wrong \(sha256 [0-9a-f]{64}, the "):
            install_binary(plan)
    assert installed_versions("tiny", tmp_path) == []
    assert list((tmp_path / "agents" / "tiny").iterdir()) == []


@pytest.mark.parametrize(
    ("members", "why"),
    [
        ([file_member("../evil", b"x")], "'../evil' would be written outside"),
        ([file_member("/etc/evil", b"x")], "'/etc/evil' would be written outside"),
        ([file_member("bin/../../evil", b"x")], "would be written outside"),
        ([link_member("bin/tiny-agent", "/bin/sh")], "the link 'bin/tiny-agent' points outside"),
        ([link_member("up", "../..")], "the link 'up' points outside"),
        ([link_member("a/b", "../../x")], "the link 'a/b' points outside"),
        ([link_member("hard", "../etc/passwd", hard=True)], "would be written outside"),
    ],
)
def test_a_malicious_archive_is_refused_whole(tmp_path: Path, members: list, why: str) -> None:
    archive = tar_gz([file_member("bin/tiny-agent", b"#!/bin/sh\n"), *members])
    with serve() as served:
        plan = plan_launch(_binary_agent(served, archive), tmp_path / "cache")
        with pytest.raises(InstallError, match="the archive is refused") as error:
            install_binary(plan)
    assert why in str(error.value)
    assert installed_versions("tiny", tmp_path / "cache") == []
    assert not (tmp_path / "evil").exists()


def test_a_command_outside_the_agent_directory_is_refused(tmp_path: Path) -> None:
    with serve() as served, pytest.raises(InstallError, match="outside the agent's directory"):
        plan_launch(_binary_agent(served, demo_agent_archive(), cmd="../../bin/sh"), tmp_path)


def _zip(entries: list[tuple[str, bytes, int]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def test_a_zip_keeps_modes_and_links_inside_and_refuses_a_way_out(tmp_path: Path) -> None:
    good = _zip(
        [
            ("agent/run", b"#!/bin/sh\n", stat.S_IFREG | 0o755),
            ("agent/data.txt", b"x", stat.S_IFREG | 0o644),
            ("agent/latest", b"run", stat.S_IFLNK | 0o777),
        ]
    )
    (tmp_path / "good.zip").write_bytes(good)
    extract_archive(tmp_path / "good.zip", tmp_path / "out")
    assert os.access(tmp_path / "out" / "agent" / "run", os.X_OK)
    assert os.readlink(tmp_path / "out" / "agent" / "latest") == "run"

    for name, entries in {
        "dotdot": [("../evil", b"x", stat.S_IFREG | 0o644)],
        "link": [("out", b"/etc", stat.S_IFLNK | 0o777)],
        # Each link alone stays inside; through the first, the second leaves.
        "chain": [("a", b".", stat.S_IFLNK | 0o777), ("a/b", b"../x", stat.S_IFLNK | 0o777)],
    }.items():
        (tmp_path / f"{name}.zip").write_bytes(_zip(entries))
        with pytest.raises(InstallError, match="the archive is refused"):
            extract_archive(tmp_path / f"{name}.zip", tmp_path / name)
    assert not (tmp_path / "evil").exists() and not (tmp_path / "x").exists()


def test_asked_once_before_the_first_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with serve() as served:
        served.files["/tiny.tar.gz"] = demo_agent_archive()
        served.files["/registry.json"] = index(
            entry("tiny", binary(served, "/tiny.tar.gz", "./bin/tiny-agent"))
        )
        monkeypatch.setenv("ACP_TUI_REGISTRY_URL", served.url("/registry.json"))
        err = io.StringIO()
        with pytest.raises(InstallError, match="not installed \\(you said no\\)"):
            registry_agent("tiny", interactive=True, ask=lambda _: "n", stderr=err)
        assert "Download Tiny 1.0.0 from http://127.0.0.1:" in err.getvalue()
        agent = registry_agent("tiny", interactive=True, ask=lambda _: "y", stderr=err)
        assert agent.name == "tiny" and Path(agent.command[0]).is_file()
        again = registry_agent("tiny", interactive=False, ask=lambda _: "n", stderr=err)
        assert again.command == agent.command
        with pytest.raises(ConfigError, match="'ghost'; nor is it in the registry"):
            registry_agent("ghost", stderr=err)
