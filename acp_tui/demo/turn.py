"""A prompt turn, as scenarios drive it.

`Turn` is the one place that knows the negotiated protocol version while a turn runs. Scenarios
call high-level actions (`say`, `think`, `plan`, `tool`, `ask_permission`, `pause`…) and the
turn sends exactly the `session/update`s and requests that version's schema asks for, records
a protocol-neutral history for replay, and notices `session/cancel`: every wait is cut short by
it and raises `Cancelled`, which the agent turns into the `cancelled` stop reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections.abc import Iterable
from typing import Any

import msgspec

from acp_tui.demo import wire
from acp_tui.demo.session import LiveSession
from acp_tui.demo.store import now_iso


class Cancelled(Exception):
    """The client cancelled the turn (`session/cancel`, or a `cancelled` permission outcome)."""


class ScenarioError(Exception):
    """A scenario's deliberate failure, answered as a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


# The four permission option kinds, in the order a client usually shows them.
ALL_OPTIONS = [
    {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject_always", "name": "Always reject", "kind": "reject_always"},
]
ALLOWING = {"allow_once", "allow_always"}
FINISHED = {"completed", "failed", "cancelled"}

_PIECES = re.compile(r"\s*\S+\s*|\s+")

PACE = {
    # model: (seconds between chunks, words per chunk)
    "demo-fast": (0.03, 2),
    "demo-smart": (0.05, 2),
}


def pieces(text: str, words: int) -> list[str]:
    """`text` cut into chunks of about `words` words; joined back they are exactly `text`."""
    tokens = _PIECES.findall(text)
    return ["".join(tokens[i : i + words]) for i in range(0, len(tokens), words)]


class Turn:
    def __init__(self, session: LiveSession, *, speed: float) -> None:
        self.session = session
        self.peer = session.peer
        self.record = session.record
        self.speed = speed
        self.open_tools: dict[str, ToolCall] = {}
        self.plans: list[Plan] = []
        self.prompt: list[dict[str, Any]] = []
        self.response_meta: dict[str, Any] | None = None
        """Extra `_meta` for the v1 prompt response (a v1 stand-in for custom stop reasons)."""
        self.tokens = {"inputTokens": 0, "outputTokens": 0}
        """What this turn took, for its end's (unstable) `usage`."""
        self._cancelled = asyncio.Event()

    @property
    def v2(self) -> bool:
        return self.peer.v2

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()

    def check(self) -> None:
        if self._cancelled.is_set():
            raise Cancelled

    # -- time ---------------------------------------------------------------------------------

    def scaled(self, seconds: float) -> float:
        """A delay at the configured speed: `--speed 2` halves it, `--speed 0` removes it."""
        return seconds / self.speed if self.speed > 0 else 0.0

    async def pause(self, seconds: float, *, real_time: bool = False) -> None:
        """Wait `seconds` (scaled by the speed unless `real_time`), or until cancelled."""
        seconds = seconds if real_time else self.scaled(seconds)
        if seconds <= 0:
            # Still yield, so that a `session/cancel` behind a burst of output is read.
            await asyncio.sleep(0)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._cancelled.wait(), seconds)
        self.check()

    async def race(self, awaitable: Any) -> Any:
        """Await `awaitable` unless the turn is cancelled first (then raise `Cancelled`, and let
        the request finish on its own: the client still owes us an answer)."""
        if self.cancelled:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise Cancelled
        task = asyncio.ensure_future(awaitable)
        waiter = asyncio.ensure_future(self._cancelled.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            waiter.cancel()
        if task.done():
            return task.result()
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        raise Cancelled

    # -- sending ------------------------------------------------------------------------------

    async def update(self, update: dict[str, Any]) -> None:
        await self.session.notify(update)

    async def state(self, state: str, stop_reason: str | None = None) -> None:
        """v2 `state_update` (idle: with the turn's usage); v1 has no such thing (the pending
        prompt *is* the state)."""
        if self.v2:
            update: dict[str, Any] = {"sessionUpdate": "state_update", "state": state}
            if stop_reason is not None:
                update["stopReason"] = stop_reason
            if state == "idle":
                update["usage"] = self.usage_of_turn()
            await self.update(update)

    def count_tokens(self, text: str, *, written: bool = True) -> None:
        """Pretend accounting: a token is about four characters. `written` by the agent, or
        read (the prompt)."""
        tokens = len(text) // 4 + 1
        self.tokens["outputTokens" if written else "inputTokens"] += tokens
        self.record.tokens_used += tokens
        self.record.cost += tokens / 1000 * wire.PRICE_PER_1K_TOKENS[self.record.model]

    def usage_of_turn(self) -> dict[str, int]:
        """The (unstable) `usage` of this turn's end."""
        return {"totalTokens": sum(self.tokens.values()), **self.tokens}

    async def say(self, text: str) -> Message:
        """Stream `text` as a new agent message, chunk by chunk, at the session's pace."""
        delay, words = PACE[self.record.model]
        return await self.stream("agent", pieces(text, words), delay)

    async def think(self, text: str) -> Message | None:
        """Stream a thought, unless the user turned "Show thoughts" off."""
        if not self.record.show_thoughts:
            return None
        delay, words = PACE[self.record.model]
        return await self.stream("thought", pieces(text, words), delay)

    async def stream(
        self, kind: str, chunks: Iterable[str], delay: float, *, real_time: bool = False
    ) -> Message:
        """Send each chunk as an `agent_message_chunk` (or `agent_thought_chunk`) of one new
        message, `delay` seconds apart. Every chunk carries the message's `messageId`
        (required in v2, optional but useful in v1)."""
        message_id = new_id("msg")
        entry = {"type": kind, "messageId": message_id, "text": ""}
        self.record.history.append(entry)
        name = "agent_message_chunk" if kind == "agent" else "agent_thought_chunk"
        sent: list[str] = []
        try:
            for piece in chunks:
                self.check()
                await self.update(
                    {"sessionUpdate": name, "messageId": message_id}
                    | {"content": wire.text_block(piece)}
                )
                sent.append(piece)
                await self.pause(delay, real_time=real_time)
        finally:
            entry["text"] = "".join(sent)
            self.count_tokens(entry["text"])
        return Message(self, entry)

    async def show(self, block: dict[str, Any]) -> None:
        """Send a block that is not text (an image) as an agent message of its own."""
        self.check()
        message_id = new_id("msg")
        self.record.history.append(
            {"type": "agent_block", "messageId": message_id} | {"block": block}
        )
        await self.update(
            {"sessionUpdate": "agent_message_chunk", "messageId": message_id, "content": block}
        )

    async def plan(self, entries: list[tuple[str, str]]) -> Plan:
        """Show a plan: (content, priority) pairs, all `pending` at first."""
        plan = Plan(self, [{"content": c, "priority": p, "status": "pending"} for c, p in entries])
        self.plans.append(plan)
        self.record.history.append(plan.entry)
        await plan.send()
        return plan

    async def tool(
        self,
        title: str,
        kind: str,
        *,
        status: str = "pending",
        content: list[dict[str, Any]] | None = None,
        locations: list[dict[str, Any]] | None = None,
        raw_input: Any = None,
        meta: dict[str, Any] | None = None,
    ) -> ToolCall:
        """Report a new tool call: v1 `tool_call`, v2 the first `tool_call_update` of its id.
        `meta` goes out as its `_meta`, and is not kept for replay."""
        fields: dict[str, Any] = {"title": title, "kind": kind, "status": status}
        if content is not None:
            fields["content"] = content
        if locations is not None:
            fields["locations"] = locations
        if raw_input is not None:
            fields["raw_input"] = raw_input
        call = ToolCall(self, new_id("call"), fields)
        self.record.history.append(call.entry)
        self.open_tools[call.id] = call
        name = "tool_call_update" if self.v2 else "tool_call"
        update = {"sessionUpdate": name, "toolCallId": call.id}
        update |= wire.tool_fields(fields, self.peer.version)
        if meta is not None:
            update["_meta"] = meta
        await self.update(update)
        return call

    async def ask_permission(
        self,
        tool: ToolCall,
        *,
        title: str,
        description: str | None = None,
        command: dict[str, Any] | None = None,
        options: list[dict[str, str]] = ALL_OPTIONS,
    ) -> str:
        """Ask the user, and return the `kind` of the option they picked.

        v1 sends the tool call itself (`toolCall`, a `ToolCallUpdate`); v2 sends prompt copy in
        `title`/`description` and says what needs permission in `subject` (the tool call, or a
        `command` the agent will run), and reports `requires_action` while it waits. A
        `cancelled` outcome raises `Cancelled`; anything not understood counts as a rejection.
        """
        params: dict[str, Any] = {"sessionId": self.session.id}
        if self.v2:
            params["title"] = title
            if description:
                params["description"] = description
            if command is not None:
                params["subject"] = {"type": "command", **command, "toolCallId": tool.id}
            else:
                params["subject"] = {"type": "tool_call", "toolCall": tool.snapshot()}
            await self.state("requires_action")
        else:
            params["toolCall"] = tool.snapshot()
        params["options"] = options
        try:
            raw = await self.race(
                self.peer.connection.request("session/request_permission", params)
            )
        except Cancelled:
            raise
        except Exception as exc:  # an error answer is no approval
            await self.resume_running()
            await self.say(f"_(The permission request failed: {exc}; treating it as a no.)_\n\n")
            return "reject_once"
        answer = msgspec.json.decode(raw) if raw else None
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        outcome = outcome if isinstance(outcome, dict) else {}
        if outcome.get("outcome") == "cancelled":
            self.cancel()
            raise Cancelled
        await self.resume_running()
        if outcome.get("outcome") == "selected":
            for option in options:
                if option["optionId"] == outcome.get("optionId"):
                    return option["kind"]
        return "reject_once"

    async def resume_running(self) -> None:
        if not self.cancelled:
            await self.state("running")

    async def client_request(
        self, method: str, params: dict[str, Any], *, cancellable: bool = True
    ) -> Any:
        """Call a v1 client method (`fs/*`, `terminal/*`); its result as plain data. Clean-up
        calls (`terminal/kill`, `terminal/release`) pass `cancellable=False`."""
        request = self.peer.connection.request(method, params)
        raw = await (self.race(request) if cancellable else request)
        return msgspec.json.decode(raw) if raw else None

    async def usage(self) -> None:
        record = self.record
        await self.update(
            {
                "sessionUpdate": "usage_update",
                "used": record.tokens_used,
                "size": wire.CONTEXT_SIZE[record.model],
                "cost": {"amount": round(record.cost, 6), "currency": "USD"},
            }
        )

    async def set_title(self, title: str) -> None:
        self.record.title = title
        self.record.updated_at = now_iso()
        await self.update(
            {"sessionUpdate": "session_info_update", "title": title}
            | {"updatedAt": self.record.updated_at}
        )

    async def wind_down(self) -> None:
        """After a cancel: close every tool call and plan entry still open, before the turn
        reports `cancelled` (updates after the stop reason would break the spec)."""
        for call in list(self.open_tools.values()):
            await call.update(status="cancelled")
        for plan in self.plans:
            if any(entry["status"] not in FINISHED for entry in plan.entries) and self.v2:
                for entry in plan.entries:
                    if entry["status"] not in FINISHED:
                        entry["status"] = "cancelled"
                await plan.send()


class Message:
    """An agent message or thought that has been sent."""

    def __init__(self, turn: Turn, entry: dict[str, Any]) -> None:
        self.turn = turn
        self.entry = entry

    @property
    def id(self) -> str:
        return self.entry["messageId"]

    async def replace(self, text: str) -> None:
        """v2 only: replace the whole message (`agent_message`/`agent_thought` upsert)."""
        if not self.turn.v2:
            return
        name = "agent_message" if self.entry["type"] == "agent" else "agent_thought"
        self.entry["text"] = text
        await self.turn.update(
            {"sessionUpdate": name, "messageId": self.id, "content": [wire.text_block(text)]}
        )


class Plan:
    """A plan whose entries change status as the turn goes on."""

    def __init__(self, turn: Turn, entries: list[dict[str, str]]) -> None:
        self.turn = turn
        self.entry = {"type": "plan", "planId": new_id("plan"), "entries": entries}

    @property
    def entries(self) -> list[dict[str, str]]:
        return self.entry["entries"]

    async def send(self) -> None:
        entries = [dict(entry) for entry in self.entries]
        await self.turn.update(
            wire.plan_update(self.entry["planId"], entries, self.turn.peer.version)
        )

    async def set(self, index: int, status: str) -> None:
        self.entries[index]["status"] = status
        await self.send()


class ToolCall:
    """A tool call that has been reported; `update` patches it, `append` adds content."""

    def __init__(self, turn: Turn, tool_call_id: str, fields: dict[str, Any]) -> None:
        self.turn = turn
        self.entry: dict[str, Any] = {"type": "tool", "toolCallId": tool_call_id} | fields

    @property
    def id(self) -> str:
        return self.entry["toolCallId"]

    def snapshot(self) -> dict[str, Any]:
        """The tool call's whole current state as a `ToolCallUpdate` (for permission requests)."""
        fields = {name: self.entry[name] for name in wire.TOOL_FIELDS if name in self.entry}
        return {"toolCallId": self.id} | wire.tool_fields(fields, self.turn.peer.version)

    async def update(self, *, meta: dict[str, Any] | None = None, **fields: Any) -> None:
        """Patch the tool call: only the fields given are sent (v2: omitted = unchanged).
        `meta` goes out as the update's `_meta`, and is not kept: it is about this update."""
        self.entry.update(fields)
        if fields.get("status") in FINISHED:
            self.turn.open_tools.pop(self.id, None)
        update = {"sessionUpdate": "tool_call_update", "toolCallId": self.id}
        update |= wire.tool_fields(fields, self.turn.peer.version)
        if meta is not None:
            update["_meta"] = meta
        await self.turn.update(update)

    async def append(self, item: dict[str, Any]) -> None:
        """Add one content item. v2 streams it with `tool_call_content_chunk`; v1 has no such
        update, so it resends the whole content list (arrays replace wholesale)."""
        content = [*self.entry.get("content", []), item]
        if self.turn.v2:
            self.entry["content"] = content
            await self.turn.update(
                {"sessionUpdate": "tool_call_content_chunk", "toolCallId": self.id}
                | {"content": wire.tool_content(item, self.turn.peer.version)}
            )
        else:
            await self.update(content=content)
