"""Where the registry index comes from: the network (conditional requests, so an unchanged
index costs one small round trip), a cached copy in the cache directory (fresh for an hour,
and the fallback when offline), else the snapshot shipped in the package. Each result says
which one it is and how old, so a user never mistakes an old list for today's."""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Literal

from acp_tui import __version__
from acp_tui.paths import cache_dir
from acp_tui.registry.index import IndexUnreadable, RegistryIndex, decode_index

HEADERS = {"User-Agent": f"acp-tui/{__version__}"}
"""What acp-tui says of itself to the registry and to the servers agents are downloaded from."""

DEFAULT_URL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"
URL_ENV = "ACP_TUI_REGISTRY_URL"
TTL = 3600.0
"""Seconds a cached index is used without asking the server: upstream rebuilds it hourly."""
TIMEOUT = 10.0
SNAPSHOT_DATE = datetime(2026, 2, 7, tzinfo=UTC)
"""When the packaged snapshot was taken (agentclientprotocol/registry at 3de1678)."""

Source = Literal["network", "cache", "snapshot"]


@dataclass(slots=True)
class LoadedRegistry:
    """An index and where it came from."""

    index: RegistryIndex
    source: Source
    url: str
    fetched_at: float
    """When this copy was fetched from `url` (the snapshot: when it was taken), epoch s."""
    unchanged: bool = False
    """The server said the cached copy is still current (304)."""
    offline: str | None = None
    """Why the network was not used although the cached copy was stale (or missing)."""

    def describe(self, now: float | None = None) -> str:
        """One line for the user: which copy is in use, how old, and why."""
        age = _age((time.time() if now is None else now) - self.fetched_at)
        if self.source == "network":
            what = f"{self.url}, fetched just now"
        elif self.source == "cache" and self.unchanged:
            what = f"cached copy of {self.url}, unchanged on the server (checked just now)"
        elif self.source == "cache":
            what = f"cached copy of {self.url}, fetched {age} ago"
        else:
            taken = SNAPSHOT_DATE.date().isoformat()
            what = f"the snapshot shipped with acp-tui, taken {taken}, {age} old"
        if self.offline:
            what += f"; the registry could not be reached: {self.offline}"
        return f"registry: {what}"


def registry_url() -> str:
    return os.environ.get(URL_ENV) or DEFAULT_URL


def registry_cache(cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / "registry"


def load_registry(
    *,
    url: str | None = None,
    cache: Path | None = None,
    ttl: float = TTL,
    refresh: bool = False,
    timeout: float = TIMEOUT,
) -> LoadedRegistry:
    """The registry index: the cached copy while younger than `ttl` (unless `refresh`), else
    the server's (a conditional request when a copy is cached), else on any error the cached
    copy however old, else the packaged snapshot. Never raises for a network or data error;
    problems with single entries are in `.index.problems`. Blocking: see `load_registry_async`.
    """
    url = url or registry_url()
    folder = registry_cache(cache)
    cached = _read_cache(folder, url)
    if cached is not None and not refresh and time.time() - cached.fetched_at < ttl:
        return cached
    try:
        return _fetch(folder, url, cached, timeout)
    except (OSError, IndexUnreadable) as error:
        reason = _reason(error)
    if cached is not None:
        cached.offline = reason
        return cached
    return _snapshot(url, reason)


async def load_registry_async(**options: object) -> LoadedRegistry:
    """`load_registry` in a worker thread, for an event loop (the TUI)."""
    return await asyncio.to_thread(load_registry, **options)  # type: ignore[arg-type]


def _fetch(folder: Path, url: str, cached: LoadedRegistry | None, timeout: float) -> LoadedRegistry:
    request = urllib.request.Request(url, headers=HEADERS)
    meta = _read_meta(folder) if cached is not None else {}
    if meta.get("etag"):
        request.add_header("If-None-Match", meta["etag"])
    if meta.get("last_modified"):
        request.add_header("If-Modified-Since", meta["last_modified"])
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = response.read()
            headers = response.headers
    except urllib.error.HTTPError as error:
        if error.code == 304 and cached is not None:
            meta["fetched_at"] = time.time()
            _write_meta(folder, meta)
            cached.fetched_at, cached.unchanged = meta["fetched_at"], True
            return cached
        raise
    index = decode_index(data)  # before caching: a broken index must not replace a good copy
    meta = {
        "url": url,
        "etag": headers.get("ETag"),
        "last_modified": headers.get("Last-Modified"),
        "fetched_at": time.time(),
    }
    folder.mkdir(parents=True, exist_ok=True)
    _replace(folder / "registry.json", data)
    _write_meta(folder, meta)
    return LoadedRegistry(index, "network", url, meta["fetched_at"])


def _read_cache(folder: Path, url: str) -> LoadedRegistry | None:
    meta = _read_meta(folder)
    # A copy of another URL (a test's, a mirror's) is not this registry.
    if meta.get("url") != url or not isinstance(meta.get("fetched_at"), int | float):
        return None
    try:
        index = decode_index((folder / "registry.json").read_bytes())
    except (OSError, IndexUnreadable):
        return None
    return LoadedRegistry(index, "cache", url, float(meta["fetched_at"]))


def _snapshot(url: str, reason: str) -> LoadedRegistry:
    data = resources.files("acp_tui.registry").joinpath("snapshot.json").read_bytes()
    return LoadedRegistry(
        decode_index(data), "snapshot", url, SNAPSHOT_DATE.timestamp(), False, reason
    )


def _read_meta(folder: Path) -> dict:
    try:
        meta = json.loads((folder / "registry.meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _write_meta(folder: Path, meta: dict) -> None:
    _replace(folder / "registry.meta.json", json.dumps(meta).encode())


def _replace(path: Path, data: bytes) -> None:
    """Write `data` to `path` whole or not at all: another acp-tui may be reading it."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_bytes(data)
    os.replace(partial, path)


def _reason(error: BaseException) -> str:
    if isinstance(error, urllib.error.HTTPError):
        return f"HTTP {error.code} {error.reason}"
    if isinstance(error, urllib.error.URLError):
        return str(error.reason)
    return str(error) or type(error).__name__


def _age(seconds: float) -> str:
    if seconds < 60:
        return "less than a minute"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} days"
