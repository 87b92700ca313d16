"""A first checkpoint that takes as long as a test wants (that of a big workspace, which copies
every file), for tests and screenshots of a prompt held by its checkpoint."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from unittest.mock import patch

from acp_tui.checkpoints.store import CheckpointStore, Staged


@contextlib.contextmanager
def staging_held() -> Iterator[threading.Event]:
    """Within, every checkpoint's staging waits until the event given is set; it is set on
    the way out, so that no staging is left waiting."""
    release = threading.Event()
    stage = CheckpointStore.stage

    def held(store: CheckpointStore) -> Staged:
        release.wait(60)
        return stage(store)

    with patch.object(CheckpointStore, "stage", held):
        try:
            yield release
        finally:
            release.set()
