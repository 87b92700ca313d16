"""The footer's key bar: Textual's `Footer`, rebuilt only when the keys it offers change."""

from __future__ import annotations

from textual.widgets import Footer


class KeyFooter(Footer):
    """Textual's footer rebuilds (recomposes) every key each time the screen's bindings may
    have changed: any focus change, a screen's resume, every `refresh_bindings` (the chat
    screen calls it at each turn's start and end). Mostly the keys are the same (three
    rebuilds before the first frame, one of them needed). Here a rebuild that would show
    the same bindings as the keys on screen is skipped."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._offered: tuple[object, ...] | None = None
        """What the keys on screen were composed from: the bindings, and the palette's key."""

    async def recompose(self) -> None:
        if not self.is_attached:
            return  # its screen was closed (Textual's own does nothing then, either)
        # Every active binding (with whether it is enabled), not only the shown ones: the
        # command palette's key is looked up among them too.
        offered = (
            self.show_command_palette,
            *((b.binding, b.enabled, b.tooltip) for b in self.screen.active_bindings.values()),
        )
        # No keys on screen: the footer composed nothing yet (Textual's waits for the
        # screen's bindings), so whatever it was composed from says nothing.
        if self.children and offered == self._offered:
            return
        self._offered = offered
        await super().recompose()
