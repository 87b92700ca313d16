"""Images in the TUI, on the real demo agent: attached by pasting a path, shown as chips in the
user's message, the agent's pictures in the transcript (chips on a headless screen, a broken
one saying why), drawn with half blocks when asked, and an agent that takes no images."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import msgspec
import pytest
from textual import events
from textual.widget import Widget

from acp_tui.conversation.attachments import image_from_file
from acp_tui.conversation.mentions import NO_IMAGES
from acp_tui.demo.picture import demo_png
from acp_tui.protocol.content import ContentBlock
from acp_tui.protocol.updates import decode_session_notification
from acp_tui.session.state import Message
from acp_tui.ui.app import AcpApp
from acp_tui.ui.render.pictures import picture_mode
from acp_tui.ui.widgets.attachment_bar import AttachmentBar
from acp_tui.ui.widgets.image_view import ImageView
from acp_tui.ui.widgets.message import AgentMessage, UserMessage
from acp_tui.ui.widgets.prompt_input import PromptInput
from acp_tui.ui.widgets.strips_view import StripsView
from acp_tui.ui.widgets.tool_call import ToolCallCard
from tests.support import external_agents
from tests.support.pilot import demo_app, demo_workspace, wait_idle, wait_started, wait_until
from tests.support.ui import started_app
from tests.ui.test_conversations import two_conversations

CAT = demo_png(64, 40)


def shown(widget: Widget) -> str:
    """The text on screen in `widget`'s line-drawn parts."""
    views = [widget] if isinstance(widget, StripsView) else list(widget.query(StripsView))
    return "\n".join(
        view.render_line(y).text.rstrip() for view in views for y in range(view.size.height)
    )


def image_block(data: bytes) -> dict[str, str]:
    return {"type": "image", "mimeType": "image/png", "data": base64.b64encode(data).decode()}


def apply_update(app: AcpApp, kind: str, content: dict[str, str]) -> None:
    """The agent's update as the connection would hand it over, each a message of its own."""
    assert app.session is not None
    update = {"sessionUpdate": kind, "messageId": f"m{time.monotonic_ns()}", "content": content}
    params = msgspec.json.encode({"sessionId": app.session.id, "update": update})
    app.session.apply(decode_session_notification(params)[1])


def paste(app: AcpApp, text: str) -> None:
    app.chat.query_one(PromptInput).post_message(events.Paste(text))


async def test_a_pasted_image_path_is_attached_sent_and_answered(tmp_path: Path) -> None:
    async with started_app(tmp_path) as (app, pilot):
        cat = tmp_path / "workspace" / "cat.png"
        cat.write_bytes(CAT)
        prompt = app.chat.query_one(PromptInput)
        bar = app.chat.query_one(AttachmentBar)
        paste(app, f"'{cat}'")
        chip = "▣ image cat.png · image/png · 64×40 · 5.7 KB"  # noqa: RUF001
        await wait_until(pilot, lambda: chip in shown(bar))
        assert prompt.text == ""  # attached, not pasted as text

        # Backspace on the empty prompt takes it away; pasted again, it goes with the prompt.
        await pilot.press("backspace")
        assert not bar.attachments and not bar.display
        paste(app, cat.as_uri())
        await wait_until(pilot, lambda: bar.attachments)
        await pilot.press(*"what is this?", "enter")
        await wait_idle(app, pilot)
        assert not bar.attachments

        [user] = app.chat.query(UserMessage)
        assert "what is this?" in shown(user) and chip in shown(user)
        answer = "\n".join(shown(message) for message in app.chat.query(AgentMessage))
        assert "cat.png: a PNG image, 64×40 pixels" in answer  # noqa: RUF001
        # Headless, the agent's pictures are chips: in its message, and in its tool call (an
        # embedded resource).
        assert "▣ image image/png · 96×64" in answer  # noqa: RUF001
        thumbnail = "▣ image rainbow-thumbnail.png · image/png · 24×16"  # noqa: RUF001
        assert thumbnail in shown(app.chat.query_one(ToolCallCard))
        assert not any(view.drawn for view in app.chat.query(ImageView))

        # Pasted and @mentioned too, the image goes once.
        paste(app, str(cat))
        await wait_until(pilot, lambda: bar.attachments)
        prompt.set_text("and @cat.png?")
        await pilot.press("enter")
        await wait_idle(app, pilot)
        assert app.session is not None
        last = [m for m in app.session.state.messages.values() if m.role == "user"][-1]
        assert [block.type for block in last.content] == ["text", "image"]


async def test_a_mentioned_image_shows_its_chip_as_the_prompt_is_written(tmp_path: Path) -> None:
    """`@cat.png` typed shows the chip a pasted path would, before anything is sent; it goes
    when the mention does, and a mention of an image too large says it goes as a link."""
    async with started_app(tmp_path) as (app, pilot):
        workspace = tmp_path / "workspace"
        (workspace / "cat.png").write_bytes(CAT)
        (workspace / "huge.png").write_bytes(CAT + bytes(6 * 1024 * 1024))
        prompt = app.chat.query_one(PromptInput)
        bar = app.chat.query_one(AttachmentBar)
        prompt.set_text("what is in @cat.png?")
        chip = "▣ image cat.png · image/png · 64×40 · 5.7 KB  @cat.png"  # noqa: RUF001
        await wait_until(pilot, lambda: chip in shown(bar))
        assert not bar.attachments  # it goes as the mention, not as an attachment too
        prompt.set_text("what is in it?")
        await wait_until(pilot, lambda: not bar.display)
        prompt.set_text("@huge.png or @cat.png?")
        await wait_until(pilot, lambda: chip in shown(bar))
        assert "▣ image  huge.png is 6.0 MB: images are limited to 5.0 MB; it goes as a link" in (
            shown(bar)
        )
        await pilot.press("enter")
        await wait_idle(app, pilot)
        assert not bar.display
        assert app.session is not None
        [user] = [m for m in app.session.state.messages.values() if m.role == "user"]
        assert [block.type for block in user.content] == ["text", "resource_link", "image"]


async def test_a_broken_or_huge_image_from_the_agent_is_a_chip_that_says_why(
    tmp_path: Path,
) -> None:
    huge = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + (30_000).to_bytes(4) + (20_000).to_bytes(4)
    async with started_app(tmp_path) as (app, pilot):
        assert app.session is not None
        broken = {"type": "image", "mimeType": "image/png", "data": "not base64 at all!"}
        apply_update(app, "agent_message_chunk", broken)
        apply_update(app, "agent_message_chunk", image_block(huge))
        await wait_until(pilot, lambda: len(app.chat.query(ImageView)) == 2)
        await pilot.pause()
        broken, too_big = (shown(view) for view in app.chat.query(ImageView))
        assert "broken image: its data is not valid base64" in broken
        assert "too large to show: 30000×20000 pixels" in too_big  # noqa: RUF001


async def test_a_block_shown_again_for_another_message_drops_the_pictures_it_had(
    tmp_path: Path,
) -> None:
    async with started_app(tmp_path) as (app, pilot):
        assert app.session is not None
        apply_update(app, "agent_message_chunk", image_block(CAT))
        await wait_until(pilot, lambda: len(app.chat.query(ImageView)) == 1)
        block = app.chat.query_one(ImageView).parent
        assert isinstance(block, AgentMessage)
        plain = Message("other", "agent", 1, [ContentBlock(type="text", text="just words")])
        block.rebind(plain)  # what the transcript does with a released block
        await pilot.pause()
        assert not app.chat.query(ImageView)
        assert block.text() == "just words"


async def test_pictures_are_drawn_with_half_blocks_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACP_TUI_IMAGES", "halfcell")
    async with started_app(tmp_path) as (app, pilot):
        await pilot.press(*"image", "enter")
        await wait_idle(app, pilot)
        views = list(app.chat.query(ImageView))
        assert len(views) == 2
        await wait_until(pilot, lambda: all(view.drawn for view in views))
        await pilot.pause()
        for view in views:
            assert 4 <= view.size.height <= 12
            assert "▣ image" not in shown(view)  # the picture took the chip's place

        # A header that reads well over data that does not: a chip, once Pillow has tried.
        damaged = CAT[:40] + bytes(200)
        apply_update(app, "agent_message_chunk", image_block(damaged))
        await wait_until(pilot, lambda: len(app.chat.query(ImageView)) == 3)
        broken = list(app.chat.query(ImageView))[-1]
        await wait_until(pilot, lambda: broken.note is not None)
        await pilot.pause()
        assert not broken.drawn
        assert "▣ image image/png · 64×40 · 240 B  broken image: " in shown(broken)  # noqa: RUF001

        # One Pillow refuses with a SyntaxError (IDAT's length damaged): a chip, the app runs on.
        syntax_error = bytearray(CAT)
        syntax_error[36] ^= 0x55
        apply_update(app, "agent_message_chunk", image_block(bytes(syntax_error)))
        await wait_until(pilot, lambda: len(app.chat.query(ImageView)) == 4)
        broken = list(app.chat.query(ImageView))[-1]
        await wait_until(pilot, lambda: broken.note is not None)
        assert broken.note is not None and broken.note.startswith("broken image: broken PNG file")
        assert app.is_running


async def test_an_agent_without_images_gets_the_text_and_the_user_is_told(
    tmp_path: Path,
) -> None:
    workspace = demo_workspace(tmp_path / "workspace")
    cat = workspace / "cat.png"
    cat.write_bytes(CAT)
    app = demo_app(workspace, tmp_path / "state", argv=external_agents.python_sdk_echo_agent())
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_started(app, pilot)
        prompt = app.chat.query_one(PromptInput)
        paste(app, str(cat))
        await wait_until(pilot, lambda: prompt.text == str(cat))
        assert not app.chat.query_one(AttachmentBar).attachments
        notices = [str(n.message) for n in app._notifications]
        assert any("This agent does not take images" in notice for notice in notices)

        prompt.set_text("look at @cat.png")
        bar = app.chat.query_one(AttachmentBar)
        await wait_until(pilot, lambda: f"{NO_IMAGES}: it goes as a link" in shown(bar))
        await pilot.press("enter")
        await wait_idle(app, pilot)
        assert app.session is not None
        titles = [getattr(item, "title", "") for item in app.session.state.timeline]
        assert "This agent does not take images: cat.png is sent as a link" in titles
        [user] = [m for m in app.session.state.messages.values() if m.role == "user"]
        assert [block.type for block in user.content] == ["text", "resource_link"]

        # An image attached before the agent said it takes none, sent on its own: nothing goes
        # (it would be an empty text); the image is back in the draft, and the user is told.
        app.chat.attach_image(image_from_file(cat))
        await pilot.press("enter")
        await wait_until(pilot, lambda: bar.attachments)
        await wait_idle(app, pilot)
        assert [attachment.name for attachment in bar.attachments] == ["cat.png"]
        titles = [getattr(item, "title", "") for item in app.session.state.timeline]
        assert f"{NO_IMAGES}: cat.png not sent, kept in the draft" in titles
        assert len([m for m in app.session.state.messages.values() if m.role == "user"]) == 1


async def test_alt_v_attaches_the_clipboard_image_or_says_why_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    clip = tmp_path / "clip.png"
    clip.write_bytes(CAT)
    async with started_app(tmp_path) as (app, pilot):
        monkeypatch.setenv("PATH", str(tools))
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        monkeypatch.setenv("DISPLAY", ":0")
        prompt = app.chat.query_one(PromptInput)
        bar = app.chat.query_one(AttachmentBar)

        def alt_v() -> None:
            # As a terminal sends it: the key with its character, which the prompt would type.
            app.post_message(events.Key("alt+v", "v"))

        alt_v()
        await wait_until(pilot, lambda: app._notifications)
        notices = [str(n.message) for n in app._notifications]
        assert notices[-1].startswith("No clipboard tool for images here: install wl-clipboard")
        assert prompt.text == "" and not bar.attachments

        script = f'case "$*" in *TARGETS*) echo image/png;; *) /bin/cat "{clip}";; esac'
        (tools / "xclip").write_text(f"#!/bin/sh\n{script}\n")
        (tools / "xclip").chmod(0o755)
        alt_v()
        # The bar draws its chip on its next refresh, after the attachment is set.
        await wait_until(pilot, lambda: "▣ image image/png · 64×40" in shown(bar))  # noqa: RUF001
        assert len(bar.attachments) == 1  # no file, no name
        assert prompt.text == ""

        await pilot.press("enter")  # the image on its own
        await wait_idle(app, pilot)
        assert app.session is not None
        [user] = [m for m in app.session.state.messages.values() if m.role == "user"]
        assert [block.type for block in user.content] == ["image"]
        assert "a PNG image, **64×40** pixels" in "".join(  # noqa: RUF001
            m.text for m in app.session.state.messages.values() if m.role == "agent"
        )


async def test_closing_the_conversation_while_the_clipboard_is_read_is_no_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    clip, go = tmp_path / "clip.png", tmp_path / "go"
    clip.write_bytes(CAT)
    # The clipboard tool answers only once the conversation is closed.
    script = (
        f'case "$*" in *TARGETS*) echo image/png;; '
        f'*) while [ ! -e "{go}" ]; do sleep 0.02; done; cat "{clip}";; esac'
    )
    (tools / "xclip").write_text(f"#!/bin/sh\nPATH=/usr/bin:/bin\n{script}\n")
    (tools / "xclip").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    async with two_conversations(tmp_path) as (app, pilot):
        await pilot.press("alt+1")  # the first: its screen stays, unseen, once it is closed
        closed = app.chat
        closed.action_paste_image()
        [reading] = [w for w in app.workers if w.group == "clipboard"]
        await pilot.press("ctrl+w")
        await wait_until(pilot, lambda: len(app.conversations) == 1)
        go.touch()
        await wait_until(pilot, lambda: reading.is_finished)
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert not closed.query_one(AttachmentBar).attachments
        assert not app.chat.query_one(AttachmentBar).attachments
        assert not any("Attached" in str(notice.message) for notice in app._notifications)


@pytest.mark.parametrize(
    ("environ", "headless", "mode"),
    [
        ({"TERM": "xterm-kitty"}, False, "kitty"),
        ({"TERM_PROGRAM": "ghostty"}, False, "kitty"),
        ({"TERM_PROGRAM": "WezTerm"}, False, "sixel"),
        ({"TERM": "foot"}, False, "sixel"),
        ({"TERM": "xterm-256color", "WT_SESSION": "x"}, False, "sixel"),
        ({"TERM": "xterm-256color"}, False, None),
        ({"TERM": "xterm-kitty", "TMUX": "/tmp/tmux"}, False, None),
        ({"TERM": "xterm-kitty"}, True, None),
        ({"TERM": "xterm-kitty", "ACP_TUI_IMAGES": "off"}, False, None),
        ({"TERM": "xterm", "ACP_TUI_IMAGES": "Sixel"}, False, "sixel"),
        ({"ACP_TUI_IMAGES": "kitty"}, True, None),
        ({"ACP_TUI_IMAGES": "halfcell"}, True, "halfcell"),
    ],
)
def test_the_picture_mode_comes_from_the_environment(
    environ: dict[str, str], headless: bool, mode: str | None
) -> None:
    assert picture_mode(headless, environ) == mode
