"""Known agent bugs acp-tui works around: the table, and Gemini CLI creating a new file."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from acp_tui.protocol.content import text_block
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.quirks import MISSING_FILE_READS_EMPTY, quirks_for
from acp_tui.session.session import PendingPermission
from tests.support import TEST_AGENTS

RAW_AGENT = TEST_AGENTS / "raw_agent.py"


@pytest.mark.parametrize(
    ("name", "version", "keys"),
    [
        ("gemini-cli", "0.61.0", [MISSING_FILE_READS_EMPTY]),
        ("gemini-cli", "0.70.0-nightly.20261120", [MISSING_FILE_READS_EMPTY]),
        ("Gemini CLI", "0.61.0", []),  # `agentInfo.name`, exactly: not the title
        ("claude-agent-acp", "0.100.0", []),
        ("", "", []),
    ],
)
def test_which_agents_a_quirk_applies_to(name: str, version: str, keys: list[str]) -> None:
    assert [quirk.key for quirk in quirks_for(name, version)] == keys


def test_a_fixed_version_no_longer_gets_the_quirk() -> None:
    (quirk,) = quirks_for("gemini-cli", "0.61.0")
    fixed = type(quirk)(quirk.key, quirk.agent, "0.62.1", quirk.summary)
    assert fixed.applies("gemini-cli", "0.62.0")
    assert not fixed.applies("gemini-cli", "0.62.1")
    assert not fixed.applies("gemini-cli", "1.0.0")


def _line(message: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", **message})


@pytest.mark.parametrize(("name", "answer"), [("gemini-cli", "result"), ("other", "error")])
async def test_gemini_cli_reads_a_missing_file_as_empty(
    tmp_path: Path, name: str, answer: str
) -> None:
    """Gemini CLI 0.61 checks whether a file exists by reading it, and takes any error but an
    ENOENT as fatal: without the quirk it can never create a file."""
    missing = tmp_path / "new.txt"
    script = {
        "on": {
            "initialize": [
                _line(
                    {
                        "id": "$ID",
                        "result": {
                            "protocolVersion": 1,
                            "agentCapabilities": {},
                            "agentInfo": {"name": name, "version": "0.61.0"},
                        },
                    }
                )
            ],
            "session/new": [_line({"id": "$ID", "result": {"sessionId": "s1"}})],
            "session/prompt": [
                _line(
                    {
                        "id": "read-1",
                        "method": "fs/read_text_file",
                        "params": {"sessionId": "s1", "path": str(missing)},
                    }
                ),
                _line({"id": "$ID", "result": {"stopReason": "end_turn"}}),
            ],
        }
    }
    (tmp_path / "script.json").write_text(json.dumps(script))
    received = tmp_path / "received.jsonl"
    notes: list[str] = []

    async def never_asked(pending: PendingPermission) -> None:
        raise AssertionError("no permission was asked")

    argv = [sys.executable, str(RAW_AGENT), str(tmp_path / "script.json"), str(received)]
    client = AgentClient(
        argv,
        ClientOptions(cwd=tmp_path),
        decide_permission=never_asked,
        on_traffic=lambda kind, line: notes.append(line.decode()) if kind == "note" else None,
    )
    await client.start()
    try:
        session = await client.new_session()
        assert await session.prompt([text_block("write new.txt")]) == "end_turn"
        for _ in range(100):
            replies = [json.loads(line) for line in received.read_text().splitlines()]
            reply = next((r for r in replies if r.get("id") == "read-1"), None)
            if reply is not None:
                break
            await asyncio.sleep(0.05)
    finally:
        await client.close()
    assert reply is not None and answer in reply
    if answer == "result":
        assert reply["result"] == {"content": ""}
        assert len(notes) == 1 and MISSING_FILE_READS_EMPTY in notes[0]
    else:
        assert reply["error"]["code"] == -32002
        assert notes == []
