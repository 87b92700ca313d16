"""What a tool call's card shows is what happened: command output exactly as the program
wrote it, a card measured again whenever its body changes, diffs numbered from the file, one
status per card, and protocol words only where they mean something."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import pytest
from textual.widget import Widget

from acp_tui.protocol.updates import PlanEntry, decode_session_notification
from acp_tui.session.state import PlanState
from acp_tui.ui.render.diff import file_diff, snippet_start
from acp_tui.ui.widgets.diff_view import DiffView
from acp_tui.ui.widgets.markdown_view import MarkdownView
from acp_tui.ui.widgets.message import AgentMessage
from acp_tui.ui.widgets.plan_view import plan_content
from acp_tui.ui.widgets.strips_view import StripsView
from acp_tui.ui.widgets.terminal_view import TerminalView
from acp_tui.ui.widgets.tool_call import ToolCallCard, ToolHead
from acp_tui.ui.widgets.tool_output import RawOutput, ToolOutput
from tests.support.pilot import wait_until
from tests.support.ui import started_app

Run = Callable[..., Any]
W = TypeVar("W", bound=Widget)


def decoded(update: dict[str, Any]) -> Any:
    """One `sessionUpdate` as the connection decodes it off the wire."""
    params = msgspec.json.encode({"sessionId": "s", "update": update})
    return decode_session_notification(params)[1]


@pytest.fixture
def run(tmp_path: Path) -> Run:
    """`async with run() as (app, pilot)`: the app on a fresh demo agent and workspace."""
    return functools.partial(started_app, tmp_path)


# -- a card measured again when its body changes ------------------------------------------------


async def until(condition: Callable[[], object], timeout: float = 5) -> None:
    """Until `condition()` holds, without Pilot's pause: that waits for every widget to go
    idle (and lays the screen out)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_a_body_mounted_while_the_cards_layout_is_pending_is_shown(run: Run) -> None:
    """Qwen Code's shell card lost its body: the card was laid out (header only) before its
    own idle handler ran, and the body mounted meanwhile asked for a layout that Textual took
    for the one already pending, so the card's cached height was used again. Here the card
    is held busy (as while it composes) across exactly that: its first refresh, a layout the
    rest of the transcript brings, and its body's mount."""
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        call = {"sessionUpdate": "tool_call", "toolCallId": "q1", "title": "Shell: ls"}
        session.apply(decoded({**call, "kind": "execute", "status": "pending"}))
        await wait_until(pilot, lambda: app.chat.query(ToolCallCard))
        card = app.chat.query_one(ToolCallCard)
        await wait_until(pilot, lambda: card.region.height == 3)  # borders and its head

        entered, gate = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            entered.set()
            await gate.wait()

        card.call_later(hold)
        try:
            await until(entered.is_set)
            card.refresh(layout=True)  # the card's first refresh: its idle handler cannot run
            chunk = {"type": "text", "text": "Next."}
            session.apply(decoded({"sessionUpdate": "agent_message_chunk", "content": chunk}))
            messages = app.chat.query(AgentMessage)
            await until(lambda: any(m.region.height for m in messages.nodes))
            assert card.region.height == 3  # laid out meanwhile, with its head alone

            output = {"type": "content", "content": {"type": "text", "text": "a\nb\nc"}}
            update = {"sessionUpdate": "tool_call_update", "toolCallId": "q1"}
            session.apply(decoded({**update, "status": "completed", "content": [output]}))
        finally:
            gate.set()

        def body_inside() -> bool:
            body = card.children[-1]
            inside = card.region.contains_region(body.region)
            return body is not card.children[0] and body.region.height > 0 and inside

        await wait_until(pilot, body_inside, timeout=5)


# -- command output shown exactly ---------------------------------------------------------------

OUTPUT = "# not a heading\n- not a bullet\n__init__.py\nline1\nline2\nline3"


def shown(view: StripsView) -> list[str]:
    """The lines a view draws, right-trimmed."""
    return [strip.text.rstrip() for strip in view.lines_for(view.size.width)]


def card(app: Any, call_id: str) -> ToolCallCard:
    return next(card for card in app.chat.query(ToolCallCard) if card.item.id == call_id)


async def view_in(app: Any, pilot: Any, call_id: str, view: type[W]) -> W:
    """The `view` in the card of `call_id`, once there."""

    def found() -> bool:
        return any(c.item.id == call_id and c.query(view) for c in app.chat.query(ToolCallCard))

    await wait_until(pilot, found)
    return card(app, call_id).query_one(view)


def text_item(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


async def test_opencode_command_output_is_shown_as_written_with_its_exit_status(run: Run) -> None:
    """OpenCode reports its bash tool's output as a text item (streamed whole in each
    `in_progress`), and the exit status only in `rawOutput.metadata.exit`."""
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        update = {"sessionUpdate": "tool_call_update", "toolCallId": "oc1"}
        session.apply(
            decoded(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "oc1",
                    "title": "bash",
                    "kind": "execute",
                    "status": "pending",
                    "locations": [],
                    "rawInput": {},
                }
            )
        )
        running = {"status": "in_progress", "kind": "execute", "title": "bash"}
        session.apply(decoded({**update, **running, "content": [text_item("# not")]}))
        raw = {"output": OUTPUT, "metadata": {"output": OUTPUT, "exit": 0, "description": "x"}}
        done = {"status": "completed", "kind": "execute", "title": "List the files"}
        session.apply(decoded({**update, **done, "content": [text_item(OUTPUT)], "rawOutput": raw}))
        view = await view_in(app, pilot, "oc1", ToolOutput)
        await wait_until(pilot, lambda: shown(view)[-1:] == ["✓ exit 0"])
        assert shown(view) == [*OUTPUT.split("\n"), "✓ exit 0"]
        assert not card(app, "oc1").query(MarkdownView)
        assert card(app, "oc1").region.height == 2 + 1 + 1 + 7  # borders, head, gap, lines


async def test_qwen_command_output_keeps_its_lines_and_says_it_failed(run: Run) -> None:
    """Qwen Code: the shell's output as text once the call ends, the exit status in
    `rawOutput.exitCode`."""
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        start = {"sessionUpdate": "tool_call", "toolCallId": "qw1", "status": "pending"}
        command = {"command": "ls nowhere", "is_background": False}
        session.apply(
            decoded({**start, "title": "Shell: ls nowhere", "kind": "execute", "content": []})
        )
        session.apply(decoded({**start, "sessionUpdate": "tool_call_update", "rawInput": command}))
        text = "ls: cannot access 'nowhere': No such file or directory\nexit status 2"
        update = {"sessionUpdate": "tool_call_update", "toolCallId": "qw1", "status": "failed"}
        session.apply(
            decoded({**update, "content": [text_item(text)], "rawOutput": {"exitCode": 2}})
        )
        view = await view_in(app, pilot, "qw1", ToolOutput)
        await wait_until(pilot, lambda: shown(view)[-1:] == ["✗ exit 2"])
        assert shown(view) == [*text.split("\n"), "✗ exit 2"]


async def test_text_that_is_not_program_output_is_still_markdown(run: Run) -> None:
    """A text item the agent wrote as Markdown stays Markdown: one that opens with a fence
    (Claude Code's output without a terminal), the description beside a terminal (Claude
    Code's Bash), and the text of a tool that runs nothing."""
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        fenced = "```console\n$ ls\n__init__.py\n```\n\n(exit code 0)"  # the demo's, v1
        calls = {
            "fenced": ("execute", [text_item(fenced)]),
            "beside": (
                "execute",
                [text_item("List **files**"), {"type": "terminal", "terminalId": "t"}],
            ),
            "fetch": ("fetch", [text_item("Some **bold** words")]),
        }
        for call_id, (kind, content) in calls.items():
            start = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": call_id}
            session.apply(decoded({**start, "kind": kind, "content": content}))
        for call_id in calls:
            await view_in(app, pilot, call_id, MarkdownView)
            assert not card(app, call_id).query(ToolOutput)


async def test_a_long_command_output_is_folded_to_its_end_and_opens_whole(run: Run) -> None:
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        lines = [f"\x1b[32mok\x1b[0m test_{n}" for n in range(40)]
        start = {"sessionUpdate": "tool_call", "toolCallId": "long", "title": "pytest"}
        raw = {"command": ["pytest", "-q"]}  # no kind: a command all the same
        session.apply(decoded({**start, "rawInput": raw, "content": [text_item("\n".join(lines))]}))
        view = await view_in(app, pilot, "long", ToolOutput)
        await wait_until(pilot, lambda: len(shown(view)) == 13)
        assert shown(view)[0] == "… 28 earlier lines  (enter to expand)"
        assert shown(view)[-1] == "ok test_39"
        green = view.lines_for(view.size.width)[-1]
        assert any(seg.style and seg.style.color for seg in green if seg.text == "ok")
        card(app, "long").focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(shown(view)) == 40)
        assert shown(view)[0] == "ok test_0"


# -- diffs numbered from the file ---------------------------------------------------------------


def test_a_snippet_is_placed_by_its_old_text_else_its_new_text() -> None:
    text = "one\ntwo\nthree\nfour\n"
    assert snippet_start(text, "three\n", "3\n") == 3  # not made yet: the old text is there
    assert snippet_start(text, "drei\n", "three\nfour") == 3  # made: the new text is
    assert snippet_start(text, "o", "x") is None  # "o" is there three times: nowhere to say
    assert snippet_start(text, "hree", "") == 3  # from the middle of a line: that line
    assert snippet_start(text, text, "") == 1  # the whole file


def test_a_diff_of_a_part_of_a_file_is_numbered_from_where_the_part_starts() -> None:
    rows = file_diff(
        "app.py", "a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\ne\nf\ng\nH\n", "ansi_dark", 41
    )
    plain = [row.plain for row in rows.rows]
    assert plain[0] == "@@ -45,4 +45,4 @@"
    assert plain[1:] == ["45   e", "46   f", "47   g", "48 - h", "48 + H"]


async def test_a_pending_edit_is_numbered_from_the_file(run: Run) -> None:
    """Claude Code's Edit: the diff of a pending edit holds the old and new string, not the
    file; the workspace's file says where they are."""
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        root = session.client.options.cwd
        diff = {"type": "diff", "path": str(root / "app.py")}
        edit = {**diff, "oldText": 'greet("world")', "newText": 'greet("acp")'}
        outside = {**diff, "path": "/etc/hostname", "oldText": "x", "newText": "y"}
        for call_id, content in (("edit", edit), ("outside", outside)):
            start = {"sessionUpdate": "tool_call", "toolCallId": call_id, "kind": "edit"}
            session.apply(decoded({**start, "title": call_id, "content": [content]}))
        view = await view_in(app, pilot, "edit", DiffView)
        assert [row.plain for row in view.rows.rows] == ['5 - greet("world")', '5 + greet("acp")']
        view = await view_in(app, pilot, "outside", DiffView)
        assert [row.plain for row in view.rows.rows] == ["1 - x", "1 + y"]  # not read: as sent


# -- one status per card ------------------------------------------------------------------------


async def test_a_command_waiting_for_permission_does_not_say_it_runs(run: Run) -> None:
    """claude-agent-acp announces its Bash tool's terminal (`_meta.terminal_info`) with the
    tool call, then asks permission: the card is `pending`, and so is its terminal."""
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        terminal = {"type": "terminal", "terminalId": "term1"}
        meta = {"terminal_info": {"terminal_id": "term1", "cwd": "/tmp"}}
        start = {"sessionUpdate": "tool_call", "toolCallId": "bash1", "kind": "execute"}
        session.apply(
            decoded(
                {**start, "title": "ls -la", "status": "pending", "content": [terminal]}
                | {"_meta": meta, "rawInput": {"command": "ls -la"}}
            )
        )
        view = await view_in(app, pilot, "bash1", TerminalView)
        await wait_until(pilot, lambda: shown(view) == ["$ ls -la"])
        head = card(app, "bash1").query_one(ToolHead)
        assert head.status.plain.strip() == "○ pending"

        update = {"sessionUpdate": "tool_call_update", "toolCallId": "bash1"}
        output = {"terminal_output_delta": {"terminal_id": "term1", "data": "total 0\n"}}
        session.apply(decoded({**update, "status": "in_progress", "_meta": output}))
        await wait_until(pilot, lambda: shown(view) == ["$ ls -la", "total 0", "● running"])
        end = {"terminal_exit": {"terminal_id": "term1", "exit_code": 0, "signal": None}}
        session.apply(decoded({**update, "status": "completed", "_meta": end}))
        await wait_until(pilot, lambda: shown(view) == ["$ ls -la", "total 0", "✓ exit 0"])


# -- protocol words only where they mean something ----------------------------------------------


async def test_the_default_kind_is_not_shown_as_a_word(run: Run) -> None:
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        for call_id, kind in (("mcp", "other"), ("sh", "execute")):
            start = {"sessionUpdate": "tool_call", "toolCallId": call_id, "status": "completed"}
            session.apply(decoded({**start, "title": f"A {call_id} tool", "kind": kind}))
        other = await view_in(app, pilot, "mcp", ToolHead)
        execute = await view_in(app, pilot, "sh", ToolHead)
        assert other.kind.plain == "◆"
        assert execute.kind.plain == "❯ execute"  # noqa: RUF001


def test_priorities_are_shown_only_where_they_differ() -> None:
    def plan(*priorities: str) -> PlanState:
        entries = [PlanEntry(f"step {n}", p, "pending") for n, p in enumerate(priorities)]
        return PlanState("p", entries=entries)

    # OpenCode sends `medium` for every entry of its todo list: nothing to rank.
    assert plan_content(plan("medium", "medium")).plain == "○ step 0\n○ step 1"
    assert plan_content(plan("high", "low")).plain == "○ step 0  high\n○ step 1  low"


async def test_output_sent_a_piece_an_item_is_one_block(run: Run) -> None:
    """The demo agent's search streams its matches one content item each."""
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        start = {"sessionUpdate": "tool_call", "toolCallId": "grep", "kind": "search"}
        pieces = [text_item("a.py:3: port = 8080"), text_item("b.py:12: run(port)")]
        session.apply(decoded({**start, "title": "Search for port", "content": pieces}))
        await view_in(app, pilot, "grep", ToolOutput)
        first, second = card(app, "grep").query(ToolOutput)
        await wait_until(pilot, lambda: second.region.y == first.region.bottom > 0)
        assert not first.has_class("-continued") and second.has_class("-continued")


async def test_codex_command_output_only_in_raw_output_is_shown(run: Run) -> None:
    """codex-acp (0.16, unified exec) reports a command that ends at once with no content and
    no terminal: its output and exit code are in `rawOutput` alone. The text of its permission
    request stays a block of its own above it."""
    async with run() as (app, pilot):
        session = app.session
        assert session is not None
        command = ["/bin/bash", "-lc", "ls"]
        asked = "Proposed Amendment: ls\nAvailable Decisions: Approved\nAbort"
        start = {"sessionUpdate": "tool_call", "toolCallId": "cx", "status": "in_progress"}
        session.apply(
            decoded(
                {**start, "title": "List /w", "kind": "search", "content": [text_item(asked)]}
                | {"rawInput": {"command": command, "parsed_cmd": [{"type": "list_files"}]}}
            )
        )
        listing = "__init__.py\nnotes.md\n"
        raw = {"command": command, "stdout": listing, "stderr": "", "exit_code": 0}
        raw |= {"aggregated_output": listing, "formatted_output": listing}
        update = {"sessionUpdate": "tool_call_update", "toolCallId": "cx"}
        session.apply(decoded({**update, "status": "completed", "rawOutput": raw}))
        output = await view_in(app, pilot, "cx", RawOutput)
        await wait_until(pilot, lambda: shown(output) == ["__init__.py", "notes.md", "✓ exit 0"])
        first = card(app, "cx").query(ToolOutput).first()
        assert shown(first) == asked.split("\n")  # no exit under the question's text
        assert not output.has_class("-continued")
