"""F2: the session's modes and config options (model first), as the agent describes them.

v1 modes and config options are shown together; when the agent offers a `mode` config option,
its v1 modes are the same thing and are not listed twice. Selects open their choices; booleans
toggle. What the agent sends back (or sends on its own) is shown as it arrives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from acp_tui.protocol.jsonrpc import RpcError
from acp_tui.protocol.updates import ConfigOption, display_order
from acp_tui.session.change import Change
from acp_tui.session.session import Session
from acp_tui.ui.screens.dialog import Dialog


@dataclass(slots=True)
class Setting:
    """One line of the dialog: v1 modes (option None) or a config option."""

    name: str
    value: str
    option: ConfigOption | None = None

    @property
    def key(self) -> str:
        return self.option.key if self.option is not None else "__modes__"


def settings_of(session: Session) -> list[Setting]:
    state = session.state
    options = [o for o in display_order(state.config_options) if o.type in ("select", "boolean")]
    settings: list[Setting] = []
    has_mode_option = any(o.category == "mode" for o in options)
    if state.modes and not has_mode_option:
        current = next((m.name for m in state.modes if m.id == state.current_mode), "—")
        settings.append(Setting("Mode", current))
    for option in options:
        if option.type == "boolean":
            value = "on" if option.current_value is True else "off"
        else:
            value = next(
                (c.name for c in option.choices() if c.value == option.current_value),
                str(option.current_value),
            )
        settings.append(Setting(option.name, value, option))
    return settings


class SettingsScreen(Dialog[None]):
    """A list of settings; Enter opens a setting's choices, Esc goes back or closes."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    DEFAULT_CSS = """
    SettingsScreen > Vertical { width: 72; }
    SettingsScreen OptionList, SettingsScreen OptionList:focus {
        height: auto;
        max-height: 20;
        border: none;
        background: $surface;
        padding: 1 0;
    }
    SettingsScreen OptionList > .option-list--option-highlighted {
        background: $accent 25%;
        color: $foreground;
    }
    SettingsScreen .settings--hint { color: $text-muted; padding: 0 1; }
    """

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.open_setting: Setting | None = None
        """The setting whose choices are shown, or None for the list of settings."""

    def compose(self) -> ComposeResult:
        dialog = Vertical()
        dialog.border_title = "Mode & settings"
        dialog.border_subtitle = "enter choose · esc back"
        with dialog:
            yield Static(classes="settings--hint")
            yield OptionList()

    def on_mount(self) -> None:
        self.session.listeners.append(self._on_change)
        self._show()

    def on_unmount(self) -> None:
        if self._on_change in self.session.listeners:
            self.session.listeners.remove(self._on_change)

    def _on_change(self, session: Session, change: Change) -> None:
        if change.kind in ("modes", "config"):
            self._show()

    def _show(self) -> None:
        options = self.query_one(OptionList)
        hint = self.query_one(".settings--hint", Static)
        highlighted = options.highlighted
        options.clear_options()
        setting = self.open_setting
        if setting is None:
            hint.update("What the agent lets you change for this session:")
            settings = settings_of(self.session)
            options.add_options(
                Option(
                    Content.assemble((f"{s.name:<18}", "bold"), (s.value, "$text-accent")),
                    id=s.key,
                )
                for s in settings
            )
            if settings:
                options.highlighted = min(highlighted or 0, len(settings) - 1)
            return
        hint.update(Content.assemble("Choose ", (setting.name, "bold"), ":"))
        current_index = 0
        for index, (value, name, description, current) in enumerate(self._choices(setting)):
            mark = "● " if current else "  "
            if current:
                current_index = index
            options.add_option(
                Option(
                    Content.assemble(
                        (mark, "$text-accent"),
                        (name, "bold" if current else ""),
                        (f"  {description}" if description else "", "$foreground-muted"),
                    ),
                    id=value,
                )
            )
        options.highlighted = current_index

    def _choices(self, setting: Setting) -> list[tuple[str, str, str, bool]]:
        state = self.session.state
        if setting.option is None:
            return [
                (m.id, m.name, m.description or "", m.id == state.current_mode) for m in state.modes
            ]
        option = setting.option
        return [
            (
                str(c.value),
                c.name,
                c.description if isinstance(c.description, str) else "",
                c.value == option.current_value,
            )
            for c in option.choices()
        ]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        chosen = event.option.id
        if chosen is None:
            return
        if self.open_setting is None:
            setting = next((s for s in settings_of(self.session) if s.key == chosen), None)
            if setting is None:
                return
            if setting.option is not None and setting.option.type == "boolean":
                self._apply(setting, setting.option.current_value is not True)
                return
            self.open_setting = setting
            self._show()
            return
        self._apply(self.open_setting, chosen)
        self.open_setting = None
        self._show()

    @work(exit_on_error=False)
    async def _apply(self, setting: Setting, value: str | bool) -> None:
        try:
            if setting.option is None:
                await self.session.set_mode(str(value))
            else:
                await self.session.set_config_option(setting.option, value)
        except RpcError as error:
            self.app.notify(error.message, title=f"{setting.name} not changed", severity="error")
        self._show()

    def action_back(self) -> None:
        if self.open_setting is not None:
            self.open_setting = None
            self._show()
        else:
            self.dismiss(None)


def next_mode(app: App[object], session: Session) -> None:
    """Switch to the next mode (the `mode` config option, else the v1 modes)."""
    state = session.state
    option = next((o for o in state.config_options if o.category == "mode"), None)

    async def switch() -> None:
        try:
            if option is not None:
                values = [c.value for c in option.choices()]
                if values:
                    index = (
                        values.index(option.current_value) if option.current_value in values else -1
                    )
                    await session.set_config_option(option, str(values[(index + 1) % len(values)]))
            elif state.modes:
                ids = [m.id for m in state.modes]
                index = ids.index(state.current_mode) if state.current_mode in ids else -1
                await session.set_mode(ids[(index + 1) % len(ids)])
        except RpcError as error:
            app.notify(error.message, title="Mode not changed", severity="error")

    app.run_worker(switch(), exit_on_error=False)
