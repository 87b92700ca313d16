"""Versions in the order people (and semver) count them."""

from __future__ import annotations

import re

_PART = re.compile(r"\d+|[^\d.+_-]+")

Parts = tuple[tuple[int, int | str], ...]


def version_key(version: str) -> tuple[Parts, int, Parts]:
    """Orders versions as people do: `9.0` before `10.0`, `1.2` before `1.10`, and a
    pre-release before its release (`1.0.0-rc.1` before `1.0.0`, semver's rule); build
    metadata (`+...`) is left out. Runs of digits compare as numbers, anything else as text,
    and a number sorts before text."""
    core, _, pre = version.split("+", 1)[0].partition("-")
    return _parts(core), 0 if pre else 1, _parts(pre)


def _parts(text: str) -> Parts:
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _PART.findall(text))
