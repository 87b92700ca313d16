"""Turning session content into Rich renderables and Textual strips, away from any widget."""
