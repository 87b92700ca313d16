"""ACP transcripts checked against the official JSON Schema (`acp_tui.protocol.schema_check`).

`validate_message` fails with a readable `AssertionError`; `validate_transcript` checks every
message one side wrote in an acp-tui transcript.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from acp_tui.protocol import schema_check
from acp_tui.protocol.schema_check import Sender

SPEC_DIR = Path(__file__).resolve().parent / "spec"
"""Vendored test material: recorded transcripts (see `spec/SOURCE.md`)."""
_DIRECTION_OF: dict[Sender, str] = {"client": "send", "agent": "recv"}


def validate_message(
    msg: dict[str, Any],
    *,
    version: int,
    sender: Sender,
    request_method: str | None = None,
) -> None:
    """`schema_check.validate_message`, failing as a test does."""
    try:
        schema_check.validate_message(
            msg, version=version, sender=sender, request_method=request_method
        )
    except schema_check.SchemaViolation as violation:
        raise AssertionError(str(violation)) from None


def validate_transcript(
    path_or_lines: str | os.PathLike[str] | Iterable[str],
    *,
    version: int,
    sender: Sender,
) -> int:
    """Validate every message `sender` wrote in an acp-tui transcript; return how many.

    A transcript is JSON Lines from the client's point of view: `{"dir": "send"|"recv", "ts":
    …, "msg": …}`, where `msg` is a message, a v2 batch (array), or null for a line that was
    not JSON (skipped). Responses are paired with the requests they answer per direction,
    because ids are per-sender namespaces: a response we send answers a request we received
    with that id, a response we receive answers a request we sent.
    """
    pending: dict[str, dict[str, str]] = {"send": {}, "recv": {}}
    counted = 0
    for line_number, direction, msg in _transcript_messages(path_or_lines):
        ours = direction == _DIRECTION_OF[sender]
        for item in _unbatch(msg, version, checked=ours):
            request_method = _pair(item, direction, pending)
            if not ours:
                continue
            if _is_result(item) and request_method is None:
                raise AssertionError(
                    f"transcript line {line_number}: {sender} response id {item['id']!r} "
                    "answers no pending request"
                )
            try:
                validate_message(
                    item, version=version, sender=sender, request_method=request_method
                )
            except AssertionError as exc:
                raise AssertionError(f"transcript line {line_number}: {exc}") from None
            counted += 1
    return counted


def _transcript_messages(
    path_or_lines: str | os.PathLike[str] | Iterable[str],
) -> Iterator[tuple[int, str, Any]]:
    """Yield (line number, direction, msg) for every parsed transcript line."""
    if isinstance(path_or_lines, str | os.PathLike):
        lines: Iterable[str] = Path(path_or_lines).read_text(encoding="utf-8").splitlines()
    else:
        lines = path_or_lines
    for line_number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        entry = json.loads(line)
        if entry["dir"] not in ("send", "recv"):
            raise AssertionError(f"transcript line {line_number}: bad dir {entry['dir']!r}")
        if entry["msg"] is not None:
            yield line_number, entry["dir"], entry["msg"]


def _unbatch(msg: Any, version: int, *, checked: bool) -> list[Any]:
    """The messages of one line; batches must be non-empty and are v2-only when `checked`."""
    if not isinstance(msg, list):
        return [msg]
    if checked and version < 2:
        raise AssertionError(f"ACP v{version} does not allow batches: {schema_check.snippet(msg)}")
    if checked and not msg:
        raise AssertionError("an empty batch is not a valid message")
    return msg


def _pair(msg: Any, direction: str, pending: dict[str, dict[str, str]]) -> str | None:
    """Remember requests; for a response, return the method of the request it answers."""
    if not isinstance(msg, dict) or "id" not in msg:
        return None
    key = json.dumps(msg["id"])  # 1 and "1" are different ids
    if "method" in msg:
        pending[direction][key] = msg["method"]
        return None
    answered = "recv" if direction == "send" else "send"
    return pending[answered].pop(key, None)


def _is_result(msg: Any) -> bool:
    return isinstance(msg, dict) and "method" not in msg and "result" in msg
