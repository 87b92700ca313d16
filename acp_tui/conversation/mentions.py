"""`@path` mentions: the workspace's files for completion, and the blocks a prompt sends.

A mention of a workspace file goes to the agent as an embedded `resource` (its text) when the
agent accepts embedded context and the file is small UTF-8 text, an `image` when it is a picture
and the agent takes images, else as a `resource_link`. The prompt's text is sent as typed,
mentions included, so the agent sees where each belongs. A file outside the workspace (`../`,
an absolute path, a link out) is not sent, and the user is told so. A path with spaces is
mentioned in quotes: `@"my notes.md"`.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import msgspec

from acp_tui.conversation.attachments import image_from_file, looks_like_image
from acp_tui.protocol.content import ContentBlock, EmbeddedResource, text_block
from acp_tui.protocol.images import ImageError

FILE_LIMIT = 20_000
EMBED_LIMIT = 256 * 1024
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".tox", "dist"}
MENTION = re.compile(r'(?:^|(?<=\s))@(?:"([^"\n]+)"|(\S+))')
"""`@path`, or `@"a path"` for one with spaces."""


def mention(path: str) -> str:
    """How a prompt mentions `path` (what completing it inserts)."""
    return f'@"{path}"' if any(char.isspace() for char in path) else f"@{path}"


def workspace_files(root: Path, limit: int = FILE_LIMIT) -> list[str]:
    """Files under `root`, relative: what git tracks (and would track) when it is a
    repository, else a walk that skips the usual build and tool directories."""
    try:
        result = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if result.returncode == 0:
            return result.stdout.splitlines()[:limit]
    except (OSError, subprocess.SubprocessError):
        pass
    files: list[str] = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        base = Path(directory).relative_to(root)
        for name in sorted(names):
            files.append(str(base / name) if str(base) != "." else name)
            if len(files) >= limit:
                return files
    return files


def rank(files: list[str], query: str, limit: int = 50) -> list[str]:
    """Files matching `query`: name prefix first, then path substring, then subsequence."""
    if not query:
        return files[:limit]
    needle = query.lower()
    scored: list[tuple[int, int, str]] = []
    for path in files:
        lower = path.lower()
        name = lower.rsplit("/", 1)[-1]
        if name.startswith(needle):
            score = 0
        elif needle in lower:
            score = 1
        elif _subsequence(needle, lower):
            score = 2
        else:
            continue
        scored.append((score, len(path), path))
    scored.sort()
    return [path for _, _, path in scored[:limit]]


def _subsequence(needle: str, haystack: str) -> bool:
    position = 0
    for char in needle:
        position = haystack.find(char, position) + 1
        if position == 0:
            return False
    return True


NO_IMAGES = "This agent does not take images"


class PromptContent(msgspec.Struct):
    """What a prompt sends, and what the user should know about it (an image sent as a link)."""

    blocks: list[ContentBlock]
    problems: list[str] = msgspec.field(default_factory=list)


def mentioned_files(text: str, root: Path) -> Iterator[tuple[str, Path, bool]]:
    """Each file `text` mentions, once: its name as written, its path resolved, and whether it
    lies in the workspace `root` (a file outside is never sent)."""
    seen: set[Path] = set()
    inside = _resolved(root)
    for match in MENTION.finditer(text):
        quoted, bare = match.groups()
        relative = quoted or bare.rstrip(".,;:!?)")
        path = _mentioned_file(root, relative)
        if path is None or path in seen:
            continue
        seen.add(path)
        yield relative, path, inside is not None and path.is_relative_to(inside)


def mentioned_images(text: str, root: Path) -> list[tuple[str, Path]]:
    """The images `text` mentions in the workspace, which go with it as images (if the agent
    takes them): the TUI shows them as the prompt is written."""
    return [
        (name, path)
        for name, path, inside in mentioned_files(text, root)
        if inside and looks_like_image(path)
    ]


def prompt_blocks(text: str, root: Path, *, embed: bool, images: bool = False) -> PromptContent:
    """The content blocks for a prompt: its text, then one block per `@file` it mentions."""
    content = PromptContent([text_block(text)])
    for relative, path, inside in mentioned_files(text, root):
        if not inside:
            content.problems.append(f"{relative} is outside the workspace: not sent")
            continue
        block: ContentBlock | None = None
        if looks_like_image(path):
            if not images:
                content.problems.append(f"{NO_IMAGES}: {relative} is sent as a link")
            else:
                try:
                    block = image_from_file(path, relative).block
                except ImageError as error:
                    content.problems.append(f"{error}; it is sent as a link")
        content.blocks.append(block or _file_block(path, relative, embed=embed))
    return content


def _mentioned_file(root: Path, relative: str) -> Path | None:
    """The file `relative` names (from the workspace), resolved, or None: a mention of no file,
    or of one the system refuses to resolve (a name too long, a loop of links), is plain text.
    Whether it lies inside the workspace is the caller's to judge (`../`, absolute, a link
    out are not sent)."""
    path = _resolved(root / relative)
    try:
        return path if path is not None and path.is_file() else None
    except (OSError, ValueError):
        return None


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def _file_block(path: Path, name: str, *, embed: bool) -> ContentBlock:
    import mimetypes  # here: only a prompt that mentions a file needs it

    mime = mimetypes.guess_type(path.name)[0] or "text/plain"
    uri = path.as_uri()
    size = path.stat().st_size
    if embed and size <= EMBED_LIMIT:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            pass
        else:
            return ContentBlock(
                type="resource", resource=EmbeddedResource(uri=uri, text=text, mime_type=mime)
            )
    return ContentBlock(type="resource_link", uri=uri, name=name, mime_type=mime, size=size)
