"""The dialogs over the chat screen: quit, keys, mode and settings, search, sessions, sign-in."""

from acp_tui.ui.screens.help import HelpScreen
from acp_tui.ui.screens.quit import QuitScreen
from acp_tui.ui.screens.search import SearchScreen
from acp_tui.ui.screens.sessions import SessionsScreen
from acp_tui.ui.screens.settings import SettingsScreen, next_mode
from acp_tui.ui.screens.sign_in import SignInScreen

__all__ = [
    "HelpScreen",
    "QuitScreen",
    "SearchScreen",
    "SessionsScreen",
    "SettingsScreen",
    "SignInScreen",
    "next_mode",
]
