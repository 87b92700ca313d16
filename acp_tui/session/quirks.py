"""What acp-tui does differently for particular agents, because of a known bug of theirs.

Each `Quirk` names the agent (its `agentInfo.name`), the versions it applies to, what goes
wrong without it and what acp-tui does instead. The table is small on purpose: a quirk is a
last resort for a bug users would otherwise meet on day one, and it is shown in the protocol
inspector whenever it applies, so nobody wonders why acp-tui answered differently.
"""

from __future__ import annotations

import msgspec

from acp_tui.versions import version_key


class Quirk(msgspec.Struct, frozen=True):
    key: str
    agent: str
    """`agentInfo.name`, exactly."""
    fixed_in: str | None
    """The first version without the bug; None while every known version has it."""
    summary: str

    def applies(self, name: str, version: str) -> bool:
        if name != self.agent:
            return False
        return self.fixed_in is None or version_key(version) < version_key(self.fixed_in)


MISSING_FILE_READS_EMPTY = "missing-file-reads-empty"

QUIRKS = (
    Quirk(
        MISSING_FILE_READS_EMPTY,
        agent="gemini-cli",
        fixed_in=None,  # seen in 0.61.0
        summary=(
            "Gemini CLI reads a file through fs/read_text_file before it writes it, and cannot "
            "tell our -32002 'not found' from any other error (its SDK rejects with a plain "
            "object, not an Error), so it could never create a file: a read of a missing file "
            "is answered with empty content instead."
        ),
    ),
)


def quirks_for(name: str, version: str) -> tuple[Quirk, ...]:
    """The quirks that apply to the agent that introduced itself as `name` `version`."""
    return tuple(quirk for quirk in QUIRKS if quirk.applies(name, version))
