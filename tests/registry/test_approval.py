"""What the user approves of a registry agent is its id, its version and its exact source (the
archive and its checksum, or the package and its arguments): anything new asks again, and only
a good install is remembered."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_tui.registry.install import InstallError
from acp_tui.registry.start import registry_agent
from tests.support.registry import Served, binary, demo_agent_archive, entry, index, serve

NOBODY = "Nobody is at a terminal to say yes: add --yes."


class Registry:
    """A registry on 127.0.0.1 whose index each test rewrites: every new index is served at
    a new URL, so no cached copy of an earlier one stands in for it."""

    def __init__(self, served: Served, monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
        self.served = served
        self.monkeypatch = monkeypatch
        self.cache = cache
        self.count = 0

    def publish(self, *entries: dict) -> None:
        self.count += 1
        path = f"/registry-{self.count}.json"
        self.served.files[path] = index(*entries)
        self.monkeypatch.setenv("ACP_TUI_REGISTRY_URL", self.served.url(path))

    def tiny(self, version: str = "1.0.0", path: str = "/tiny.tar.gz", **target: object) -> None:
        self.served.files.setdefault(path, demo_agent_archive())
        self.publish(
            entry("tiny", binary(self.served, path, "./bin/tiny-agent", **target), version)
        )

    def marks(self, agent_id: str = "tiny") -> list[str]:
        return sorted(p.name for p in (self.cache / agent_id).glob(".approved*"))


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Registry]:
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    with serve() as served:
        yield Registry(served, monkeypatch, tmp_path / "xdg_cache_home" / "acp-tui" / "agents")


def start(agent_id: str = "tiny", answer: str | None = None) -> tuple[str, str]:
    """Start `agent_id` as the CLI would: at a terminal answering `answer`, or with nobody
    there (None). Returns the command's first word and what was said on stderr."""
    err = io.StringIO()
    interactive = answer is not None
    agent = registry_agent(
        agent_id, interactive=interactive, ask=lambda _: answer or "", stderr=err
    )
    return agent.command[0], err.getvalue()


def refused(agent_id: str = "tiny") -> str:
    with pytest.raises(InstallError) as error:
        start(agent_id)
    return str(error.value)


def test_a_new_version_asks_again(registry: Registry) -> None:
    registry.tiny()
    start(answer="y")
    start()  # approved: nobody needs to be there now
    registry.tiny("1.1.0", "/tiny-1.1.0.tar.gz")
    message = refused()
    assert "Tiny (tiny) comes from the ACP Registry and has changed since you approved it" in (
        message
    )
    assert "Download Tiny 1.1.0 from http://127.0.0.1:" in message and message.endswith(NOBODY)
    with pytest.raises(InstallError, match="you said no"):
        start(answer="n")
    command, said = start(answer="y")
    assert "Tiny has changed since you approved it (a new version or source)." in said
    assert "/1.1.0/" in command
    start()


def test_a_changed_archive_or_checksum_asks_again(registry: Registry) -> None:
    archive = demo_agent_archive()
    registry.served.files["/tiny.tar.gz"] = archive
    registry.tiny()
    start(answer="y")
    # The same version from elsewhere (already installed: nothing is downloaded again).
    registry.served.files["/mirror/tiny.tar.gz"] = archive
    registry.tiny(path="/mirror/tiny.tar.gz")
    assert "has changed since you approved it" in refused()
    start(answer="y")
    registry.tiny(path="/mirror/tiny.tar.gz", sha256=hashlib.sha256(archive).hexdigest())
    assert "has changed since you approved it" in refused()
    start(answer="y")
    registry.tiny(path="/mirror/tiny.tar.gz", sha256="ab" * 32)
    assert "has changed since you approved it" in refused()
    registry.tiny(args=["--speed", "0"])  # the command's own arguments are part of it too
    assert "has changed since you approved it" in refused()
    registry.tiny()  # what was approved first still is
    start()


def test_a_failed_install_approves_nothing(registry: Registry) -> None:
    registry.tiny(sha256="ab" * 32)
    with pytest.raises(InstallError, match="checksum is wrong"):
        start(answer="y")
    assert registry.marks() == []
    assert "has not been started here before" in refused()
    registry.publish(entry("tiny", binary(registry.served, "/missing.tar.gz", "./bin/tiny-agent")))
    with pytest.raises(InstallError, match="HTTP Error 404"):
        start(answer="y")
    assert registry.marks() == []


def test_a_mark_of_an_earlier_acp_tui_approves_nothing(registry: Registry) -> None:
    registry.tiny()
    old = registry.cache / "tiny" / ".approved"
    old.parent.mkdir(parents=True)
    old.touch()  # it named no version nor source
    assert "has not been started here before" in refused()
    start(answer="y")
    assert len(registry.marks()) == 2  # the old one, and one naming what was approved


def test_an_npx_agent_asks_again_when_its_package_or_arguments_change(
    registry: Registry,
) -> None:
    def acme(package: str, *args: str) -> None:
        registry.publish(entry("acme", {"npx": {"package": package, "args": list(args)}}))

    acme("@acme/agent@1.2.3", "--acp")
    assert "has not been started here before" in refused("acme")
    # Nothing of ours to install: agreeing is enough (npx fetches the package as it starts).
    command, said = start("acme", answer="y")
    assert command == "npx" and "Run Acme 1.0.0 with `npx -y -- @acme/agent@1.2.3 --acp`" in said
    assert len(registry.marks("acme")) == 1
    start("acme")
    acme("@acme/agent@1.3.0", "--acp")
    assert "has changed since you approved it" in refused("acme")
    acme("@acme/agent@1.2.3", "--acp", "--yolo")
    assert "has changed since you approved it" in refused("acme")
