"""A registry archive is downloaded within limits: a size that is refused before a byte comes,
or stopped as soon as it is passed; a server that goes silent; the checksum's check shown as it
goes; and what an interrupted install left behind cleaned up, never an install under way."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui.registry.index import RegistryAgent, decode_index
from acp_tui.registry.install import STALE_AGE, InstallError, install_binary, plan_launch
from acp_tui.registry.start import registry_agent
from acp_tui.text import human_size
from tests.support.registry import Served, binary, demo_agent_archive, entry, index, serve

KB = 1024


@pytest.fixture
def served() -> Iterator[Served]:
    with serve() as server:
        yield server


def tiny(served: Served, archive: bytes, sha256: str | None = None) -> RegistryAgent:
    served.files["/tiny.tar.gz"] = archive
    data = index(entry("tiny", binary(served, "/tiny.tar.gz", "./bin/tiny-agent", sha256)))
    return decode_index(data).agents["tiny"]


def leftovers(cache: Path) -> list[Path]:
    return sorted((cache / "agents").glob("*/.*"))


def test_an_archive_declaring_more_than_the_limit_is_refused_before_download(
    tmp_path: Path, served: Served
) -> None:
    plan = plan_launch(tiny(served, demo_agent_archive(padding=300 * KB)), tmp_path)
    served.declared["/tiny.tar.gz"] = 2 << 30
    seen: list[int] = []
    with pytest.raises(InstallError) as error:
        install_binary(plan, lambda got, total: seen.append(got), max_size=100 * KB)
    assert str(error.value) == (
        f"{served.url('/tiny.tar.gz')} is 2.0 GB, more than 100.0 KB, the most acp-tui "
        "downloads (max_download): nothing was downloaded"
    )
    assert seen == [] and not plan.installed and leftovers(tmp_path) == []


@pytest.mark.parametrize("declared", [None, 50 * KB], ids=["says-nothing", "says-less"])
def test_an_archive_that_streams_past_the_limit_is_stopped_there(
    tmp_path: Path, served: Served, declared: int | None
) -> None:
    served.declared["/tiny.tar.gz"] = declared
    plan = plan_launch(tiny(served, demo_agent_archive(padding=600 * KB)), tmp_path)
    seen: list[int] = []
    with pytest.raises(InstallError) as error:
        install_binary(plan, lambda got, total: seen.append(got), max_size=100 * KB)
    if declared is None:
        assert str(error.value) == (
            f"{served.url('/tiny.tar.gz')} sent more than 100.0 KB, the most acp-tui "
            "downloads (max_download): the download was stopped"
        )
        assert 0 < seen[-1] <= 100 * KB
    else:
        # Read no further than it said: a truncated archive, refused as such.
        assert "cannot be unpacked" in str(error.value) and seen[-1] == 50 * KB
    assert not plan.installed and leftovers(tmp_path) == []


def test_an_archive_shorter_than_it_said_is_refused(tmp_path: Path, served: Served) -> None:
    archive = demo_agent_archive()
    plan = plan_launch(tiny(served, archive), tmp_path)
    served.declared["/tiny.tar.gz"] = 10 * KB + len(archive)
    with pytest.raises(InstallError) as error:
        install_binary(plan)
    assert str(error.value) == (
        f"could not download {served.url('/tiny.tar.gz')}: it ended after "
        f"{human_size(len(archive))} of {human_size(10 * KB + len(archive))}"
    )
    assert not plan.installed and leftovers(tmp_path) == []


def test_the_limit_comes_from_the_config(tmp_path: Path, served: Served) -> None:
    served.files["/tiny.tar.gz"] = demo_agent_archive(padding=300 * KB)
    served.files["/registry.json"] = index(
        entry("tiny", binary(served, "/tiny.tar.gz", "./bin/tiny-agent"))
    )
    (tmp_path / "config" / "acp-tui").mkdir(parents=True)
    (tmp_path / "config" / "acp-tui" / "config.toml").write_text('max_download = "100 KB"\n')
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "ACP_TUI_REGISTRY_URL": served.url("/registry.json"),
    }
    result = subprocess.run(
        [sys.executable, "-m", "acp_tui", "--agent", "tiny", "--yes", "-p", "hello"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert result.returncode == 1
    assert "more than 100.0 KB, the most acp-tui downloads (max_download)" in result.stderr


def test_a_stalled_download_is_given_up(tmp_path: Path, served: Served) -> None:
    plan = plan_launch(tiny(served, demo_agent_archive(padding=100 * KB)), tmp_path)
    served.stall_after = 20 * KB
    seen: list[int] = []
    started = time.monotonic()
    with pytest.raises(InstallError) as error:
        install_binary(plan, lambda got, total: seen.append(got), stall=0.3)
    assert str(error.value) == (
        f"the download of {served.url('/tiny.tar.gz')} stalled: nothing came for 0.3 s"
    )
    assert seen[-1] == 20 * KB and time.monotonic() - started < 10
    assert not plan.installed and leftovers(tmp_path) == []


def test_the_checksum_check_reports_its_progress(
    tmp_path: Path, served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = demo_agent_archive(padding=3 << 20)  # several chunks of the check
    plan = plan_launch(tiny(served, archive, hashlib.sha256(archive).hexdigest()), tmp_path)
    checked: list[tuple[int, int | None]] = []
    install_binary(plan, checking=lambda done, total: checked.append((done, total)))
    assert len(checked) > 1 and checked[-1] == (len(archive), len(archive))
    assert [done for done, _total in checked] == sorted({done for done, _total in checked})

    # On the command line, beside the download's, on stderr.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cli"))
    served.files["/registry.json"] = index(
        entry(
            "tiny",
            binary(served, "/tiny.tar.gz", "./bin/tiny-agent", hashlib.sha256(archive).hexdigest()),
        )
    )
    monkeypatch.setenv("ACP_TUI_REGISTRY_URL", served.url("/registry.json"))
    err = io.StringIO()
    registry_agent("tiny", yes=True, stderr=err)
    lines = err.getvalue().splitlines()
    size = f"{len(archive) / (1 << 20):.1f} MB"
    assert f"acp-tui: downloading tiny: {size} of {size}" in lines
    assert lines[-1] == f"acp-tui: checking tiny: {size} of {size}"


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", ""])
    process.wait()
    return process.pid


def test_what_a_dead_install_left_is_removed_never_a_live_one(
    tmp_path: Path, served: Served
) -> None:
    agents = tmp_path / "agents"
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=-1)
    try:
        left = {
            "dead": agents / "other" / f".install-{_dead_pid()}-k2j4x8q1",
            "live": agents / "other" / f".install-{live.pid}-a81hd7w2",
            "ours": agents / "tiny" / f".install-{os.getpid()}-0p1x7q3m",
            "old": agents / "other" / ".install-u3k9q2aa",  # an earlier acp-tui's: no pid
            "recent": agents / "other" / ".install-zq81mmx0",
        }
        for folder in left.values():
            folder.mkdir(parents=True)
            (folder / "archive").write_bytes(b"half an archive")
        long_ago = time.time() - STALE_AGE - 60
        os.utime(left["old"], (long_ago, long_ago))
        approved = agents / "other" / ".approved-0123456789abcdef"
        approved.write_text("{}")

        plan = plan_launch(tiny(served, demo_agent_archive()), tmp_path)
        install_binary(plan)
        assert plan.installed
        kept = {name for name, folder in left.items() if folder.exists()}
        assert kept == {"live", "ours", "recent"}
        assert approved.exists()
    finally:
        live.kill()
        live.wait()
