"""Tests of the schema validator the protocol tests rely on (tests/support/schema.py).

Valid recorded traffic must pass, and deliberately broken copies of it must fail with a message
that names the method and where in the message the mistake is.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.schema import SPEC_DIR, Sender, validate_message, validate_transcript

TRANSCRIPTS = SPEC_DIR / "transcripts"
V1_ECHO = TRANSCRIPTS / "v1-python-sdk-0.12.1-example-client-vs-echo_agent.log"
V2_DEMO = TRANSCRIPTS / "v2-draft-demo-agent-python-sdk-1.0.0rc3.log"


def acp_tui_lines(recorded: Path) -> list[str]:
    """Convert a `C->A {json}` / `A->C {json}` recording into acp-tui transcript lines."""
    directions = {"C->A": "send", "A->C": "recv"}
    lines = []
    for number, line in enumerate(recorded.read_text(encoding="utf-8").splitlines()):
        arrow, message = line.split(" ", 1)
        entry = {"dir": directions[arrow], "ts": float(number), "msg": json.loads(message)}
        lines.append(json.dumps(entry))
    return lines


def messages(recorded: Path) -> list[dict[str, Any]]:
    return [json.loads(line)["msg"] for line in acp_tui_lines(recorded)]


def entry(direction: str, msg: Any) -> str:
    return json.dumps({"dir": direction, "ts": 0.0, "msg": msg})


def assert_invalid(lines: list[str], version: int, sender: Sender, *fragments: str) -> None:
    with pytest.raises(AssertionError) as failure:
        validate_transcript(lines, version=version, sender=sender)
    for fragment in fragments:
        assert fragment in str(failure.value)


@pytest.mark.parametrize(
    ("recorded", "version", "sender", "count"),
    [
        (V1_ECHO, 1, "client", 4),
        (V1_ECHO, 1, "agent", 6),
        (V2_DEMO, 2, "client", 5),
        (V2_DEMO, 2, "agent", 23),
    ],
)
def test_recorded_traffic_is_valid(
    recorded: Path, version: int, sender: Sender, count: int
) -> None:
    assert validate_transcript(acp_tui_lines(recorded), version=version, sender=sender) == count


def test_transcript_file_path_is_read(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    path.write_text("\n".join(acp_tui_lines(V1_ECHO)) + "\n", encoding="utf-8")
    assert validate_transcript(path, version=1, sender="client") == 4
    assert validate_transcript(str(path), version=1, sender="agent") == 6


@pytest.mark.parametrize(
    ("recorded", "wrong_version", "sender", "reason"),
    [
        (V1_ECHO, 2, "client", "'info' is a required property"),
        (V1_ECHO, 2, "agent", "'info' is a required property"),
        (V2_DEMO, 1, "client", "'mcpServers' is a required property"),
        (V2_DEMO, 1, "agent", "'id' is a required property"),
    ],
)
def test_traffic_of_the_other_version_is_invalid(
    recorded: Path, wrong_version: int, sender: Sender, reason: str
) -> None:
    assert_invalid(acp_tui_lines(recorded), wrong_version, sender, reason)


def test_missing_required_field_fails_with_method_and_path() -> None:
    lines = acp_tui_lines(V1_ECHO)
    broken = json.loads(lines[2])
    del broken["msg"]["params"]["cwd"]
    lines[2] = json.dumps(broken)
    assert_invalid(
        lines, 1, "client", "line 3", "session/new", "$.params", "'cwd' is a required property"
    )


def test_wrong_type_fails_with_the_path_inside_the_message() -> None:
    update = messages(V1_ECHO)[5]
    update["params"]["update"]["content"]["text"] = 42
    with pytest.raises(AssertionError, match=r"\$\.params\.update\.content\.text: 42 is not of"):
        validate_message(update, version=1, sender="agent")


def test_wrong_variant_payload_names_the_intended_variant() -> None:
    answer = {"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "selected"}}}
    with pytest.raises(AssertionError, match="'optionId' is a required property"):
        validate_message(
            answer, version=1, sender="client", request_method="session/request_permission"
        )


def test_v1_update_without_message_id_is_invalid_in_v2() -> None:
    update = messages(V1_ECHO)[5]
    with pytest.raises(AssertionError, match="'messageId' is a required property"):
        validate_message(update, version=2, sender="agent")


def test_v1_only_client_method_has_no_v2_definition() -> None:
    read = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "fs/read_text_file",
        "params": {"sessionId": "s", "path": "/tmp/a.txt"},
    }
    validate_message(read, version=1, sender="agent")
    with pytest.raises(AssertionError, match="v2 has no request 'fs/read_text_file'"):
        validate_message(read, version=2, sender="agent")


@pytest.mark.parametrize("version", [1, 2])
def test_unstable_methods_acp_tui_uses_are_checked_against_the_unstable_schema(
    version: int,
) -> None:
    """`session/fork` is in the unstable schema only: checked there, both ways. Other
    unstable methods stay unknown."""
    fork = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/fork",
        "params": {"sessionId": "s", "cwd": "/work", "mcpServers": []},
    }
    validate_message(fork, version=version, sender="client")
    answer = {"jsonrpc": "2.0", "id": 3, "result": {"sessionId": "s2"}}
    validate_message(answer, version=version, sender="agent", request_method="session/fork")
    with pytest.raises(AssertionError, match="'cwd' is a required property"):
        validate_message({**fork, "params": {"sessionId": "s"}}, version=version, sender="client")
    with pytest.raises(AssertionError, match="'sessionId' is a required property"):
        validate_message(
            {**answer, "result": {}}, version=version, sender="agent", request_method="session/fork"
        )
    with pytest.raises(AssertionError, match="no request 'session/fork' for the client"):
        validate_message(fork, version=version, sender="agent")
    route = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "providers/set",
        "params": {"providerId": "main", "apiType": "anthropic", "baseUrl": "https://gw"},
    }
    validate_message(route, version=version, sender="client")
    with pytest.raises(AssertionError, match="'baseUrl' is a required property"):
        validate_message(
            {**route, "params": {"providerId": "main", "apiType": "anthropic"}},
            version=version,
            sender="client",
        )
    opened = {**fork, "method": "document/didOpen"}
    with pytest.raises(AssertionError, match="has no request 'document/didOpen'"):
        validate_message(opened, version=version, sender="client")


def test_method_sent_by_the_wrong_side_fails() -> None:
    prompt = messages(V1_ECHO)[4]
    with pytest.raises(AssertionError, match="no request 'session/prompt' for the client"):
        validate_message(prompt, version=1, sender="agent")


def test_notification_sent_as_request_fails() -> None:
    cancel = {"jsonrpc": "2.0", "id": 9, "method": "session/cancel", "params": {"sessionId": "s"}}
    with pytest.raises(AssertionError, match="no request 'session/cancel'"):
        validate_message(cancel, version=1, sender="client")


def test_missing_params_count_as_empty() -> None:
    logout = {"jsonrpc": "2.0", "id": 1, "method": "logout"}
    validate_message(logout, version=1, sender="client")
    with pytest.raises(AssertionError, match="'cwd' is a required property"):
        validate_message(
            {"jsonrpc": "2.0", "id": 2, "method": "session/new"}, version=1, sender="client"
        )


def test_protocol_level_cancel_request_goes_both_ways() -> None:
    cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}}
    for version in (1, 2):
        for sender in ("client", "agent"):
            validate_message(cancel, version=version, sender=sender)


def test_extension_methods_are_accepted() -> None:
    validate_message(
        {"jsonrpc": "2.0", "id": 5, "method": "_zed/ping", "params": [1, 2]},
        version=1,
        sender="client",
    )
    validate_message({"jsonrpc": "2.0", "method": "_x/note"}, version=2, sender="agent")
    validate_message(
        {"jsonrpc": "2.0", "id": 5, "result": None},
        version=1,
        sender="agent",
        request_method="_zed/ping",
    )


def test_error_responses_are_checked_against_the_error_shape() -> None:
    not_found = {
        "jsonrpc": "2.0",
        "id": 0,
        "error": {"code": -32601, "message": "Method not found"},
    }
    validate_message(not_found, version=1, sender="client")
    bad_code = copy.deepcopy(not_found)
    bad_code["error"]["code"] = "-32601"
    with pytest.raises(AssertionError, match=r"\$\.error\.code"):
        validate_message(bad_code, version=1, sender="client")
    no_message = {"jsonrpc": "2.0", "id": 0, "error": {"code": -32603}}
    with pytest.raises(AssertionError, match="'message' is a required property"):
        validate_message(no_message, version=2, sender="agent")


@pytest.mark.parametrize(
    ("msg", "reason"),
    [
        ({"id": 1, "method": "logout"}, "jsonrpc"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "logout"}, r"\$\.id"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}, "one of"),
        ({"jsonrpc": "2.0", "result": {}}, "must carry the id"),
        ({"jsonrpc": "2.0", "id": 1}, "neither"),
    ],
)
def test_broken_envelopes_fail(msg: dict[str, Any], reason: str) -> None:
    with pytest.raises(AssertionError, match=reason):
        validate_message(msg, version=1, sender="client", request_method="logout")


def test_result_without_request_method_is_a_usage_error() -> None:
    with pytest.raises(ValueError, match="request_method"):
        validate_message({"jsonrpc": "2.0", "id": 1, "result": {}}, version=1, sender="agent")


def test_ids_are_paired_per_sender_namespace() -> None:
    # Both sides use id 0 at once; each response must be checked against the request the other
    # side sent (a mix-up fails: a permission outcome is no initialize result and vice versa).
    initialize = messages(V1_ECHO)[0]
    permission = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "session/request_permission",
        "params": {
            "sessionId": "s",
            "toolCall": {"toolCallId": "call_1"},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
        },
    }
    lines = [
        entry("send", initialize),
        entry("recv", permission),
        entry("send", {"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}}),
        entry("recv", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}),
    ]
    assert validate_transcript(lines, version=1, sender="client") == 2
    assert validate_transcript(lines, version=1, sender="agent") == 2


def test_string_and_number_ids_are_different_requests() -> None:
    lines = [
        entry("send", {"jsonrpc": "2.0", "id": "1", "method": "logout"}),
        entry("send", messages(V1_ECHO)[0] | {"id": 1}),
        entry("recv", {"jsonrpc": "2.0", "id": "1", "result": {}}),
        entry("recv", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}),
    ]
    assert validate_transcript(lines, version=1, sender="agent") == 2


def test_response_to_no_pending_request_fails() -> None:
    lines = [entry("recv", {"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "end_turn"}})]
    assert_invalid(lines, 1, "agent", "line 1", "answers no pending request")


def test_unparsable_lines_are_skipped() -> None:
    garbage = json.dumps({"dir": "recv", "ts": 1.0, "msg": None, "raw": "oops", "error": "x"})
    lines = [garbage, *acp_tui_lines(V1_ECHO), ""]
    assert validate_transcript(lines, version=1, sender="agent") == 6


def test_batches_are_v2_only() -> None:
    updates = [m for m in messages(V2_DEMO) if m.get("method") == "session/update"][:3]
    lines = [entry("recv", updates)]
    assert validate_transcript(lines, version=2, sender="agent") == 3
    assert_invalid(lines, 1, "agent", "does not allow batches")
    assert_invalid([entry("send", [])], 2, "client", "empty batch")
