"""The TUI against the real demo agent (no delays): what a person sees and does."""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from textual.widgets import Static

from acp_tui.conversation.mentions import prompt_blocks
from acp_tui.protocol.content import ContentBlock, DiffChange
from acp_tui.protocol.updates import UnknownUpdate, decode_session_notification
from acp_tui.session.state import Message, Notice, ToolCallState
from acp_tui.transport.head_start import HeadStart
from acp_tui.ui.screens import HelpScreen, QuitScreen, SearchScreen, SettingsScreen
from acp_tui.ui.widgets.completion_menu import CompletionMenu
from acp_tui.ui.widgets.diff_view import DiffView, change_line
from acp_tui.ui.widgets.inspector import Inspector
from acp_tui.ui.widgets.markdown_view import MarkdownView
from acp_tui.ui.widgets.message import AgentMessage, UserMessage
from acp_tui.ui.widgets.notice import NoticeLine
from acp_tui.ui.widgets.permission_panel import PermissionPanel
from acp_tui.ui.widgets.plan_view import PlanView
from acp_tui.ui.widgets.prompt_input import PromptInput
from acp_tui.ui.widgets.queued_prompts import QueuedPrompts
from acp_tui.ui.widgets.session_header import SessionHeader
from acp_tui.ui.widgets.terminal_view import TerminalView
from acp_tui.ui.widgets.thought import Thought
from acp_tui.ui.widgets.tool_call import ToolCallCard, ToolHead
from acp_tui.ui.widgets.transcript import Transcript
from acp_tui.ui.widgets.usage_bar import UsageBar
from tests.support.pilot import (
    choose_command,
    core,
    demo_app,
    demo_workspace,
    send,
    wait_idle,
    wait_permission,
    wait_started,
    wait_until,
)
from tests.support.ui import message_texts, started_app

Run = Callable[..., Any]


def decoded(update: dict[str, Any]) -> Any:
    """One `sessionUpdate` as the connection decodes it off the wire."""
    params = msgspec.json.encode({"sessionId": "s", "update": update})
    return decode_session_notification(params)[1]


@pytest.fixture
def run(tmp_path: Path) -> Run:
    """`async with run() as (app, pilot)`: the app on a fresh demo agent and workspace."""
    return functools.partial(started_app, tmp_path)


# -- starting -----------------------------------------------------------------------------------


async def test_header_shows_agent_protocol_workspace_and_status(run: Run) -> None:
    async with run() as (app, _pilot):
        header = app.chat.query_one(SessionHeader)
        assert header.agent.startswith("acp-tui demo agent")
        assert header.protocol == 1
        assert header.status == "idle"
        assert header.workspace.endswith("workspace")


async def test_the_agent_spawned_ahead_is_the_one_the_app_speaks_to(tmp_path: Path) -> None:
    """`acp-tui` spawns the agent before its first frame (`HeadStart`): the app's first start
    takes that process rather than spawning another."""
    workspace = demo_workspace(tmp_path / "workspace")
    app = demo_app(workspace, tmp_path / "state")
    head_start = app.options.head_start = HeadStart(app.argv, workspace, app.options.env)
    spawned = head_start._popen
    assert spawned is not None
    async with app.run_test() as pilot:
        await wait_started(app, pilot)
        client = core(app).client
        assert client is not None and client.process is not None
        assert client.process.process.pid == spawned.pid and head_start._popen is None
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        assert "hello" in message_texts(app)
    assert spawned.poll() is not None  # stopped with the app


async def test_agent_that_cannot_start_is_explained(run: Run, tmp_path: Path) -> None:
    async with run(argv=[str(tmp_path / "no-such-agent")]) as (app, pilot):
        await pilot.pause()
        notices = app.chat.query(NoticeLine)
        assert notices and "could not start" in notices.first().item.title
        assert app.chat.query_one(SessionHeader).status == "exited"
        # The prompt still takes a draft; nothing is sent anywhere.
        await pilot.press(*"my draft")
        assert app.chat.query_one(PromptInput).text == "my draft"


async def test_agent_that_dies_says_how(run: Run) -> None:
    argv = [sys.executable, "-c", "import sys; sys.stderr.write('boom: no config\\n'); sys.exit(3)"]
    async with run(argv=argv) as (app, pilot):
        await pilot.pause()
        notice = app.chat.query(NoticeLine).first()
        assert "exited with code 3" in notice.text()
        assert "boom: no config" in notice.text()


# -- the transcript ---------------------------------------------------------------------------


async def test_markdown_answer_streams_into_one_widget(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "markdown")
        await wait_idle(app, pilot)
        messages = app.chat.query(AgentMessage)
        assert len(messages) == 1
        view_text = "\n".join(
            messages.first()._view.render_line(y).text
            for y in range(messages.first()._view._line_count())
        )
        assert "Markdown, streamed" in view_text
        assert "agent_message_chunk" in view_text  # the table
        assert "async def prompt" in view_text  # the fenced code
        assert isinstance(app.chat.query(UserMessage).first().item, Message)


async def test_blocks_are_patched_in_place(run: Run) -> None:
    async with run() as (app, pilot):
        created: list[int] = []
        transcript = app.chat.query_one(Transcript)
        original = transcript._block_for

        def counting(item: Any) -> Any:
            created.append(id(item))
            return original(item)

        transcript._block_for = counting  # type: ignore[method-assign]
        await send(app, pilot, "tools")
        await wait_idle(app, pilot)
        # One widget per timeline item, however many updates each got.
        assert len(created) == len(set(created)) == len(app.session.state.timeline)  # type: ignore[union-attr]


async def test_tool_calls_show_kind_status_and_content(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "tools")
        await wait_idle(app, pilot)
        cards = list(app.chat.query(ToolCallCard))
        kinds = {card.item.kind for card in cards}
        assert {"read", "search", "edit", "delete", "move", "execute", "think", "fetch"} <= kinds
        fetch = next(card for card in cards if card.item.kind == "fetch")
        assert fetch.has_class("-failed")
        assert "failed" in fetch.query_one(ToolHead).status.plain
        edit = next(card for card in cards if card.item.kind == "edit")
        diff = edit.query_one(DiffView)
        assert diff.rows.added >= 1 and diff.rows.removed >= 1
        # Locations are relative to the workspace.
        locations = edit.query_one(ToolHead).locations.plain
        assert "/" not in locations.split(":")[0] or not locations.startswith("/")


async def test_a_location_without_a_line_shows_the_path_alone(run: Run) -> None:
    # Claude reports a whole-file read as `line: 0`: `hello.txt:0` would point nowhere.
    async with run() as (app, pilot):
        assert app.session is not None
        root = app.session.client.options.cwd
        locations = [
            {"path": str(root / "hello.txt"), "line": 0},
            {"path": str(root / "notes.md")},
            {"path": str(root / "app.py"), "line": 12},
        ]
        update = {"sessionUpdate": "tool_call", "toolCallId": "r", "title": "Read"}
        app.session.apply(decoded({**update, "locations": locations}))
        await pilot.pause()
        card = app.chat.query_one(ToolCallCard)
        shown = card.query_one(ToolHead).locations.plain
        assert shown == "hello.txt  notes.md  app.py:12"


async def test_a_long_tool_title_is_cut_to_leave_the_status_at_the_right_edge(run: Run) -> None:
    async with run() as (app, pilot):
        assert app.session is not None
        title = "Run `pytest -q` " + "and then some " * 20
        update = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": title}
        app.session.apply(decoded({**update, "kind": "execute", "status": "in_progress"}))
        await pilot.pause()
        head = app.chat.query_one(ToolCallCard).query_one(ToolHead)
        first = head.render_lines(head.region.reset_offset)[0].text
        assert first.startswith("❯ execute Run pytest -q and then")  # noqa: RUF001
        assert first.rstrip().endswith("…  ◐ running") and len(first) == head.size.width
        assert head.size.height == 1  # no locations: one line


async def test_expanding_a_tool_call_shows_raw_input(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "tools")
        await wait_idle(app, pilot)
        card = app.chat.query(ToolCallCard).first()
        card.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert card.expanded
        assert card.query_one(".tool--raw").display


async def test_thought_is_folded_once_the_answer_comes(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "think")
        await wait_idle(app, pilot)
        thought = app.chat.query_one(Thought)
        assert not thought.expanded
        thought.focus()
        await pilot.press("enter")
        assert thought.expanded


async def test_plan_is_one_checklist_updated_in_place(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "plan")
        await wait_idle(app, pilot)
        plans = app.chat.query(PlanView)
        assert len(plans) == 1
        assert plans.first().border_subtitle == "4/4 done"
        assert "Run the tests" in plans.first().text()


async def test_a_markdown_plan_is_shown_as_markdown_and_replaced_in_place(run: Run) -> None:
    """Claude Code's plan mode: the approved plan comes as a `markdown` plan (v1 clients that
    advertise `plan`); a checklist sent under the same id replaces it."""
    async with run() as (app, pilot):
        assert app.session is not None
        text = "# Fix the parser\n\n1. Read `parse()`\n2. **Fix** the off-by-one"
        plan = {"planId": "plan-mode", "type": "markdown", "content": text}
        app.session.apply(decoded({"sessionUpdate": "plan_update", "plan": plan}))
        await pilot.pause()
        view = app.chat.query_one(PlanView)
        markdown = view.query_one(MarkdownView)
        await wait_until(pilot, lambda: markdown.shown and markdown.source == text)
        assert markdown.display and not view.query_one(Static).display
        rendered = "\n".join(markdown.render_line(y).text for y in range(markdown.size.height))
        assert "Fix the parser" in rendered and "**" not in rendered and "`" not in rendered
        entries = [{"content": "Read parse()", "priority": "high", "status": "completed"}]
        checklist = {"planId": "plan-mode", "type": "items", "entries": entries}
        app.session.apply(decoded({"sessionUpdate": "plan_update", "plan": checklist}))
        await pilot.pause()
        assert view.query_one(Static).display and not markdown.display
        assert view.border_subtitle == "1/1 done"


def test_a_v2_change_without_a_patch_says_what_moved_where() -> None:
    root = Path("/w")
    moved = DiffChange("move", "/w/src/new.py", old_path="/w/old.py", file_type="text")
    assert change_line(moved, root) == "move old.py → src/new.py (text)"
    assert change_line(DiffChange("delete", "/elsewhere/x.bin"), root) == "delete /elsewhere/x.bin"


async def test_terminal_output_is_shown_live(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "/run echo hello-from-the-terminal")
        await wait_permission(app, pilot)
        await pilot.press("a")
        await wait_idle(app, pilot)
        view = app.chat.query_one(TerminalView)

        def lines() -> list[str]:
            return [view.render_line(y).text for y in range(len(view.lines_for(view.size.width)))]

        await wait_until(pilot, lambda: any("exit 0" in line for line in lines()))
        assert any("hello-from-the-terminal" in line for line in lines())


async def test_unknown_updates_are_shown_plainly(run: Run) -> None:
    async with run() as (app, pilot):
        app.session.apply(
            UnknownUpdate("mystery", {"sessionUpdate": "mystery"}, "unknown update kind 'mystery'")
        )  # type: ignore[union-attr]
        await pilot.pause()
        notice = app.chat.query(NoticeLine).last()
        assert notice.has_class("-unknown")
        assert "mystery" in notice.text()


# -- permissions ------------------------------------------------------------------------------


async def test_permission_allow_once_edits_the_file(run: Run, tmp_path: Path) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        panel = app.chat.query_one(PermissionPanel)
        assert panel.has_focus
        assert panel.query(DiffView)  # the diff is in the dialog
        assert app.chat.query_one(SessionHeader).status == "requires_action"
        await pilot.press("a")
        await wait_idle(app, pilot)
        assert "Edited by the ACP demo agent" in (tmp_path / "workspace" / "app.py").read_text()
        assert not panel.has_class("-open")
        assert app.chat.query_one(PromptInput).has_focus


async def test_permission_reject_leaves_the_file(run: Run, tmp_path: Path) -> None:
    async with run() as (app, pilot):
        before = (tmp_path / "workspace" / "app.py").read_text()
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        await pilot.press("r")
        await wait_idle(app, pilot)
        assert (tmp_path / "workspace" / "app.py").read_text() == before


async def test_arrows_and_enter_choose_an_option(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "permission")
        await wait_permission(app, pilot)
        panel = app.chat.query_one(PermissionPanel)
        pending = panel.current
        await pilot.press("right", "right")
        assert panel.selected == 2
        await pilot.press("enter")
        await wait_idle(app, pilot)
        assert pending is not None and pending.done
        assert pending.future.result().outcome.option_id == pending.request.options[2].option_id


async def test_a_cancelled_request_cannot_be_approved_afterwards(run: Run, tmp_path: Path) -> None:
    async with run() as (app, pilot):
        before = (tmp_path / "workspace" / "app.py").read_text()
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        pending = app.chat.query_one(PermissionPanel).current
        await pilot.press("ctrl+c")  # cancels the turn: the request is answered cancelled
        await wait_idle(app, pilot)
        assert pending is not None and pending.done
        await pilot.press("a")  # a stale "allow" now approves nothing
        await pilot.pause(0.2)
        assert (tmp_path / "workspace" / "app.py").read_text() == before
        assert pending.future.result().outcome.__class__.__name__ == "CancelledOutcome"


async def test_allow_mode_answers_without_asking(run: Run, tmp_path: Path) -> None:
    async with run(permission="allow") as (app, pilot):
        await send(app, pilot, "/edit app.py")
        await wait_idle(app, pilot)
        assert "Edited by the ACP demo agent" in (tmp_path / "workspace" / "app.py").read_text()
        assert any("Permission answered" in n.item.title for n in app.chat.query(NoticeLine))


# -- cancel, queue, quit ----------------------------------------------------------------------


async def test_cancel_keeps_the_draft_and_shows_tool_calls_stopped(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "slow 30")
        await wait_until(
            pilot, lambda: any(isinstance(i, ToolCallState) for i in app.session.state.timeline)
        )  # type: ignore[union-attr]
        prompt = app.chat.query_one(PromptInput)
        prompt.insert("half-written thought")
        await pilot.press("escape")
        await wait_idle(app, pilot)
        assert app.session.state.stop_reason == "cancelled"  # type: ignore[union-attr]
        assert prompt.text == "half-written thought"
        card = app.chat.query_one(ToolCallCard)
        assert card.item.status in ("cancelled", "failed")
        assert any(n.item.title == "Turn cancelled" for n in app.chat.query(NoticeLine))


async def test_each_way_a_turn_stops_is_said_plainly(run: Run) -> None:
    """A refusal says that the prompt drops out of what the agent remembers; a stop reason
    of the agent's own (v2 `_…`) is shown as it came, not taken for a normal end."""
    async with run(protocol_version=2) as (app, pilot):
        for prompt in ("/refuse", "/stop _out_of_credit", "hello"):
            await send(app, pilot, prompt)
            await wait_idle(app, pilot)
        timeline = app.session.state.timeline  # type: ignore[union-attr]
        said = [(n.severity, n.title, n.detail) for n in timeline if isinstance(n, Notice)]
        [refused, custom] = said
        assert refused[:2] == ("warning", "The agent refused to continue")
        assert "will not be part of what it remembers" in (refused[2] or "")
        assert custom == ("warning", "The agent stopped: _out_of_credit", None)


async def test_the_usage_bar_says_what_the_last_turn_took(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        bar = app.chat.query_one(UsageBar)
        usage = app.session.state.turn_usage  # type: ignore[union-attr]
        assert usage is not None and usage.output_tokens > 0
        assert bar.turn[0][1] == f"turn {usage.input_tokens} in / {usage.output_tokens} out"
        assert bar.turn[0][1] in str(bar.render())


async def test_prompts_typed_while_busy_are_queued_then_sent_one_at_a_time(run: Run) -> None:
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        original = session.prompt
        concurrent: list[bool] = []

        async def watched(blocks: list[ContentBlock]) -> Any:
            concurrent.append(session.busy)
            return await original(blocks)

        session.prompt = watched  # type: ignore[method-assign]
        await send(app, pilot, "slow 30")
        await wait_until(pilot, lambda: session.busy)
        await send(app, pilot, "plan")
        await send(app, pilot, "markdown")
        queue = app.chat.query_one(QueuedPrompts)
        assert [queued.text for queued in app.chat.queue] == ["plan", "markdown"]
        assert queue.option_count == 2 and queue.display
        await pilot.press("ctrl+c")
        await wait_idle(app, pilot, timeout=20)
        assert concurrent == [False, False, False]
        assert message_texts(app)[-1].startswith("Markdown") or "Markdown" in "".join(
            message_texts(app)
        )
        assert not queue.display


async def test_a_cancel_says_the_queue_goes_now_and_a_second_drops_it(run: Run) -> None:
    async with run() as (app, pilot):
        said: list[str] = []
        app.notify = lambda message, **kw: said.append(f"{kw.get('title')}: {message}")  # type: ignore[method-assign,assignment]
        await send(app, pilot, "slow 30")
        await wait_until(pilot, lambda: app.session.busy)  # type: ignore[union-attr]
        await send(app, pilot, "slow 30")
        await send(app, pilot, "markdown")
        await pilot.press("ctrl+c")
        assert said == ["Turn cancelled: Your 2 queued prompts go now · ctrl+c again drops them"]
        # The first of them goes at once; a second Ctrl+C stops it and drops the rest.
        await wait_until(pilot, lambda: message_texts(app).count("slow 30") == 2)
        await wait_until(pilot, lambda: app.session.busy)  # type: ignore[union-attr]
        await pilot.press("ctrl+c")
        await wait_idle(app, pilot)
        assert said[1:] == ["Queue dropped: 2 prompts: ↑ in the prompt brings them back"]
        assert "markdown" not in message_texts(app) and not app.chat.queue
        assert app.session.state.stop_reason == "cancelled"  # type: ignore[union-attr]
        await pilot.press("ctrl+c")  # on an empty idle prompt: the usual offer to quit
        await wait_until(pilot, lambda: isinstance(app.screen, QuitScreen))


async def test_queued_prompt_can_be_edited_or_removed(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "slow 30")
        await wait_until(pilot, lambda: app.session.busy)  # type: ignore[union-attr]
        await send(app, pilot, "first")
        await send(app, pilot, "second")
        queue = app.chat.query_one(QueuedPrompts)
        queue.focus()
        queue.highlighted = 1
        await pilot.press("delete")
        assert [queued.text for queued in app.chat.queue] == ["first"]
        queue.focus()
        queue.highlighted = 0
        await pilot.press("enter")
        assert app.chat.queue == []
        assert app.chat.query_one(PromptInput).text == "first"
        await pilot.press("ctrl+c")
        await wait_idle(app, pilot)


async def test_ctrl_c_on_an_empty_idle_prompt_asks_to_quit(run: Run) -> None:
    async with run() as (app, pilot):
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("n")
        assert not isinstance(app.screen, QuitScreen)
        process = core(app).client.process  # type: ignore[union-attr]
        assert process is not None
        app.simulate_key("ctrl+q")  # (pilot.press would wait for a screen that is gone)
        for _ in range(100):
            if process.returncode is not None:
                break
            await asyncio.sleep(0.05)
        assert process.returncode is not None  # the session closed, the agent stopped


# -- the prompt -------------------------------------------------------------------------------


async def test_history_walks_past_prompts_and_back_to_the_draft(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "hello")
        await wait_idle(app, pilot)
        await send(app, pilot, "plan")
        await wait_idle(app, pilot)
        prompt = app.chat.query_one(PromptInput)
        prompt.set_text("draft")
        await pilot.press("up")
        assert prompt.text == "plan"
        await pilot.press("up")
        assert prompt.text == "hello"
        await pilot.press("down", "down")
        assert prompt.text == "draft"


async def test_shift_enter_and_ctrl_j_insert_newlines(run: Run) -> None:
    async with run() as (app, pilot):
        await pilot.press("a", "ctrl+j", "b", "shift+enter", "c")
        assert app.chat.query_one(PromptInput).text == "a\nb\nc"


async def test_slash_completes_the_agents_commands(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "help")  # the demo advertises its commands
        await wait_idle(app, pilot)
        await pilot.press("/", "p", "l")
        menu = app.chat.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.display)
        assert menu.selected_value() == "plan"
        await pilot.press("tab")
        assert app.chat.query_one(PromptInput).text == "/plan "
        assert not menu.display


async def test_enter_completes_a_command_begun_and_sends_one_written_in_full(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "help")  # the demo advertises its commands
        await wait_idle(app, pilot)
        prompt = app.chat.query_one(PromptInput)
        menu = app.chat.query_one(CompletionMenu)
        await pilot.press("/", "p", "l")
        await wait_until(pilot, lambda: menu.display)
        await pilot.press("enter")
        assert prompt.text == "/plan "  # completed, not sent
        prompt.set_text("/plan")
        await wait_until(pilot, lambda: menu.display)
        await pilot.press("enter")  # nothing left to complete: sent
        await wait_until(pilot, lambda: "/plan" in message_texts(app))
        assert prompt.text == "" and not menu.display


async def test_at_completes_workspace_files(run: Run) -> None:
    async with run() as (app, pilot):
        await pilot.press(*"look at @app")
        menu = app.chat.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.display and menu.option_count)
        await pilot.press("tab")
        assert app.chat.query_one(PromptInput).text == "look at @app.py "


async def test_a_mention_written_in_one_go_gets_its_menu_once_the_files_are_listed(
    run: Run,
) -> None:
    """Pasted, or typed faster than the workspace is listed (keys sent at once, as tmux
    does): the menu comes when the list does, not at the next key."""
    async with run() as (app, pilot):
        app.chat.query_one(PromptInput).set_text("look at @app")
        menu = app.chat.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.display and menu.option_count)
        assert menu.selected_value() == "app.py"


async def test_at_completes_a_path_with_spaces_in_quotes(run: Run, tmp_path: Path) -> None:
    notes = tmp_path / "workspace" / "my notes.md"
    notes.parent.mkdir()
    notes.write_text("# Notes\n")
    async with run() as (app, pilot):
        await pilot.press(*"see @my")
        menu = app.chat.query_one(CompletionMenu)
        await wait_until(pilot, lambda: menu.display and menu.option_count)
        assert menu.selected_value() == "my notes.md"
        await pilot.press("tab")
        prompt = app.chat.query_one(PromptInput)
        assert prompt.text == 'see @"my notes.md" '
        # Writing inside the quotes completes on, spaces and all.
        prompt.set_text('see @"my no')
        await wait_until(pilot, lambda: menu.display and menu.option_count)
        assert menu.selected_value() == "my notes.md"
        blocks = prompt_blocks(prompt.text + 'tes.md" please', notes.parent, embed=True).blocks
        assert [block.type for block in blocks] == ["text", "resource"]
        assert blocks[1].resource.text == "# Notes\n"  # type: ignore[union-attr]


def test_mentions_become_resource_blocks(tmp_path: Path) -> None:
    workspace = demo_workspace(tmp_path)
    linked = prompt_blocks("see @app.py please", workspace, embed=False).blocks
    assert [b.type for b in linked] == ["text", "resource_link"]
    assert linked[1].name == "app.py" and linked[1].uri.endswith("/app.py")  # type: ignore[union-attr]
    embedded = prompt_blocks("see @app.py", workspace, embed=True).blocks
    assert embedded[1].type == "resource" and "def greet" in embedded[1].resource.text  # type: ignore[union-attr]
    assert prompt_blocks("mail me @ noon @nothere", workspace, embed=True).blocks[1:] == []


def test_mentions_outside_the_workspace_or_unresolvable_stay_text(tmp_path: Path) -> None:
    workspace = demo_workspace(tmp_path / "workspace")
    (tmp_path / "secret.txt").write_text("not yours\n")
    (tmp_path / "other.txt").write_text("nor this\n")
    (workspace / "out").symlink_to(tmp_path / "other.txt")
    (workspace / "loop").symlink_to(workspace / "loop")
    prompt = f"@../secret.txt @{tmp_path}/secret.txt @out @loop @{'x' * 300} @app.py @nothere"
    content = prompt_blocks(prompt, workspace, embed=True)
    assert [block.type for block in content.blocks] == ["text", "resource"]
    assert content.blocks[1].resource.uri.endswith("/workspace/app.py")  # type: ignore[union-attr]
    # The user hears of each file left out (once a file), not of words that name no file.
    assert content.problems == [
        "../secret.txt is outside the workspace: not sent",
        "out is outside the workspace: not sent",
    ]


# -- panels -----------------------------------------------------------------------------------


async def test_settings_change_the_model(run: Run) -> None:
    async with run() as (app, pilot):
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        await pilot.press("down", "enter")  # Model (second, in the demo's order)
        await pilot.press("down", "enter")  # Demo Smart
        model = next(o for o in app.session.state.config_options if o.key == "model")  # type: ignore[union-attr]
        await wait_until(
            pilot,
            lambda: (
                model.current_value == "demo-smart"
                or any(
                    o.key == "model" and o.current_value == "demo-smart"
                    for o in app.session.state.config_options  # type: ignore[union-attr]
                )
            ),
        )
        await pilot.press("escape")
        assert not isinstance(app.screen, SettingsScreen)


async def test_shift_tab_switches_mode(run: Run) -> None:
    async with run() as (app, pilot):

        def mode() -> Any:
            return next(
                o for o in app.session.state.config_options if o.key == "mode"
            ).current_value  # type: ignore[union-attr]

        assert mode() == "ask"
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: mode() == "code")


async def test_inspector_shows_traffic_both_ways_and_stderr(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "plan")
        await wait_idle(app, pilot)
        await pilot.press("f12")
        await pilot.pause()
        inspector = app.chat.query_one(Inspector)
        assert inspector.display
        kinds = {kind for kind, _ in inspector._lines}
        assert {"send", "recv"} <= kinds
        lines = inspector.query_one("Log").lines  # type: ignore[attr-defined]
        assert any(line.startswith("→ #") and "session/prompt" in line for line in lines)
        assert any("plan" in line for line in lines if line.startswith("← session/update"))
        await pilot.press("f12")
        assert not inspector.display


async def test_f1_shows_the_keys(run: Run) -> None:
    async with run() as (app, pilot):
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_search_jumps_to_a_block(run: Run) -> None:
    async with run() as (app, pilot):
        await send(app, pilot, "markdown")
        await wait_idle(app, pilot)
        await send(app, pilot, "plan")
        await wait_idle(app, pilot)
        await pilot.press("ctrl+f")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"streamed", "enter")
        await wait_until(pilot, lambda: isinstance(app.focused, AgentMessage))
        focused = app.focused
        assert isinstance(focused, AgentMessage) and "Markdown, streamed" in focused.text()


async def test_blocks_can_be_browsed_and_copied(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    async with run() as (app, pilot):
        copied: list[str] = []
        monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
        await send(app, pilot, "plan")
        await wait_idle(app, pilot)
        await pilot.press("alt+up")
        assert isinstance(app.focused, AgentMessage)
        for _ in range(10):  # up through the answers to the plan
            if isinstance(app.focused, PlanView):
                break
            await pilot.press("up")
        assert isinstance(app.focused, PlanView)
        await pilot.press("c")
        assert copied and "[x] Read the relevant files" in copied[0]


# -- long sessions ----------------------------------------------------------------------------


async def test_old_blocks_are_released_and_come_back(run: Run) -> None:
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        for index in range(210):
            session.notice("info", f"notice number {index}")
        transcript = app.chat.query_one(Transcript)
        last, first = session.state.timeline[-1], session.state.timeline[0]

        def released() -> bool:  # the screens near the view are kept, not all 210
            blocks = transcript.blocks
            return bool(blocks) and blocks[-1].item is last and len(blocks) < 100

        await wait_until(pilot, released)
        assert len(session.state.timeline) == 210  # the state keeps everything
        transcript.reveal(first)
        await wait_until(pilot, lambda: transcript.blocks[0].item is first)
        assert session.state.timeline[-1] not in [block.item for block in transcript.blocks]


async def test_a_click_opens_a_long_notice_and_another_folds_it(run: Run) -> None:
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        session.notice("error", "It broke", "\n".join(f"line {n}" for n in range(10)))
        await wait_until(pilot, lambda: bool(app.chat.query(NoticeLine)))
        await pilot.pause()  # laid out, to be clicked
        [notice] = app.chat.query(NoticeLine)
        assert not notice.expanded
        await pilot.click(notice)
        assert notice.expanded  # once: the click is handled by one handler, not two
        await pilot.click(notice)
        assert not notice.expanded


async def test_protocol_v2_works_the_same(run: Run) -> None:
    async with run(protocol_version=2) as (app, pilot):
        assert app.chat.query_one(SessionHeader).protocol == 2
        await send(app, pilot, "tools")
        await wait_idle(app, pilot)
        assert len(app.chat.query(ToolCallCard)) >= 8


async def test_command_palette_lists_actions_and_setting_values(run: Run) -> None:
    async with run() as (app, pilot):
        titles = [command.title for command in app.get_system_commands(app.screen)]
        for expected in ("Mode and settings", "Search the session", "Protocol inspector", "Keys"):
            assert expected in titles
        assert "Model: Demo Smart" in titles and "Mode: Code" in titles
        await choose_command(app, pilot, "Model: Demo Smart")

        def model() -> Any:
            state = app.session.state  # type: ignore[union-attr]
            return next(o for o in state.config_options if o.key == "model").current_value

        await wait_until(pilot, lambda: model() == "demo-smart")


async def test_several_requests_queue_in_order(run: Run) -> None:
    from acp_tui.protocol import methods as m

    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        options = [
            m.PermissionOption("yes", "Allow once", "allow_once"),
            m.PermissionOption("no", "Reject", "reject_once"),
        ]
        requests = [
            session.permission_asked(m.PermissionRequest(session.id, options, title=f"request {n}"))
            for n in (1, 2)
        ]
        for pending in requests:
            app.chat.ask_permission(pending)
        await wait_permission(app, pilot)
        panel = app.chat.query_one(PermissionPanel)
        assert panel.current is requests[0] and panel.border_title.endswith("1 of 2")
        await pilot.press("a")
        assert requests[0].future.result().outcome.option_id == "yes"
        assert panel.current is requests[1]
        await wait_permission(app, pilot)  # the next one is guarded afresh
        await pilot.press("r")
        assert requests[1].future.result().outcome.option_id == "no"
        await pilot.press("escape")  # no reason to give
        await pilot.pause()
        assert not panel.has_class("-open")


async def test_notifications_keep_off_the_dialogs_and_the_prompt(tmp_path: Path) -> None:
    """Top right, below the header and clear of the screen's edge: at the bottom (Textual's
    place) they covered the prompt's and the permission dialog's borders."""
    from textual.widgets._toast import Toast

    app = demo_app(demo_workspace(tmp_path / "workspace"), tmp_path / "state")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await wait_started(app, pilot)
        await send(app, pilot, "/edit app.py")
        await wait_permission(app, pilot)
        app.notify("Something happened that you should know about, in two lines.", title="A")
        app.notify("Attached sunset.png", timeout=30)
        await wait_until(pilot, lambda: len(app.chat.query(Toast)) == 2)
        await pilot.pause()
        header = app.chat.query_one(SessionHeader).region
        kept_clear = [
            app.chat.query_one(widget).region
            for widget in (PermissionPanel, PromptInput, UsageBar, SessionHeader)
        ]
        for toast in app.chat.query(Toast):
            assert toast.region.y > header.bottom
            assert toast.region.right < app.size.width - 1
            assert not any(toast.region.overlaps(region) for region in kept_clear)
