"""`acp-tui export ID [-o FILE]`: a recorded conversation as Markdown."""

from __future__ import annotations

import argparse
import sys

from acp_tui.cli.printing import warn
from acp_tui.records import RecordStore
from acp_tui.records.export import record_markdown


def run(args: argparse.Namespace, agent_command: list[str]) -> int:
    store = RecordStore.open(on_warning=warn)
    if store is None:
        return 1
    try:
        record = store.find(args.id, agent=args.agent)
        if record is None:
            warn(f"no recorded session {args.id!r} (`acp-tui sessions --all` lists them)")
            return 1
        text = record_markdown(store, record)
    finally:
        store.close()
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as error:
        warn(f"cannot write {args.output}: {error}")
        return 1
    print(f"Wrote {args.output}", file=sys.stderr)
    return 0
