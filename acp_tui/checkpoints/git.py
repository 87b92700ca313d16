"""Running `git` on the shadow repository, and only there.

Every command gets an environment of its own: `GIT_DIR` (the shadow repository in acp-tui's
data directory), `GIT_WORK_TREE` (the workspace) and `GIT_INDEX_FILE` (the shadow's private
index), with every other `GIT_*` variable of the caller dropped, so nothing can point git at
the user's repository. The user's system and global config are not read either (a filter,
`core.autocrlf` or an fsmonitor hook there would change what is stored, or run programs);
only their global ignore file is kept, since it says what they never want copied.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from acp_tui.paths import config_dir

IDENTITY = {
    "GIT_AUTHOR_NAME": "acp-tui",
    "GIT_AUTHOR_EMAIL": "acp-tui@localhost",
    "GIT_COMMITTER_NAME": "acp-tui",
    "GIT_COMMITTER_EMAIL": "acp-tui@localhost",
}
SETTINGS = (
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.fsmonitor=false",
    "core.quotePath=false",
    "core.preloadIndex=true",
    "core.untrackedCache=false",
    "gc.auto=0",
    "diff.renames=false",
    "diff.noprefix=false",
    "color.ui=false",
)
"""Set on every command line, so the shadow behaves the same whatever the user configured."""


class GitMissing(Exception):
    """There is no `git` to run: checkpoints are off."""


class GitFailed(Exception):
    """A git command failed: its command line and what it said."""

    def __init__(self, args: Sequence[str], status: int, stderr: str) -> None:
        super().__init__(f"git {' '.join(args[:2])} failed ({status}): {stderr.strip()[:500]}")
        self.status = status
        self.stderr = stderr


def find_git() -> str:
    """The path of `git` on PATH; `GitMissing` if there is none."""
    path = shutil.which("git")
    if path is None:
        raise GitMissing("git was not found on PATH")
    return path


def user_excludes_file() -> Path | None:
    """The user's global ignore file (`core.excludesFile`, else git's default place), if it
    exists: read without the shadow's environment, as the user's own git would find it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        result = subprocess.run(
            [find_git(), "config", "--global", "--path", "core.excludesFile"],
            capture_output=True,
            env=env,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, GitMissing):
        return None
    configured = result.stdout.decode("utf-8", "replace").strip()
    # Unset, git reads $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore): beside our config.
    path = Path(configured).expanduser() if configured else config_dir().parent / "git" / "ignore"
    return path if path.is_file() else None


class Git:
    """`git` on one shadow repository and one work tree."""

    def __init__(self, git_dir: Path, work_tree: Path, *, excludes_file: Path | None) -> None:
        self.executable = find_git()
        self.git_dir = git_dir
        self.work_tree = work_tree
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(IDENTITY)
        env.update(
            GIT_DIR=str(git_dir),
            GIT_WORK_TREE=str(work_tree),
            GIT_INDEX_FILE=str(git_dir / "index"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
            LC_ALL="C",
        )
        self.env: Mapping[str, str] = env
        settings = list(SETTINGS)
        if excludes_file is not None:
            settings.append(f"core.excludesFile={excludes_file}")
        self.stopped = False
        self._running: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._prefix = [self.executable]
        for setting in settings:
            self._prefix += ["-c", setting]

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        ok: Collection[int] = (0,),
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> bytes:
        """Run `git ARGS` in the work tree (or `cwd`); its stdout. `GitFailed` when it exits
        with a status not in `ok` (unless `check` is false)."""
        if self.stopped:
            raise GitFailed(args, -1, "acp-tui is closing")
        process = subprocess.Popen(
            [*self._prefix, *args],
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd or self.work_tree,
            env={**self.env, **env} if env else self.env,
        )
        with self._lock:
            self._running.add(process)
        try:
            stdout, stderr = process.communicate(input)
        finally:
            with self._lock:
                self._running.discard(process)
        if check and process.returncode not in ok:
            raise GitFailed(args, process.returncode, stderr.decode("utf-8", "replace"))
        return stdout

    def stop(self) -> None:
        """Kill the git commands running (acp-tui is quitting: a first checkpoint of a big
        workspace must not hold it up), and run no more."""
        self.stopped = True
        with self._lock:
            running = list(self._running)
        for process in running:
            with contextlib.suppress(OSError):
                process.kill()

    def init(self) -> None:
        """Create the shadow repository (bare: its work tree is given on each command)."""
        env = {k: v for k, v in self.env.items() if k not in ("GIT_WORK_TREE", "GIT_DIR")}
        result = subprocess.run(
            [*self._prefix, "init", "--quiet", "--bare", str(self.git_dir)],
            capture_output=True,
            env=env,
            check=False,
        )
        if result.returncode != 0:
            stderr = result.stderr.decode("utf-8", "replace")
            raise GitFailed(("init", "--bare"), result.returncode, stderr)

    def text(self, *args: str, input: bytes | None = None) -> str:
        return self.run(*args, input=input).decode("utf-8", "surrogateescape").strip()
