"""acp-tui's local record of conversations (SQLite in the data directory): the store, the
recorder that writes a session as it streams, and the codec between the two."""

from acp_tui.records.recorder import Recorder
from acp_tui.records.store import ConversationRecord, RecordStore

__all__ = ["ConversationRecord", "RecordStore", "Recorder"]
