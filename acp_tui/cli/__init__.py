"""`acp-tui`'s command line: one parser (`parser`), the TUI or headless mode (`run`), and a
module per subcommand (`agents`, `sessions`, `export`, `logout`, `providers`, `check`,
`changes`, `rewind`, `serve`), each imported only when it runs."""

from acp_tui.cli.run import main

__all__ = ["main"]
