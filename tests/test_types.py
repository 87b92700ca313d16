"""The core is typed strictly: mypy, as pyproject.toml configures it (strict on protocol,
transport, session, services, conversation and workspace), finds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parent.parent


def test_the_core_type_checks_strictly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the config names its files from the project's root
    report, errors, status = api.run(["--cache-dir", str(tmp_path / "mypy")])
    assert status == 0, report + errors
    assert report.startswith("Success")
