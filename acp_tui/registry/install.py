"""How a registry agent is started: `npx -y -- PACKAGE ARGS`, `uvx -- PACKAGE ARGS`, or a
binary archive for this platform downloaded into the cache (within a size limit, given up when
the server stalls), checked, extracted safely and run from there. Installed versions live in
`<cache>/agents/<id>/<version>/`; a new version is unpacked beside the old one, which is
removed only once the new one is in place, and never while a conversation runs it."""

from __future__ import annotations

import hashlib
import http.client
import os
import platform
import shutil
import stat
import sys
import tarfile
import tempfile
import threading
import time
import urllib.request
import zipfile
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from acp_tui.config import DEFAULT_MAX_DOWNLOAD
from acp_tui.paths import cache_dir, within
from acp_tui.registry.index import BinaryTarget, RegistryAgent, package_problem
from acp_tui.registry.source import HEADERS
from acp_tui.text import human_size
from acp_tui.versions import version_key

Progress = Callable[[int, int | None], None]
"""Called with the bytes received (or checked) so far and the total when it is known."""

HOW_TO_GET = {
    "npx": "install Node.js (https://nodejs.org/), which brings npx",
    "uvx": "install uv (https://docs.astral.sh/uv/getting-started/installation/), which brings uvx",
}
STALL_TIMEOUT = 60.0
"""Seconds a download may go without a byte before it is given up."""
STALE_AGE = 86400.0
"""Seconds after which an install folder whose process cannot be asked is taken as dead."""
_CHUNK = 1 << 16
_CHECK_CHUNK = 1 << 20
_INSTALL = ".install-"


class InstallError(Exception):
    """A registry agent cannot be started or installed; the message is for the user."""


@dataclass(slots=True)
class LaunchPlan:
    """How to start one registry agent."""

    agent: RegistryAgent
    kind: str
    """`binary`, `npx` or `uvx`."""
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    target: BinaryTarget | None = None
    """For `binary`: what to download when it is not installed yet."""
    install_dir: Path | None = None

    @property
    def installed(self) -> bool:
        """Nothing to download first (npx and uvx fetch their packages themselves)."""
        return self.install_dir is None or self.install_dir.is_dir()


def platform_key() -> str:
    """This machine in the registry's words: `linux-x86_64`, `darwin-aarch64`, ..."""
    system = {"darwin": "darwin", "win32": "windows"}.get(sys.platform, sys.platform)
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return f"{system}-{machine}"


def agents_dir(cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / "agents"


def installed_versions(agent_id: str, cache: Path | None = None) -> list[str]:
    """The versions of a binary agent unpacked in the cache (normally one), oldest first."""
    folder = agents_dir(cache) / agent_id
    if not folder.is_dir():
        return []
    names = [p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return sorted(names, key=version_key)


def plan_launch(
    agent: RegistryAgent,
    cache: Path | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> LaunchPlan:
    """How to start `agent` here: its binary for this platform, else npx, else uvx (a tool
    that is missing is skipped when another kind is listed). Raises InstallError saying what
    to install when nothing can start it."""
    target = agent.binary.get(platform_key())
    if target is not None:
        folder = agents_dir(cache) / agent.id / agent.version
        command = _command_path(folder, target.cmd)
        return LaunchPlan(
            agent, "binary", [str(command), *target.args], dict(target.env), target, folder
        )
    missing = []
    for kind, package in agent.packages():
        if which(kind) is None:
            missing.append(kind)
            continue
        if problem := package_problem(kind, package.package):
            raise InstallError(f"{agent.name} ({agent.id}) is refused: {problem}")
        # `--` ends the tool's own options, so the package is only ever a package. Both tools
        # hand everything after the package to the agent untouched (a `--` after it would
        # reach the agent as an argument).
        prefix = ["npx", "-y", "--"] if kind == "npx" else ["uvx", "--"]
        return LaunchPlan(agent, kind, [*prefix, package.package, *package.args], dict(package.env))
    if missing:
        how = "; ".join(f"{kind} is not on PATH: {HOW_TO_GET[kind]}" for kind in missing)
        raise InstallError(f"{agent.name} ({agent.id}) runs with {' or '.join(missing)}: {how}")
    listed = ", ".join(sorted(agent.binary)) or "none"
    raise InstallError(
        f"{agent.name} ({agent.id}) has no build for {platform_key()} (it has: {listed}) "
        "and no npx or uvx package"
    )


@dataclass(frozen=True, slots=True)
class _Download:
    """How an archive is fetched: its limits, and who hears how far it got."""

    progress: Progress | None
    checking: Progress | None
    """Called as the archive's checksum is checked, with the bytes checked so far."""
    cancel: threading.Event | None
    """Set: the install stops at its next chunk ("cancelled")."""
    max_size: int
    stall: float


def install_binary(
    plan: LaunchPlan,
    progress: Progress | None = None,
    *,
    checking: Progress | None = None,
    cancel: threading.Event | None = None,
    in_use: Collection[Path] = (),
    max_size: int = DEFAULT_MAX_DOWNLOAD,
    stall: float = STALL_TIMEOUT,
) -> Path:
    """Download, check and unpack `plan`'s archive into its version directory (a no-op when
    it is there), then remove other versions of the agent but those holding a command in
    `in_use` (running now: removing it would pull the files from under it). An archive over
    `max_size` bytes is refused, or stopped as soon as it passes it; a server silent for
    `stall` seconds is given up. Returns the directory. Raises InstallError, "cancelled" once
    `cancel` is set (checked per chunk)."""
    assert plan.target is not None and plan.install_dir is not None
    folder = plan.install_dir
    download = _Download(progress, checking, cancel, max_size, stall)
    try:
        if folder.is_dir():
            return folder
        _remove_dead_installs(folder.parent.parent)
        _install(plan.target, folder, download)
        for old in folder.parent.iterdir():
            # Dot directories are installs under way (another acp-tui's): not ours to remove.
            if old == folder or not old.is_dir() or old.name.startswith("."):
                continue
            if not any(command.is_relative_to(old) for command in in_use):
                shutil.rmtree(old, ignore_errors=True)
    except OSError as error:
        # A full disk, a read-only cache: said, like any other failure to install.
        raise InstallError(f"could not install into {folder}: {error}") from None
    return folder


def _install(target: BinaryTarget, folder: Path, download: _Download) -> None:
    parent = folder.parent
    parent.mkdir(parents=True, exist_ok=True)
    # Everything is unpacked in a private directory beside the final one and renamed into
    # place, so an interrupted install never looks installed. Its name carries our pid: the
    # next install can tell one whose process died (and left it behind) from one under way.
    work = Path(tempfile.mkdtemp(prefix=f"{_INSTALL}{os.getpid()}-", dir=parent))
    try:
        archive = work / "archive"
        _download(target.archive, archive, download)
        if target.sha256:
            _verify(archive, target.sha256, download)
        unpacked = work / "unpacked"
        unpacked.mkdir()
        extract_archive(archive, unpacked, target.archive)
        command = _command_path(unpacked, target.cmd)
        if not command.is_file():
            raise InstallError(f"the archive has no {target.cmd!r} to run")
        command.chmod(command.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        try:
            os.rename(unpacked, folder)
        except OSError:
            if not folder.is_dir():
                raise InstallError(f"could not install into {folder}") from None
            # Another acp-tui installed the same version meanwhile: theirs is as good.
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _command_path(folder: Path, cmd: str) -> Path:
    relative = PurePosixPath(cmd.replace("\\", "/"))
    if relative.is_absolute() or ".." in relative.parts:
        raise InstallError(f"the command {cmd!r} is outside the agent's directory")
    return folder.joinpath(*[part for part in relative.parts if part != "."])


def _download(url: str, path: Path, download: _Download) -> None:
    request = urllib.request.Request(url, headers=HEADERS)
    limit = f"{human_size(download.max_size)}, the most acp-tui downloads (max_download)"
    try:
        # The timeout holds for every read of the socket: a server that goes silent for that
        # long is given up, however long the whole download takes.
        with (
            urllib.request.urlopen(request, timeout=download.stall) as response,
            path.open("wb") as out,
        ):
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            if total is not None and total > download.max_size:
                raise InstallError(
                    f"{url} is {human_size(total)}, more than {limit}: nothing was downloaded"
                )
            received = 0
            # read1: what has arrived, not a full chunk: progress and a cancel are not held
            # up by a slow server.
            while chunk := response.read1(_CHUNK):
                _check_cancel(download.cancel)
                received += len(chunk)
                if received > download.max_size:
                    raise InstallError(f"{url} sent more than {limit}: the download was stopped")
                out.write(chunk)
                if download.progress:
                    download.progress(received, total)
            if total is not None and received < total:
                # read1 ends quietly when the connection closes early.
                raise InstallError(
                    f"could not download {url}: it ended after {human_size(received)} of "
                    f"{human_size(total)}"
                )
    except OSError as error:
        reason = getattr(error, "reason", error)  # a URLError wraps what happened
        if isinstance(reason, TimeoutError):
            raise InstallError(
                f"the download of {url} stalled: nothing came for {download.stall:g} s"
            ) from None
        raise InstallError(f"could not download {url}: {error}") from None
    except http.client.HTTPException as error:  # not an OSError: a broken status line, ...
        raise InstallError(f"could not download {url}: {error!r}") from None


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise InstallError("cancelled")


def _verify(path: Path, expected: str, download: _Download) -> None:
    digest = hashlib.sha256()
    total = path.stat().st_size
    checked = 0
    with path.open("rb") as file:
        while chunk := file.read(_CHECK_CHUNK):
            _check_cancel(download.cancel)
            digest.update(chunk)
            checked += len(chunk)
            if download.checking:
                download.checking(checked, total)
    expected = expected.lower().removeprefix("sha256:")
    if digest.hexdigest() != expected:
        raise InstallError(
            f"the download's checksum is wrong (sha256 {digest.hexdigest()}, the registry "
            f"says {expected}): it was deleted, nothing was installed"
        )


def _remove_dead_installs(agents: Path) -> None:
    """Remove the install folders, of any agent, left by an install whose process is gone."""
    for work in agents.glob(f"*/{_INSTALL}*"):
        if work.is_dir() and _dead(work):
            shutil.rmtree(work, ignore_errors=True)


def _dead(work: Path) -> bool:
    pid, _, _rest = work.name.removeprefix(_INSTALL).partition("-")
    if pid.isdigit() and sys.platform != "win32":
        return not _running(int(pid))
    # No pid (an earlier acp-tui named them so), or Windows, where probing one would end it
    # (os.kill): old enough, it is no install under way.
    try:
        return time.time() - work.stat().st_mtime > STALE_AGE
    except OSError:
        return False


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # there, but not ours to signal
    return True


def extract_archive(archive: Path, target: Path, name: str = "") -> None:
    """Unpack a tar (any compression) or zip `archive` into `target`. Every member is checked
    first and the whole archive refused (InstallError) if any would land outside `target`:
    an absolute path, a `..`, a link pointing out, a device. Nothing is written then."""
    if zipfile.is_zipfile(archive):
        _extract_zip(archive, target)
    elif tarfile.is_tarfile(archive):
        _extract_tar(archive, target)
    else:
        raise InstallError(f"{name or archive.name} is neither a tar nor a zip archive")


def _inside(name: str) -> PurePosixPath:
    """`name` as a path inside the target, or InstallError."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise InstallError(f"the archive is refused: {name!r} would be written outside its folder")
    return path


def _link_inside(member: str, link: str) -> None:
    """A symbolic link at `member` to `link` must resolve inside the target."""
    target = PurePosixPath(link.replace("\\", "/"))
    depth = len(_inside(member).parent.parts)
    if target.is_absolute():
        escapes = True
    else:
        escapes = False
        for part in target.parts:
            depth += -1 if part == ".." else 0 if part == "." else 1
            escapes = escapes or depth < 0
    if escapes:
        raise InstallError(
            f"the archive is refused: the link {member!r} points outside it ({link})"
        )


def _real_inside(root: str, path: Path, name: str) -> None:
    real = os.path.realpath(path)
    if not within(root, real):
        raise InstallError(f"the archive is refused: {name!r} would be written outside its folder")


def _extract_tar(archive: Path, target: Path) -> None:
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            for member in members:
                _inside(member.name)
                if member.issym():
                    _link_inside(member.name, member.linkname)
                elif member.islnk():
                    _inside(member.linkname)  # hard links name a member of the archive
                elif not (member.isfile() or member.isdir()):
                    raise InstallError(f"the archive is refused: {member.name!r} is a device")
            if hasattr(tarfile, "data_filter"):
                # Checked above already; the standard filter is a second lock on the door.
                tar.extractall(target, members=members, filter="data")
            else:  # pragma: no cover (Python < 3.11.4)
                tar.extractall(target, members=members)
    except (tarfile.TarError, EOFError, OSError) as error:
        raise InstallError(f"the archive cannot be unpacked: {error}") from None


def _extract_zip(archive: Path, target: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zip_file:
            infos = zip_file.infolist()
            links = {}
            for info in infos:
                _inside(info.filename)
                if stat.S_ISLNK(info.external_attr >> 16):
                    link = zip_file.read(info).decode("utf-8", "replace")
                    _link_inside(info.filename, link)
                    links[info.filename] = link
            root = os.path.realpath(target)
            for info in infos:
                path = target.joinpath(*_inside(info.filename).parts)
                # Lexical checks miss a link reached through another link (`a` -> `.`, then
                # `a/b` -> `../x`): what is already on disk decides.
                _real_inside(root, path.parent, info.filename)
                if info.filename in links:
                    _real_inside(root, path.parent / links[info.filename], info.filename)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.symlink_to(links[info.filename])
                    continue
                zip_file.extract(info, target)
                mode = (info.external_attr >> 16) & 0o777
                if mode and not info.is_dir():
                    # zipfile drops permissions; keep the archive's (an executable stays one).
                    path.chmod(mode & 0o755)
    except (zipfile.BadZipFile, OSError) as error:
        raise InstallError(f"the archive cannot be unpacked: {error}") from None


def registry_status(
    agent: RegistryAgent,
    cache: Path | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> tuple[str, str, str]:
    """For a listing: how it would start here (kind), whether it is installed, and whether
    what it needs is on PATH (the binary's own name, or npx / uvx)."""
    try:
        plan = plan_launch(agent, cache, which)
    except InstallError:
        kinds = "/".join(agent.kinds) or "-"
        needs = " or ".join(kind for kind, _package in agent.packages())
        reason = f"no: {needs}" if needs else f"no build for {platform_key()}"
        return kinds, "no", reason
    if plan.kind == "binary":
        versions = installed_versions(agent.id, cache)
        installed = "yes" if agent.version in versions else "no"
        if versions and installed == "no":
            installed = f"no (has {versions[-1]})"
        name = PurePosixPath(plan.target.cmd if plan.target else "").name
        found = which(name)
        return "binary", installed, f"yes: {found}" if found else "no"
    found = which(plan.kind) or plan.kind
    return plan.kind, f"on first run, by {plan.kind}", f"{plan.kind}: {found}"
