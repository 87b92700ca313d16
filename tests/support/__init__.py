"""What the tests share: agents, fake models, drivers for the app, checks of the wire."""

from pathlib import Path

TEST_AGENTS = Path(__file__).resolve().parent.parent / "agents"
"""The small agents the tests start (`tests/agents/`), each a script of its own."""
