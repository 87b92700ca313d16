"""Images as bytes (`acp_tui.protocol.images`) and as attachments (`conversation.attachments`):
types from magic numbers, sizes from headers, the size cap, pasted paths and the clipboard.

The sample images are written by Pillow (textual-image's own dependency), so the header reader
is checked against an encoder it shares nothing with.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import stat
import struct
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from acp_tui.conversation import attachments
from acp_tui.conversation.attachments import (
    ATTACH_LIMIT,
    clipboard_image,
    image_from_bytes,
    image_from_file,
    pasted_image_path,
)
from acp_tui.conversation.mentions import prompt_blocks
from acp_tui.demo.picture import demo_png
from acp_tui.protocol.content import (
    ContentBlock,
    EmbeddedResource,
    block_label,
    image_data,
    text_block,
)
from acp_tui.protocol.images import (
    ImageError,
    ImageInfo,
    decode_data,
    decoded_size,
    dimensions,
    inspect,
    inspect_data,
    sniff_mime,
    too_large_to_show,
)
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission
from acp_tui.session.state import SessionState
from acp_tui.ui.render.pictures import load_picture
from tests.support.schema import validate_transcript


def encoded(fmt: str, size: tuple[int, int] = (123, 45), **options: object) -> bytes:
    mode = "RGBA" if options.pop("alpha", False) else "RGB"
    picture = Image.new(mode, size, (200, 80, 20))
    out = io.BytesIO()
    picture.save(out, fmt, **options)
    return out.getvalue()


def jpeg_with_exif() -> bytes:
    exif = Image.Exif()
    exif[0x010E] = "a description long enough to push the frame header along " * 40
    return encoded("JPEG", exif=exif.tobytes())


SAMPLES = {
    "png": ("image/png", encoded("PNG")),
    "jpeg": ("image/jpeg", encoded("JPEG")),
    "jpeg-exif": ("image/jpeg", jpeg_with_exif()),
    "progressive-jpeg": ("image/jpeg", encoded("JPEG", progressive=True)),
    "gif": ("image/gif", encoded("GIF")),
    "webp-lossy": ("image/webp", encoded("WEBP")),
    "webp-lossless": ("image/webp", encoded("WEBP", lossless=True)),
    "webp-extended": ("image/webp", encoded("WEBP", alpha=True, exif=b"Exif\0\0" + b"x" * 40)),
}


@pytest.mark.parametrize("name", SAMPLES)
def test_type_and_size_come_from_the_bytes(name: str) -> None:
    mime, data = SAMPLES[name]
    assert sniff_mime(data) == mime
    assert dimensions(data) == (123, 45)
    info = inspect(data)
    assert (info.mime_type, info.width, info.height, info.size) == (mime, 123, 45, len(data))


def test_the_webp_samples_cover_its_three_kinds_of_header() -> None:
    chunks = {SAMPLES[name][1][12:16] for name in SAMPLES if name.startswith("webp")}
    assert chunks == {b"VP8 ", b"VP8L", b"VP8X"}


@pytest.mark.parametrize("name", SAMPLES)
def test_cut_short_headers_give_no_size_never_an_error(name: str) -> None:
    _, data = SAMPLES[name]
    for end in range(len(data) if name == "jpeg-exif" else min(len(data), 400)):
        size = dimensions(data[:end])
        assert size in (None, (123, 45))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF89a", b"RIFF\0\0\0\0WEBP"]))
def test_bogus_bytes_after_a_magic_number_never_crash(magic: bytes) -> None:
    for tail in (b"", b"\0" * 40, b"\xff" * 40, os.urandom(64), b"VP8 " + os.urandom(30)):
        data = magic + tail
        try:
            info = inspect(data)
        except ImageError as error:
            assert "header is damaged" in str(error)
        else:
            assert info.width > 0 and info.height > 0


def test_what_is_not_an_image_is_refused_with_a_reason() -> None:
    with pytest.raises(ImageError, match=r"not a PNG, JPEG, GIF or WebP image"):
        inspect(b"BM\x00\x00 a bitmap")
    with pytest.raises(ImageError, match="not valid base64"):
        decode_data("not base64!")
    huge = inspect(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + (50_000).to_bytes(4) + (50_000).to_bytes(4))
    assert "50000×50000 pixels" in (too_large_to_show(huge) or "")  # noqa: RUF001
    assert too_large_to_show(inspect(SAMPLES["png"][1])) is None


def test_attachments_are_capped_and_typed_by_their_bytes(tmp_path: Path) -> None:
    png = SAMPLES["png"][1]
    renamed = tmp_path / "actually-a-png.jpg"
    renamed.write_bytes(png)
    attachment = image_from_file(renamed)
    block = attachment.block
    assert (block.type, block.mime_type, block.uri) == ("image", "image/png", renamed.as_uri())
    assert base64.b64decode(block.data) == png  # type: ignore[arg-type]
    assert block_label(block) == f"image · actually-a-png.jpg · image/png · 123×45 · {len(png)} B"  # noqa: RUF001

    big = tmp_path / "big.png"
    big.write_bytes(png + b"\0" * ATTACH_LIMIT)
    with pytest.raises(ImageError, match=r"big\.png is 5\.0 MB: images are limited to 5\.0 MB"):
        image_from_file(big)
    with pytest.raises(ImageError, match=r"notes\.png cannot be attached: not a PNG"):
        image_from_bytes(b"just text", "notes.png")
    with pytest.raises(ImageError, match=r"gone\.png cannot be read"):
        image_from_file(tmp_path / "gone.png")


def test_the_label_of_a_broken_image_says_what_is_wrong() -> None:
    def label(data: str) -> str:
        return block_label(ContentBlock(type="image", data=data, mime_type="image/png"))

    assert label("@@@") == "image · image/png · broken image: its data is not valid base64"
    assert label(base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()) == (
        "image · image/png · broken image: its PNG header is damaged"
    )
    resource = EmbeddedResource(
        uri="file:///tmp/logo.png",
        blob=base64.b64encode(demo_png()).decode(),
        mime_type="image/png",
    )
    assert block_label(ContentBlock(type="resource", resource=resource)).startswith(
        "image · logo.png · image/png · 96×64 · "  # noqa: RUF001
    )


# -- bytes from an agent: never a crash, never a stall ----------------------------------------


def test_a_png_pillow_calls_a_syntax_error_is_a_broken_image() -> None:
    damaged = bytearray(demo_png())
    damaged[36] ^= 0x55  # IDAT's length: Pillow raises SyntaxError("broken PNG file ...")
    with pytest.raises(ImageError, match=r"^broken image: broken PNG file"):
        load_picture(base64.b64encode(damaged).decode(), "halfcell")


@settings(max_examples=60, deadline=None)
@given(
    flips=st.lists(
        # Anywhere, and often in the first IDAT chunk's length and type, which Pillow checks.
        st.tuples(st.integers(0, len(demo_png()) - 1) | st.integers(33, 40), st.integers(1, 255)),
        min_size=1,
        max_size=4,
    )
)
def test_flipped_bytes_give_a_picture_or_an_image_error_never_another_error(
    flips: list[tuple[int, int]],
) -> None:
    damaged = bytearray(demo_png())
    for index, mask in flips:
        damaged[index] ^= mask
    with contextlib.suppress(ImageError):
        load_picture(base64.b64encode(damaged).decode(), "halfcell")


def test_a_gif_frame_larger_than_its_screen_is_held_to_the_pixel_limit() -> None:
    # A 1 by 1 logical screen, which the header reader sees, around an 8000 by 6000 first
    # frame, which Pillow would decode.
    screen = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0, 0, 0)
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 8000, 6000, 0) + b"\x02\x02\x44\x01\x00"
    gif = base64.b64encode(screen + frame + b"\x3b").decode()
    assert inspect_data(gif).pixels == "1×1"  # noqa: RUF001
    with pytest.raises(ImageError, match=r"too large to show: 8000×6000 pixels"):  # noqa: RUF001
        load_picture(gif, "halfcell")


def test_base64_wrapped_over_lines_is_read() -> None:
    png = demo_png()
    wrapped = base64.encodebytes(png).decode()  # 76 columns, as MIME wraps it
    assert "\n" in wrapped
    assert decode_data(wrapped) == png
    assert decode_data(wrapped.replace("\n", "\r\n ")) == png
    assert inspect_data(wrapped) == inspect(png)
    assert load_picture(wrapped, "halfcell").image.size == (96, 64)


@pytest.mark.parametrize("length", range(7))
def test_the_size_comes_from_the_base64_length(length: int) -> None:
    data = base64.b64encode(bytes(range(length))).decode()
    assert decoded_size(data) == length
    assert decoded_size("\n".join(data) + "\n") == length
    with pytest.raises(ImageError, match="not valid base64"):
        decoded_size(data + "A")


def test_a_label_decodes_only_the_header_and_keeps_nothing() -> None:
    png = demo_png()
    # An image longer than the prefix read for its header, then a megabyte of what is not
    # base64 at all.
    head = base64.b64encode(png + bytes(60_000)).decode()
    data = head + "!" * 1024 * 1024
    before = sys.getrefcount(data)
    assert inspect_data(data) == ImageInfo("image/png", 96, 64, decoded_size(data))
    assert sys.getrefcount(data) == before  # no cache holds the string
    with pytest.raises(ImageError, match="not valid base64"):
        decode_data(data)  # the whole decode, when drawn, finds it broken

    # Decoded pictures are kept by a digest of their data, not by the data.
    encoded_png = base64.b64encode(png).decode()
    before = sys.getrefcount(encoded_png)
    picture = load_picture(encoded_png, "halfcell")
    assert sys.getrefcount(encoded_png) == before
    assert load_picture(base64.b64encode(png).decode(), "halfcell") is picture


def test_an_attached_file_is_read_no_further_than_the_limit() -> None:
    # A pipe: its size says 0, and it holds more than an image may have.
    read_end, write_end = os.pipe()

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), os.fdopen(write_end, "wb") as out:
            out.write(SAMPLES["png"][1] + bytes(ATTACH_LIMIT))

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        with pytest.raises(ImageError, match=r"^stream\.png is over 5\.0 MB: images are limited"):
            image_from_file(Path(f"/dev/fd/{read_end}"), "stream.png")
    finally:
        os.close(read_end)
        writer.join()


def test_the_clipboard_tool_is_read_no_further_than_the_limit_nor_waited_for_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(attachments, "CLIPBOARD_TIMEOUT", 0.5)
    targets = 'case "$*" in *TARGETS*) echo image/png; exit;; esac'
    fake_tool(tools, "xclip", f"{targets}\nhead -c {ATTACH_LIMIT + 1000} /dev/zero\nexec sleep 9")
    with pytest.raises(ImageError, match=r"^The clipboard's image is over 5\.0 MB"):
        clipboard_image()
    fake_tool(tools, "xclip", f"{targets}\nexec sleep 9")
    with pytest.raises(ImageError, match=r"could not be read \(xclip did not answer in 0\.5 s\)"):
        clipboard_image()


def test_a_pasted_path_is_an_image_only_when_it_is_exactly_one_image_file(
    tmp_path: Path,
) -> None:
    spaced = tmp_path / "my cat.png"
    spaced.write_bytes(SAMPLES["png"][1])
    (tmp_path / "notes.txt").write_text("hi")
    for pasted in (
        str(spaced),
        f"'{spaced}'",
        f'"{spaced}"\n',
        str(spaced).replace(" ", "\\ "),
        spaced.as_uri(),
        "my\\ cat.png",  # relative to the workspace
    ):
        assert pasted_image_path(pasted, tmp_path) == spaced, pasted
    for pasted in (
        "notes.txt",
        "missing.png",
        f"{spaced} {spaced}",
        f"{spaced}\n{spaced}",
        "look at this",
        "'unbalanced",
        "",
    ):
        assert pasted_image_path(pasted, tmp_path) is None, pasted


def fake_tool(directory: Path, name: str, script: str) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\nPATH=/usr/bin:/bin\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_the_clipboard_image_comes_from_the_platform_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    png = tmp_path / "clip.png"
    png.write_bytes(SAMPLES["png"][1])
    tools = tmp_path / "bin"
    tools.mkdir()
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(ImageError, match=r"install wl-clipboard .* or xclip"):
        clipboard_image()

    monkeypatch.setenv("DISPLAY", ":0")
    fake_tool(
        tools,
        "xclip",
        f'case "$*" in *TARGETS*) printf "TARGETS\\nimage/png\\ntext/plain\\n";; '
        f'*image/png*) cat "{png}";; esac',
    )
    attachment = clipboard_image()
    assert (attachment.name, attachment.info.pixels) == ("clipboard.png", "123×45")  # noqa: RUF001

    fake_tool(tools, "xclip", 'printf "TARGETS\\ntext/plain\\n"')
    with pytest.raises(ImageError, match="The clipboard holds no image"):
        clipboard_image()


# -- the demo agent's image scenario, through acp-tui's client over real pipes ----------------

DEMO = [sys.executable, "-m", "acp_tui.demo", "--speed", "0"]


async def reject(pending: PendingPermission) -> None:
    pending.select("reject_once")  # the image scenario asks nothing


def agent_images(state: SessionState) -> list[ImageInfo]:
    """What the agent's pictures are: in its messages and in its tool calls' content (images,
    and resources whose blob is one)."""
    blocks = [b for m in state.messages.values() if m.role == "agent" for b in m.content]
    blocks += [c.content for call in state.tool_calls.values() for c in call.content]
    pictures = [image_data(b) for b in blocks if isinstance(b, ContentBlock)]
    return [inspect(decode_data(picture[0])) for picture in pictures if picture is not None]


@pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
async def test_the_demo_agent_describes_an_image_prompt_and_sends_one_back(
    tmp_path: Path, version: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "cat.jpg").write_bytes(SAMPLES["jpeg-exif"][1])
    transcript = tmp_path / "transcript.jsonl"
    options = ClientOptions(cwd=workspace, transcript=transcript, protocol_version=version)
    client = AgentClient(DEMO, options, decide_permission=reject)
    try:
        await client.start()
        assert client.info.supports("image")
        session = await client.new_session()
        content = prompt_blocks("what is in @cat.jpg?", workspace, embed=True, images=True)
        assert content.problems == []
        assert await session.prompt(content.blocks) == "end_turn"
        [said] = [m.text for m in session.state.messages.values() if m.role == "agent"][:1]
        assert "**cat.jpg**: a JPEG image, **123×45** pixels" in said  # noqa: RUF001
        pixels = [info.pixels for info in agent_images(session.state)]
        assert sorted(pixels) == ["24×16", "96×64"]  # noqa: RUF001
        [user] = [m for m in session.state.messages.values() if m.role == "user"]
        assert "image · cat.jpg · image/jpeg · 123×45" in block_label(user.content[-1])  # noqa: RUF001
        # The trigger word alone: no image sent, one comes back all the same.
        assert await session.prompt([text_block("image")]) == "end_turn"
        assert len(agent_images(session.state)) == 4

        reopened_client = AgentClient(DEMO, options, decide_permission=reject)
        try:
            await reopened_client.start()
            reopened = await reopened_client.open_session(session.id)
            assert len(agent_images(reopened.state)) == 4  # the pictures replay too
        finally:
            await reopened_client.close()
    finally:
        await client.close()
    assert validate_transcript(transcript, version=version, sender="client") > 0
    assert validate_transcript(transcript, version=version, sender="agent") > 0
