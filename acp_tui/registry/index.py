"""The ACP Registry's index (`{"version", "agents": [...], "extensions": [...]}`) as typed
values, decoded leniently: one malformed entry is reported and skipped, never the whole list;
unknown fields, platforms and distribution kinds are ignored so a newer index still reads."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import msgspec

# Ids and versions become directory names in the cache: anything else could name a path
# outside it (`../x`), so such an entry is refused, not sanitised.
_ID = re.compile(r"[a-z][a-z0-9-]*")
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]*")
# A package string becomes an argument of npx or uvx: only a name and a version are let
# through, so it can never be read as one of their options (`--call=...` runs a command), a
# path, a URL or a git repository.
_PACKAGE = {
    # [@scope/]name[@version, range or tag]
    "npx": re.compile(
        r"(@[a-z0-9][a-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*(@[0-9A-Za-z^~][0-9A-Za-z.+_-]*)?"
    ),
    # name[extras][==version or @version] (PEP 508 names; uvx takes both version forms)
    "uvx": re.compile(
        r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._,-]+\])?"
        r"((==|@)[0-9A-Za-z][0-9A-Za-z.+!_-]*)?"
    ),
}


class PackageDistribution(msgspec.Struct, frozen=True):
    """`npx` or `uvx`: a package (with an optional version) run by that tool."""

    package: str
    args: list[str] = []
    env: dict[str, str] = {}


class BinaryTarget(msgspec.Struct, frozen=True):
    """One platform's archive and the command to run from where it is extracted."""

    archive: str
    cmd: str
    args: list[str] = []
    env: dict[str, str] = {}
    sha256: str | None = None
    """Not in the registry's schema yet: checked when an entry (or a test's) carries one."""


class _Distribution(msgspec.Struct, frozen=True):
    npx: PackageDistribution | None = None
    uvx: PackageDistribution | None = None
    # Raw per platform, so one bad platform does not take the others down with it.
    binary: dict[str, msgspec.Raw] = {}


class _Entry(msgspec.Struct, frozen=True):
    id: str
    name: str
    version: str
    distribution: _Distribution
    description: str = ""
    repository: str | None = None
    license: str | None = None


class _Index(msgspec.Struct):
    version: str = ""
    agents: list[msgspec.Raw] = []


@dataclass(frozen=True, slots=True)
class RegistryAgent:
    """One agent listed in the registry."""

    id: str
    name: str
    version: str
    description: str = ""
    repository: str | None = None
    license: str | None = None
    npx: PackageDistribution | None = None
    uvx: PackageDistribution | None = None
    binary: dict[str, BinaryTarget] = field(default_factory=dict)
    """By platform (`linux-x86_64`, ...)."""

    @property
    def kinds(self) -> list[str]:
        """The distribution kinds acp-tui knows for this agent, in the order it prefers
        them: a binary needs nothing else installed, npx and uvx need Node or uv."""
        kinds = ["binary"] if self.binary else []
        return kinds + [kind for kind, _package in self.packages()]

    def packages(self) -> list[tuple[str, PackageDistribution]]:
        """The agent's packages by the tool that runs each (`npx`, `uvx`), npx first."""
        listed = (("npx", self.npx), ("uvx", self.uvx))
        return [(kind, package) for kind, package in listed if package is not None]


@dataclass(slots=True)
class RegistryIndex:
    """The agents of one index, and what was wrong with the entries left out."""

    version: str = ""
    agents: dict[str, RegistryAgent] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


_index_decoder = msgspec.json.Decoder(_Index)
_entry_decoder = msgspec.json.Decoder(_Entry)
_target_decoder = msgspec.json.Decoder(BinaryTarget)
_id_decoder = msgspec.json.Decoder(dict[str, object])


class IndexUnreadable(ValueError):
    """The index as a whole cannot be read (not JSON, or not the index's shape)."""


def decode_index(data: bytes) -> RegistryIndex:
    """The index in `data`; raises `IndexUnreadable` only when nothing of it can be read."""
    try:
        raw = _index_decoder.decode(data)
    except msgspec.DecodeError as error:
        raise IndexUnreadable(f"not a registry index: {error}") from None
    index = RegistryIndex(version=raw.version)
    for position, item in enumerate(raw.agents):
        try:
            entry = _entry_decoder.decode(item)
        except msgspec.DecodeError as error:
            index.problems.append(f"agent #{position + 1}{_id_of(item)}: {error}; skipped")
            continue
        if problem := _refuse(entry):
            index.problems.append(f"agent {entry.id!r}: {problem}; skipped")
            continue
        if entry.id in index.agents:
            index.problems.append(f"agent {entry.id!r}: listed twice; the first one is used")
            continue
        binary: dict[str, BinaryTarget] = {}
        for platform, target in entry.distribution.binary.items():
            try:
                binary[platform] = _target_decoder.decode(target)
            except msgspec.DecodeError as error:
                index.problems.append(f"agent {entry.id!r}, binary {platform}: {error}; skipped")
        index.agents[entry.id] = RegistryAgent(
            id=entry.id,
            name=entry.name,
            version=entry.version,
            description=entry.description,
            repository=entry.repository,
            license=entry.license,
            npx=entry.distribution.npx,
            uvx=entry.distribution.uvx,
            binary=binary,
        )
    return index


def _refuse(entry: _Entry) -> str | None:
    if not _ID.fullmatch(entry.id):
        return "its id is not lowercase letters, digits and hyphens"
    if not _VERSION.fullmatch(entry.version) or ".." in entry.version:
        return f"its version {entry.version!r} is not a plain version"
    for kind, package in (("npx", entry.distribution.npx), ("uvx", entry.distribution.uvx)):
        if package is not None and (problem := package_problem(kind, package.package)):
            return problem
    return None


def package_problem(kind: str, package: str) -> str | None:
    """Why `package` is not something `kind` (npx, uvx) may be given to run, or None."""
    if _PACKAGE[kind].fullmatch(package):
        return None
    return f"its {kind} package {package!r} is not a package name with an optional version"


def _id_of(item: msgspec.Raw) -> str:
    """` ('the-id')` when the broken entry at least has a string id, to name it."""
    try:
        value = _id_decoder.decode(item).get("id")
    except msgspec.DecodeError:
        return ""
    return f" ({value!r})" if isinstance(value, str) else ""
