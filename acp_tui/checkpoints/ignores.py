"""The ignore rules of a workspace's shadow repository: those git, rooted at the workspace,
would not read by itself (the user's `info/exclude`, the `.gitignore` files above the
workspace in its repository), rewritten relative to the workspace, and acp-tui's own files.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

DEFAULT_EXCLUDES = (
    "node_modules/",
    ".venv/",
    "__pycache__/",
    "*.pyc",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".DS_Store",
)
"""Left out of workspaces that are not in a git repository (which would have said so)."""

AGENT_STATE = (".fast-agent/sessions",)
"""Folders (in the workspace) where agents keep their own state: their sessions, and the lock
files they hold while they run. Never the user's work: left out of checkpoints, and never
rewound (`agent_state` in the config replaces the list)."""


def in_agent_state(path: str, folders: Sequence[str]) -> str | None:
    """The folder of `folders` that holds `path` (a path in the workspace), if any."""
    return next((f for f in folders if path == f or path.startswith(f + "/")), None)


def enclosing_repository(workspace: Path) -> tuple[Path, Path] | None:
    """`(work tree root, common git dir)` of the git repository holding `workspace`, found by
    looking for `.git` (a directory, or a file naming one) from it upwards."""
    for directory in (workspace, *workspace.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return directory, dot_git
        if dot_git.is_file():
            with contextlib.suppress(OSError, ValueError):
                text = dot_git.read_text(encoding="utf-8").strip()
                if text.startswith("gitdir:"):
                    git_dir = (directory / text[len("gitdir:") :].strip()).resolve()
                    common = git_dir / "commondir"
                    if common.is_file():
                        git_dir = (git_dir / common.read_text().strip()).resolve()
                    return directory, git_dir
            return None
    return None


def inherited_excludes(
    workspace: Path, own: Sequence[Path] = (), agent_state: Sequence[str] = ()
) -> str:
    """The shadow's `info/exclude`: the rules that apply to `workspace` but that git, rooted
    at it, would not read by itself (the user's `info/exclude`; the `.gitignore` files above
    the workspace in its repository), rewritten relative to the workspace; acp-tui's own
    files and directories `own`, when they are inside it (acp-tui run in the home
    directory, a transcript written in the workspace); and the agents' state folders."""
    lines = ["# written by acp-tui: what the workspace's repository ignores"]
    lines += [f"/{_escaped(folder)}/" for folder in agent_state]
    for path in own:
        real = Path(os.path.realpath(path))
        if real != workspace and real.is_relative_to(workspace):
            slash = "/" if real.is_dir() else ""
            lines.append(f"/{_escaped(real.relative_to(workspace).as_posix())}{slash}")
    repository = enclosing_repository(workspace)
    if repository is None:
        lines += DEFAULT_EXCLUDES
        return "\n".join(lines) + "\n"
    top, git_dir = repository
    sources = [(top, git_dir / "info" / "exclude")]
    sources += [(d, d / ".gitignore") for d in (top, *_between(top, workspace)) if d != workspace]
    for base, path in sources:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        prefix = workspace.relative_to(base).as_posix() if base != workspace else ""
        for line in text.splitlines():
            rule = _rebase(line, prefix)
            if rule is not None:
                lines.append(rule)
    return "\n".join(lines) + "\n"


def _escaped(path: str) -> str:
    """`path` as an ignore rule that matches it and nothing else."""
    return re.sub(r"([\\*?\[\]!# ])", r"\\\1", path)


def _between(top: Path, workspace: Path) -> list[Path]:
    """The directories strictly between `top` and `workspace`."""
    parts = workspace.relative_to(top).parts
    return [top.joinpath(*parts[:n]) for n in range(1, len(parts))]


def _rebase(line: str, prefix: str) -> str | None:
    """An ignore rule written in a directory `prefix` above the workspace, as a rule of the
    workspace (None: it cannot apply inside the workspace)."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    if not prefix:
        return stripped
    negate = "!" if stripped.startswith("!") else ""
    rule = stripped[len(negate) :]
    body = rule.rstrip("/")
    if "/" not in body:
        return stripped  # matches at any depth
    rule = rule.lstrip("/")
    if rule.startswith("**/"):
        return f"{negate}{rule}"
    if rule.startswith(prefix + "/"):
        return f"{negate}/{rule[len(prefix) + 1 :]}"
    return None
