"""The widgets of the chat screen, one per kind of thing shown."""
