"""Sessions to pick from, and opening one: what the session picker, `acp-tui sessions` and
`acp-tui --resume` share.

The list merges what the agent reports (`session/list`, when it offers it) with what acp-tui
recorded for that agent in that workspace. Opening one prefers what is fast and complete:

- with a local record, `session/resume` (no replay) and the record shown as the history; an
  agent that cannot resume but can load replays it instead (and the record is rewritten,
  unless the agent replayed nothing);
- without one, `session/load` (v1) or `session/resume` with `replayFrom` (v2), so the agent
  replays the history; a v1 agent that can only resume shows nothing of it, and says so;
- an agent that cannot reopen the session (no capability, or it no longer knows it) while a
  record exists: the record is shown and the conversation goes on in a new agent session,
  with a notice that the agent does not remember what came before.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from pathlib import Path
from typing import Literal

import msgspec

from acp_tui.conversation.sign_in import Chooser, TerminalRunner, with_sign_in
from acp_tui.protocol import methods as m
from acp_tui.protocol.jsonrpc import AUTH_REQUIRED, METHOD_NOT_FOUND, ConnectionClosed, RpcError
from acp_tui.records.codec import copy_state, restore_state
from acp_tui.records.recorder import Recorder
from acp_tui.records.store import ConversationRecord, RecordStore, parse_time
from acp_tui.session.client import AgentClient
from acp_tui.session.reducer import adopt_history
from acp_tui.session.session import Session
from acp_tui.session.state import SessionState


class SessionEntry(msgspec.Struct):
    """One session in the picker."""

    session_id: str
    title: str | None
    updated_at: datetime | None
    cwd: str
    in_agent: bool = False
    """Listed by the agent's `session/list`."""
    record: ConversationRecord | None = None
    """acp-tui's record of it, if any."""

    @property
    def label(self) -> str:
        return self.title or "(untitled)"

    @property
    def source(self) -> str:
        """ "agent", "local" or "agent, local": where the entry comes from."""
        return ", ".join(s for s, on in (("agent", self.in_agent), ("local", self.record)) if on)


def merge_sessions(
    listed: list[m.SessionInfo], records: list[ConversationRecord]
) -> list[SessionEntry]:
    """The agent's sessions and the recorded ones, one entry per session id (the latest
    record of an id agents reuse), the most recently updated first."""
    entries: dict[str, SessionEntry] = {}
    for info in listed:
        entries[info.session_id] = SessionEntry(
            info.session_id, info.title, parse_time(info.updated_at), info.cwd, in_agent=True
        )
    for record in records:  # the most recent first
        entry = entries.get(record.session_id)
        if entry is None:
            entries[record.session_id] = SessionEntry(
                record.session_id, record.title, record.updated, record.workspace, record=record
            )
        elif entry.record is None:
            entry.record = record
            entry.title = entry.title or record.title
            if record.updated and (entry.updated_at is None or record.updated > entry.updated_at):
                entry.updated_at = record.updated
    return sorted(entries.values(), key=_recency, reverse=True)


def _recency(entry: SessionEntry) -> float:
    return entry.updated_at.timestamp() if entry.updated_at is not None else 0.0


async def list_sessions(
    client: AgentClient | None, store: RecordStore | None, agent: str, workspace: Path
) -> list[SessionEntry]:
    """Sessions of `agent` in `workspace`: the agent's own list (if `client` is running and
    the agent offers `session/list`; a failure there just leaves it out) merged with acp-tui's
    records."""
    listed: list[m.SessionInfo] = []
    if client is not None:
        with contextlib.suppress(RpcError, TimeoutError):
            listed = await client.list_sessions()
    records: list[ConversationRecord] = []
    if store is not None:
        await store.drained()
        records = store.conversations(agent=agent, workspace=str(workspace))
    return merge_sessions(listed, records)


def find_session(entries: list[SessionEntry], wanted: str) -> SessionEntry | None:
    """`wanted` among the entries: the most recent for "", else by id, else by a prefix of
    the id that only one entry has."""
    if not wanted:
        return entries[0] if entries else None
    for entry in entries:
        if entry.session_id == wanted:
            return entry
    prefixed = [e for e in entries if e.session_id.startswith(wanted)]
    return prefixed[0] if len(prefixed) == 1 else None


def agent_deletes(client: AgentClient | None) -> bool:
    """Whether the running agent removes sessions from its list (`session/delete`)."""
    return client is not None and client.info.supports("delete")


async def delete_session(
    client: AgentClient | None,
    store: RecordStore | None,
    agent: str,
    workspace: Path,
    entry: SessionEntry,
) -> None:
    """Delete `entry` wherever it can be: from the agent's list (when `agent_deletes`), and
    every record acp-tui has of it here. Raises RpcError when the agent refused (the records
    are then kept too)."""
    if entry.in_agent and client is not None and client.info.supports("delete"):
        await client.delete_session(entry.session_id)
    if store is not None and entry.record is not None:
        await store.drained()
        for record in store.conversations(agent=agent, workspace=str(workspace), limit=100_000):
            if record.session_id == entry.session_id:
                store.delete(record.id)


class NothingToResume(LookupError):
    """`--resume` without an id, and no earlier session to take."""


# -- opening ----------------------------------------------------------------------------------

How = Literal["new", "resumed", "loaded", "record", "forked"]
FORK_MARK = " (fork)"
"""After the title of a fork (once, however often it is forked again)."""


class Opened(msgspec.Struct):
    """A session ready for prompts, and how it was opened."""

    session: Session
    recorder: Recorder | None
    how: How
    """`new`; `resumed` (no replay: the history shown is acp-tui's record, if any); `loaded`
    (the agent replayed the history); `record` (the agent could not reopen it: the record is
    shown, and the conversation goes on in a new agent session); `forked` (a new session
    that goes on from another, whose history it shows)."""
    notice: str | None = None
    """What to tell the user about how it was opened (also added to the transcript)."""
    warnings: list[str] = msgspec.field(default_factory=list)
    """Defaults from the config the agent did not take (also notices in the transcript)."""

    def close(self) -> None:
        """Write the rest of the record (call when leaving the session)."""
        if self.recorder is not None:
            self.recorder.close()


async def open_conversation(
    client: AgentClient,
    store: RecordStore | None,
    agent: str,
    *,
    session_id: str | None = None,
    record: ConversationRecord | None = None,
) -> Opened:
    """Open a session on a started `client` and record it under `agent` (a config name).

    With neither `session_id` nor `record`: a new session. Else the session with that id (or
    the record's), as the module docstring says. Raises RpcError when the session cannot be
    opened (also -32000 when the agent wants a sign-in first: see `sign_in`)."""
    if session_id is None and record is None:
        session = await client.new_session()
        return Opened(session, _record(store, session, agent, client), "new")
    session_id = session_id or (record.session_id if record is not None else "")
    if store is not None:
        await store.drained()
    if record is None and store is not None:
        record = store.find(session_id, agent=agent, workspace=str(client.options.cwd))
    if record is not None:
        session_id = record.session_id
    history, known = _history(store, record)
    replay = history is None
    replayed = client.reopen_method(replay=replay) in ("load", "replay")
    try:
        session = await client.open_session(session_id, replay=replay, state=history)
    except RpcError as error:
        if history is None or error.code == AUTH_REQUIRED or isinstance(error, ConnectionClosed):
            raise
        return await _continue_from_record(client, store, agent, record, history, known, error)
    if replayed and history is not None and not session.state.timeline:
        # Some agents "load" without replaying anything: the record is all there is.
        adopt_history(session.state, history)
        replayed = False
    recorder = None
    if store is not None:
        recorder = Recorder(
            store,
            session,
            agent=agent,
            command=client.argv,
            record=record,
            known=None if replayed else known,
            rewrite=replayed and record is not None,
        )
    if replayed:
        return Opened(session, recorder, "loaded")
    notice = None
    if history is None:
        notice = "The agent resumed this session without replaying it: its history is not shown."
        session.notice("info", notice)
    return Opened(session, recorder, "resumed", notice)


async def fork_conversation(
    client: AgentClient,
    store: RecordStore | None,
    agent: str,
    source_id: str,
    history: SessionState,
) -> Opened:
    """A new session that goes on from where session `source_id` is (`session/fork`: the
    agent carries its context over; the session need not be open), showing a copy of
    `history` and recorded as a conversation of its own. The source and its record stay as
    they were. Raises RpcError."""
    state = copy_state(history)
    if state.title and not state.title.endswith(FORK_MARK):
        state.title += FORK_MARK
    session = await client.fork_session(source_id, state)
    remembered = (
        "everything above"
        if state.timeline
        else "that session's history (acp-tui has no record of it to show)"
    )
    notice = (
        f"Forked from session {source_id}: the agent remembers {remembered}, and what you do "
        "here does not change that session (Ctrl+O opens it again)."
    )
    session.notice("info", "A fork of the session above", notice)
    return Opened(session, _record(store, session, agent, client), "forked", notice)


async def _continue_from_record(
    client: AgentClient,
    store: RecordStore | None,
    agent: str,
    record: ConversationRecord | None,
    history: SessionState,
    known: dict[int, int],
    error: RpcError,
) -> Opened:
    session = await client.new_session(state=history)
    notice = (
        f"The agent could not reopen this session ({error.message}). Above is acp-tui's record "
        "of it; the conversation goes on in a new session, and the agent does not remember "
        "what came before."
    )
    session.notice("warning", notice)
    recorder = None
    if store is not None:
        recorder = Recorder(
            store,
            session,
            agent=agent,
            command=client.argv,
            record=record,
            known=known,
        )
    return Opened(session, recorder, "record", notice)


def _record(
    store: RecordStore | None, session: Session, agent: str, client: AgentClient
) -> Recorder | None:
    if store is None:
        return None
    return Recorder(store, session, agent=agent, command=client.argv)


def _history(
    store: RecordStore | None, record: ConversationRecord | None
) -> tuple[SessionState | None, dict[int, int]]:
    if store is None or record is None:
        return None, {}
    rows = store.items(record.id)
    if not rows:
        return None, {}
    return restore_state(record.session_id, rows, record.meta)


async def fork_history(
    store: RecordStore | None, record: ConversationRecord | None, session_id: str
) -> SessionState:
    """What a fork of a session not open here shows of its history: acp-tui's record of it,
    or nothing."""
    if store is not None:
        await store.drained()
    return _history(store, record)[0] or SessionState(session_id=session_id)


async def start_conversation(
    client: AgentClient,
    store: RecordStore | None,
    agent: str,
    *,
    resume: str | None = None,
    fork: bool = False,
    auth: str | None = None,
    choose: Chooser | None = None,
    run_terminal: TerminalRunner | None = None,
    mode: str | None = None,
    model: str | None = None,
) -> Opened:
    """Everything a front end does to get a session on a started client: pick the session
    `resume` names (an id or a prefix; "" for the most recent; None for a new session), open
    it signed in (`auth`, else as `sign_in.with_sign_in` says), with `fork` go on in a
    fork of it, and switch a new one to `mode` and `model` (the agent's defaults from the
    config: a value the agent does not offer becomes a warning notice, not an error).

    Raises NothingToResume, AuthRequired / AuthFailed, RpcError."""
    session_id: str | None = None
    record: ConversationRecord | None = None
    if fork and not client.info.supports("fork"):
        raise RpcError(METHOD_NOT_FOUND, "the agent cannot fork sessions (no session/fork)")
    if resume is not None:
        entries = await list_sessions(client, store, agent, client.options.cwd)
        entry = find_session(entries, resume)
        if entry is not None:
            session_id, record = entry.session_id, entry.record
        elif resume:
            session_id = resume  # one the agent may know without listing it
        else:
            raise NothingToResume(f"no earlier session with {agent} here to resume")

    async def open_it() -> Opened:
        if not fork or session_id is None:
            return await open_conversation(client, store, agent, session_id=session_id)
        # Forked as it is, never opened: its record stays as it was.
        history = await fork_history(store, record, session_id)
        try:
            return await fork_conversation(client, store, agent, session_id, history)
        except RpcError as error:
            if error.code == AUTH_REQUIRED or isinstance(error, ConnectionClosed):
                raise
            message = f"session {session_id} could not be forked: {error.message}"
            raise RpcError(error.code, message, error.data) from error

    opened = await with_sign_in(
        client,
        open_it,
        agent=agent,
        store=store,
        method=auth,
        choose=choose,
        run_terminal=run_terminal,
    )
    if opened.how == "new":
        for category, value in (("mode", mode), ("model", model)):
            if value:
                try:
                    await opened.session.select(category, value)
                except (ValueError, RpcError) as error:
                    message = getattr(error, "message", None) or str(error)
                    opened.warnings.append(f"{agent}: {message}")
                    opened.session.notice("warning", f"{agent}: {message}")
    return opened
