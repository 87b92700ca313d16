"""Headless mode (`acp-tui -p`): a conversation driven from a script, printed as it goes."""
