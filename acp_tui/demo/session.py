"""One connected client (`Peer`) and one live session (`LiveSession`) of the demo agent.

The peer remembers what `initialize` negotiated: the protocol version and which client
capabilities were advertised (in v1, `fs/*` and `terminal/*` may only be called if they were).
A live session owns its stored record, its turns (played one at a time, the latest one where
`session/cancel` can reach it), the "always allow / always reject" answers the user gave, and
history replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_tui.demo import wire
from acp_tui.demo.store import SessionRecord

if TYPE_CHECKING:
    from acp_tui.demo.turn import Turn
    from acp_tui.transport.connection import Connection


@dataclasses.dataclass
class Peer:
    """The client on the other end of the connection, as `initialize` described it."""

    connection: Connection
    version: int = 1
    fs_read: bool = False
    fs_write: bool = False
    terminal: bool = False
    terminal_meta: str | None = None
    """The tool call `_meta` key the client reads the output of the agent's own commands from
    (`terminal_output_delta` or `terminal_output`, as `clientCapabilities._meta` advertised);
    None if it does not show them."""
    boolean_options: bool = False
    elicitation: frozenset[str] = frozenset()
    """The elicitation modes the client advertised ("form", "url"): only those may be used."""
    client_name: str = "an ACP client"
    provider: dict[str, Any] | None = None
    """Where the client routed the demo's (pretend) model requests (`providers/set`):
    `apiType`, `baseUrl` and the names of the headers; None for its own route."""

    @property
    def v2(self) -> bool:
        return self.version >= 2


class LiveSession:
    def __init__(self, record: SessionRecord, peer: Peer) -> None:
        self.record = record
        self.peer = peer
        self.turn: Turn | None = None
        """The latest turn, playing or waiting for the one before it to end."""
        self.turn_lock = asyncio.Lock()
        """Held by the turn that plays: prompts are played one at a time, in order."""
        self.always: dict[str, str] = {}
        """Remembered permission answers, per kind of action: "allow_always"/"reject_always"."""

    @property
    def id(self) -> str:
        return self.record.session_id

    @property
    def roots(self) -> list[Path]:
        """The session's root set: `cwd` plus any additional directories."""
        return [Path(self.record.cwd), *(Path(d) for d in self.record.additional_directories)]

    async def notify(self, update: dict[str, Any]) -> None:
        await self.peer.connection.notify(
            "session/update", {"sessionId": self.id, "update": update}
        )

    # -- configuration ------------------------------------------------------------------------

    def config_options(self) -> list[dict[str, Any]]:
        record = self.record
        return wire.config_options(
            record.mode,
            record.model,
            record.show_thoughts,
            version=self.peer.version,
            boolean_ok=self.peer.boolean_options,
        )

    def setup_result(self) -> dict[str, Any]:
        """What `session/new`, `session/load` and `session/resume` answer with (less the id).
        v1 sends both `modes` and a `mode` config option, kept in sync, as the spec asks
        during the transition; v2 has config options only."""
        result: dict[str, Any] = {"configOptions": self.config_options()}
        if not self.peer.v2:
            result["modes"] = wire.mode_state(self.record.mode)
        return result

    def set_option(self, config_id: str, value: Any) -> bool:
        """Apply one option value; return whether the mode changed. Raises ValueError."""
        record = self.record
        if config_id == "mode":
            if value not in {mode for mode, _, _ in wire.MODES}:
                raise ValueError(f"unknown mode {value!r}")
            changed = record.mode != value
            record.mode = value
            return changed
        if config_id == "model":
            if value not in {model for model, _, _ in wire.MODELS}:
                raise ValueError(f"unknown model {value!r}")
            record.model = value
        elif config_id == "show_thoughts":
            if isinstance(value, str) and value in ("on", "off"):
                value = value == "on"
            if not isinstance(value, bool):
                raise ValueError("show_thoughts takes a boolean")
            record.show_thoughts = value
        else:
            raise ValueError(f"unknown config option {config_id!r}")
        return False

    async def announce_mode(self) -> None:
        """v1 only: `current_mode_update`, which keeps v1's `modes` view in sync with the
        `mode` config option."""
        if not self.peer.v2:
            await self.notify(
                {"sessionUpdate": "current_mode_update", "currentModeId": self.record.mode}
            )

    async def announce_config(self, *, mode_changed: bool) -> None:
        """Tell the client about a change it did not make itself (or keep v1's two views of
        the mode in sync): `current_mode_update` (v1 only) and `config_option_update`."""
        if mode_changed:
            await self.announce_mode()
        await self.notify(
            {"sessionUpdate": "config_option_update", "configOptions": self.config_options()}
        )

    # -- turns --------------------------------------------------------------------------------

    def start_turn(self, turn: Turn) -> None:
        """Make `turn` the latest: the one before it is cancelled (as the SDK examples do, a
        new prompt cancels the turn in progress), whether it plays or waits its turn."""
        if self.turn is not None:
            self.turn.cancel()
        self.turn = turn

    async def stop_turn(self, timeout: float = 5.0) -> None:
        """Cancel the latest turn, if any, and wait until every turn has ended."""
        if self.turn is not None:
            self.turn.cancel()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout), self.turn_lock:
                pass

    # -- replay -------------------------------------------------------------------------------

    async def replay(self) -> None:
        """Send the whole conversation again as ordinary `session/update`s: v1 `session/load`,
        or v2 `session/resume` with `replayFrom: {"type": "start"}`. Messages go out whole (one
        chunk in v1, a `*_message` upsert in v2), tool calls and plans in their final state."""
        v2 = self.peer.v2
        version = self.peer.version
        for entry in self.record.history:
            kind = entry["type"]
            if kind == "user":
                blocks = [wire.content_block_for(b, version) for b in entry["content"]]
                blocks = [b for b in blocks if b is not None]
                if v2:
                    await self.notify(
                        {"sessionUpdate": "user_message", "messageId": entry["messageId"]}
                        | {"content": blocks}
                    )
                else:
                    for block in blocks:
                        await self.notify(
                            {"sessionUpdate": "user_message_chunk", "content": block}
                            | {"messageId": entry["messageId"]}
                        )
            elif kind in ("agent", "thought") and entry["text"]:
                name = "agent_message" if kind == "agent" else "agent_thought"
                if v2:
                    content = [wire.text_block(entry["text"])]
                    await self.notify(
                        {"sessionUpdate": name, "messageId": entry["messageId"], "content": content}
                    )
                else:
                    await self.notify(
                        {"sessionUpdate": f"{name}_chunk", "messageId": entry["messageId"]}
                        | {"content": wire.text_block(entry["text"])}
                    )
            elif kind == "agent_block":
                update = {"messageId": entry["messageId"]}
                if v2:
                    update |= {"sessionUpdate": "agent_message", "content": [entry["block"]]}
                else:
                    update |= {"sessionUpdate": "agent_message_chunk", "content": entry["block"]}
                await self.notify(update)
            elif kind == "plan":
                await self.notify(wire.plan_update(entry["planId"], entry["entries"], version))
            elif kind == "tool":
                await self._replay_tool(entry)
        if self.record.title:
            await self.notify(
                {"sessionUpdate": "session_info_update", "title": self.record.title}
                | {"updatedAt": self.record.updated_at}
            )

    async def _replay_tool(self, entry: dict[str, Any]) -> None:
        v2 = self.peer.v2
        fields = {name: entry[name] for name in wire.TOOL_FIELDS if entry.get(name) is not None}
        if v2:
            # v2 display terminals are replayed as one snapshot each, before the tool call
            # that shows them.
            for item in entry.get("content") or []:
                if item["type"] == "terminal":
                    output = item["output"].encode()
                    await self.notify(wire.terminal_update(item, output=output))
            update = {"sessionUpdate": "tool_call_update", "toolCallId": entry["toolCallId"]}
        else:
            update = {"sessionUpdate": "tool_call", "toolCallId": entry["toolCallId"]}
        await self.notify(update | wire.tool_fields(fields, self.peer.version, replay=True))
