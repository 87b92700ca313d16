"""The dialogs over the chat screen: quit, keys, mode and settings, search, sessions."""

from acp_tui.ui.screens.help import HelpScreen
from acp_tui.ui.screens.quit import QuitScreen
from acp_tui.ui.screens.search import SearchScreen
from acp_tui.ui.screens.sessions import SessionsScreen
from acp_tui.ui.screens.settings import SettingsScreen, next_mode

__all__ = [
    "HelpScreen",
    "QuitScreen",
    "SearchScreen",
    "SessionsScreen",
    "SettingsScreen",
    "next_mode",
]
