"""acp-tui: a terminal client for agents that speak the Agent Client Protocol."""

__version__ = "0.1.0"
