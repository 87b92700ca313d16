"""How full the context window is, what the last turn took and the session cost, and the
current mode and model."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from acp_tui.protocol.updates import TurnUsage, display_order
from acp_tui.session.state import SessionState

BAR_CELLS = 20


def human_tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{count / 1000:.0f}k"
    if count >= 1000:
        return f"{count / 1000:.1f}k"
    return str(count)


def turn_summary(usage: TurnUsage) -> str:
    """`turn 1.2k in (30k cached) / 340 out`: what the last turn took."""
    cached = usage.cached_read_tokens
    read = f" ({human_tokens(cached)} cached)" if cached else ""
    written = human_tokens(usage.output_tokens)
    return f"turn {human_tokens(usage.input_tokens)} in{read} / {written} out"


class UsageBar(Static):
    """`context ━━━━━──────── 12.3k / 200k 6%  ·  turn 1.2k in / 340 out  ·  $0.0123  ·  mode Ask
    ·  model Demo Fast`"""

    DEFAULT_CSS = """
    UsageBar {
        height: 1;
        width: 1fr;
        padding: 0 2;
        color: $text-muted;
    }
    """

    used: reactive[int | None] = reactive(None)
    """Tokens in the context window (`usage_update.used`)."""
    window: reactive[int | None] = reactive(None)
    """The context window's size (`usage_update.size`)."""
    turn: reactive[str] = reactive("")
    """What the last turn took (`turn_summary`), when the agent says."""
    cost: reactive[str] = reactive("")
    """The session's cost so far, formatted with its currency, when the agent sends it."""
    settings: reactive[str] = reactive("")
    """The current mode and model, e.g. `mode Ask · model Demo Fast`."""
    violations: reactive[int] = reactive(0)
    """Messages of the agent's that broke the protocol's schema (the live check)."""

    def watch_used(self) -> None:
        self._redraw()

    def watch_window(self) -> None:
        self._redraw()

    def watch_turn(self) -> None:
        self._redraw()

    def watch_cost(self) -> None:
        self._redraw()

    def watch_settings(self) -> None:
        self._redraw()

    def watch_violations(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        parts: list[Content] = []
        used, size = self.used, self.window
        if used is not None and size:
            ratio = max(0.0, min(1.0, used / size))
            filled = round(ratio * BAR_CELLS)
            colour = (
                "$text-success"
                if ratio < 0.6
                else "$text-warning"
                if ratio < 0.85
                else "$text-error"
            )
            parts.append(
                Content.assemble(
                    "context ",
                    ("━" * filled, colour),
                    ("━" * (BAR_CELLS - filled), "$foreground 15%"),
                    f" {human_tokens(used)} / {human_tokens(size)} ",
                    (f"{ratio:.0%}", "bold"),
                )
            )
        if self.turn:
            parts.append(Content(self.turn))
        if self.cost:
            parts.append(Content(self.cost))
        if self.settings:
            parts.append(Content(self.settings))
        if self.violations:
            plural = "s" if self.violations > 1 else ""
            text = f"⚠ {self.violations} protocol violation{plural} (F12)"
            parts.append(Content.styled(text, "$text-warning"))
        self.update(Content("  ·  ").join(parts))


def settings_summary(state: SessionState) -> str:
    """`mode Ask · model Demo Fast`: the first three selects, in the agent's order."""
    parts: list[str] = []
    options = [o for o in display_order(state.config_options) if o.type == "select"]
    has_mode_option = any(o.category == "mode" for o in options)
    if state.modes and not has_mode_option:
        current = next((m.name for m in state.modes if m.id == state.current_mode), None)
        if current:
            parts.append(f"mode {current}")
    for option in options[:3]:
        value = next(
            (c.name for c in option.choices() if c.value == option.current_value),
            option.current_value,
        )
        parts.append(f"{option.name.lower()} {value}")
    return " · ".join(parts)
