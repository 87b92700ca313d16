"""acp-tui's local record of conversations (SQLite in the data directory), and opening
sessions from it: see `store`, `recorder` and `conversations`."""

from acp_tui.records.conversations import (
    NothingToResume,
    Opened,
    SessionEntry,
    agent_deletes,
    delete_session,
    find_session,
    fork_conversation,
    fork_history,
    list_sessions,
    merge_sessions,
    open_conversation,
    recorded_state,
    start_conversation,
)
from acp_tui.records.recorder import Recorder
from acp_tui.records.store import ConversationRecord, RecordStore

__all__ = [
    "ConversationRecord",
    "NothingToResume",
    "Opened",
    "RecordStore",
    "Recorder",
    "SessionEntry",
    "agent_deletes",
    "delete_session",
    "find_session",
    "fork_conversation",
    "fork_history",
    "list_sessions",
    "merge_sessions",
    "open_conversation",
    "recorded_state",
    "start_conversation",
]
