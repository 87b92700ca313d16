"""A Rich renderable drawn with the transcript palette (chips, diffs headers, raw JSON)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import RenderableType
from textual.strip import Strip

from acp_tui.ui.widgets.strips_view import StripsView, render_strips


class RenderView(StripsView):
    """Shows what `make()` returns, rendered once per width and content change."""

    def __init__(
        self,
        make: Callable[[], RenderableType],
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._make = make

    def set_maker(self, make: Callable[[], RenderableType]) -> None:
        self._make = make
        self.invalidate()

    def build_lines(self, width: int) -> list[Strip]:
        return render_strips(self.palette, self._make(), width)
