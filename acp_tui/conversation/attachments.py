"""Images the user attaches to a prompt: from a file, a pasted path, or the clipboard.

Each becomes an ACP `image` block (base64 data, the MIME type sniffed from the bytes, the file's
URI when there is one), capped in size. What goes wrong is an `ImageError` whose message is for
the user as is. No Textual here: the headless mode attaches `@image.png` mentions too.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urlparse

import msgspec

from acp_tui.protocol.content import ContentBlock
from acp_tui.protocol.images import KNOWN_TYPES, ImageError, ImageInfo, inspect
from acp_tui.text import human_size

ATTACH_LIMIT = 5 * 1024 * 1024
"""Bytes an attached image may have: agents' own limits are about this (Claude's is 5 MB)."""
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
CLIPBOARD_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
CLIPBOARD_TIMEOUT = 3.0
PATH_LIMIT = 4096
"""Characters a pasted path may have (Linux's PATH_MAX): longer pastes are text."""


class Attachment(msgspec.Struct, frozen=True):
    """An image ready to send: its name, what it is, and the block that carries it.

    (A `msgspec.Struct`, as the other values on the start-up path: a dataclass is far slower
    to define than a Struct; bench/README.md, "Figures behind the code's choices".)"""

    name: str
    info: ImageInfo
    block: ContentBlock


def image_from_bytes(data: bytes, name: str, uri: str | None = None) -> Attachment:
    """An attachment of `data`, or an `ImageError` when it is too big or not an image."""
    _check_size(name, len(data))
    try:
        info = inspect(data)
    except ImageError as error:
        raise ImageError(f"{name} cannot be attached: {error}") from None
    encoded = base64.b64encode(data).decode("ascii")
    block = ContentBlock(type="image", data=encoded, mime_type=info.mime_type, uri=uri)
    return Attachment(name, info, block)


def image_from_file(path: Path, name: str | None = None) -> Attachment:
    """An attachment of the image file at `path`. No more than the limit is read: the file may
    grow while it is read, or be one whose size says nothing (a /proc file, a device)."""
    name = name or path.name
    try:
        with path.open("rb") as file:
            data = file.read(ATTACH_LIMIT + 1)
            size = os.fstat(file.fileno()).st_size
    except OSError as error:
        raise ImageError(f"{name} cannot be read: {error.strerror or error}") from None
    if len(data) > ATTACH_LIMIT:
        raise _too_large(name, size if size > ATTACH_LIMIT else None)
    return image_from_bytes(data, name, path.resolve().as_uri())


def _check_size(name: str, size: int) -> None:
    if size > ATTACH_LIMIT:
        raise _too_large(name, size)


def _too_large(name: str, size: int | None) -> ImageError:
    """`size` None: over the limit by how much is not known (only the limit was read)."""
    amount = human_size(size) if size is not None else f"over {human_size(ATTACH_LIMIT)}"
    return ImageError(f"{name} is {amount}: images are limited to {human_size(ATTACH_LIMIT)}")


def looks_like_image(path: Path) -> bool:
    """An image file by its name; its bytes decide later whether it really is one."""
    return path.suffix.lower() in IMAGE_SUFFIXES


def pasted_image_path(text: str, cwd: Path) -> Path | None:
    """The image file `text` names when it is exactly one path (as is, quoted or shell-escaped
    as file managers drop it, or a `file://` URI) to an existing file with an image's name."""
    text = text.strip()
    if not text or "\n" in text or len(text) > PATH_LIMIT:
        return None
    if text.startswith("file://"):
        from urllib.request import url2pathname  # only here: it imports all of http.client

        candidates = [url2pathname(unquote(urlparse(text).path))]
    else:
        candidates = [text]
        with contextlib.suppress(ValueError):
            words = shlex.split(text)
            if len(words) == 1 and words[0] != text:
                candidates.append(words[0])
    for candidate in candidates:
        path = Path(os.path.expanduser(candidate))
        if not path.is_absolute():
            path = cwd / path
        with contextlib.suppress(OSError):
            if looks_like_image(path) and path.is_file():
                return path
    return None


def clipboard_image() -> Attachment:
    """The image on the system clipboard (Wayland's wl-paste, X11's xclip, macOS's pngpaste).

    Terminals paste text only, so an image must be asked of the platform's clipboard tool.
    """
    if sys.platform == "darwin":
        if shutil.which("pngpaste") is None:
            raise ImageError(
                "No clipboard tool for images: install pngpaste (brew install pngpaste)"
            )
        return image_from_bytes(_run(["pngpaste", "-"]), "clipboard.png")
    if os.environ.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        types = _run(["wl-paste", "--list-types"]).decode(errors="replace").split()
        mime = _image_type(types)
        return _clipboard_bytes(["wl-paste", "--no-newline", "--type", mime], mime)
    if os.environ.get("DISPLAY") and shutil.which("xclip"):
        targets = _run(["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"])
        mime = _image_type(targets.decode(errors="replace").split())
        return _clipboard_bytes(["xclip", "-selection", "clipboard", "-t", mime, "-o"], mime)
    raise ImageError(
        "No clipboard tool for images here: install wl-clipboard (Wayland) or xclip (X11), "
        "or paste the image file's path instead"
    )


def _image_type(types: list[str]) -> str:
    for mime in CLIPBOARD_TYPES:
        if mime in types:
            return mime
    raise ImageError(f"The clipboard holds no image (a {KNOWN_TYPES} image can be pasted)")


def _clipboard_bytes(argv: list[str], mime: str) -> Attachment:
    return image_from_bytes(_run(argv), f"clipboard.{mime.removeprefix('image/')}")


def _run(argv: list[str]) -> bytes:
    """What the clipboard tool writes: no more than an image may have (the rest is refused
    unread, the tool killed), and no longer than `CLIPBOARD_TIMEOUT` (a tool that hangs, on a
    clipboard owner that does not answer, is killed too)."""
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    except OSError as error:
        raise ImageError(f"The clipboard could not be read ({argv[0]}: {error})") from None
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        process.kill()

    timer = threading.Timer(CLIPBOARD_TIMEOUT, expire)
    timer.start()
    try:
        with process.stdout:  # type: ignore[union-attr]
            output = process.stdout.read(ATTACH_LIMIT + 1)  # type: ignore[union-attr]
            if len(output) > ATTACH_LIMIT:
                process.kill()
        returncode = process.wait()
    finally:
        timer.cancel()
    if len(output) > ATTACH_LIMIT:
        raise _too_large("The clipboard's image", None)
    if expired.is_set():
        raise ImageError(
            f"The clipboard could not be read ({argv[0]} did not answer in {CLIPBOARD_TIMEOUT:g} s)"
        )
    if returncode != 0 or not output:
        raise ImageError("The clipboard holds no image")
    return output
