"""The live protocol check's worker process (see `acp_tui.check.live`).

Reads the wire from stdin in runs of lines as the connection read them, each run after a
header line `S <bytes>` (acp-tui sent it) or `R <bytes>` (the agent sent it). It learns the
version from the `initialize` exchange, pairs the agent's responses with our requests, checks
every message of the agent's against that version's schema, and writes one JSON line per
violation: `{"problem": "…"}`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import Any

from acp_tui.protocol.schema_check import SchemaViolation, snippet, validate_message


class Validator:
    def __init__(self) -> None:
        self.version: int | None = None
        self.offered: int | None = None
        self.requests: dict[str, str] = {}
        """Our requests awaiting the agent's answer: method by id."""

    def take(self, tag: bytes, line: bytes) -> list[str]:
        """The problems with one wire line (none for ours, or for a line that is not JSON:
        the connection reports those itself)."""
        try:
            message = json.loads(line)
        except ValueError:
            return []
        if tag == b"S":
            self._ours(message)
            return []
        items = message if isinstance(message, list) else [message]
        return [problem for item in items if (problem := self._theirs(item))]

    def _ours(self, message: Any) -> None:
        if isinstance(message, dict) and "method" in message and "id" in message:
            self.requests[json.dumps(message["id"])] = message["method"]
            if message["method"] == "initialize":
                offered = (message.get("params") or {}).get("protocolVersion")
                self.offered = offered if offered in (1, 2) else None

    def _theirs(self, item: Any) -> str | None:
        method = None
        if isinstance(item, dict) and "method" not in item and "id" in item:
            method = self.requests.pop(json.dumps(item["id"]), None)
            if method is None:
                return None  # not an answer to us: the connection says so already
            if method == "initialize" and isinstance(item.get("result"), dict):
                answered = item["result"].get("protocolVersion")
                self.version = answered if answered in (1, 2) else None
        version = self.version or self.offered
        if version is None:
            return None
        try:
            validate_message(item, version=version, sender="agent", request_method=method)
        except SchemaViolation as violation:
            return f"{violation.heading}: {violation.summary}  in {snippet(item)}"
        return None


DUTY = 0.1
"""The share of one core this process takes at most: under a flood of updates it rests nine
times as long as it worked. On a small machine (two cores, maybe two threads of one core) any
more slows the conversation's own process measurably, even at a quarter; it falls behind
instead, and acp-tui counts what it could not check. An agent's usual pace is checked in full,
a burst a little later (checking a message against the schema is slow). Figures:
bench/README.md, "Protocol path" > "The changes, before and after". Work is counted in this
process's CPU time, not wall time: at nice 19 on a busy machine a line can wait seconds for the
CPU, and resting nine times that wait left a violation unreported for over half a minute."""
REST_EVERY = 0.005
"""Seconds of work between rests: one sleep per few hundred lines, not one per line."""


def main() -> None:
    with contextlib.suppress(OSError, AttributeError):
        os.nice(19)
    validator = Validator()
    out = sys.stdout
    stdin = sys.stdin.buffer
    worked = 0.0
    while header := stdin.readline():
        tag, size = header.split()
        for line in stdin.read(int(size)).split(b"\n"):
            started = time.process_time()
            for problem in validator.take(tag, line) if line.strip() else ():
                out.write(json.dumps({"problem": problem}) + "\n")
                out.flush()
            worked += time.process_time() - started
            if worked >= REST_EVERY:
                time.sleep(worked * (1 - DUTY) / DUTY)
                worked = 0.0


if __name__ == "__main__":
    main()
