"""How full the context window is, what the last turn took and the session cost, and the
current mode and model: one line that always fits its width, its items shortened as the width
asks, never one cut off at its end."""

from __future__ import annotations

from typing import NamedTuple

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from acp_tui.protocol.updates import TurnUsage, display_order
from acp_tui.session.state import SessionState

BAR_CELLS = 20
SEPARATORS = ("  ·  ", " · ")
"""Between the items, the second when the line is tight (and between settings always)."""
SHORTER_BAR, NO_CACHE, NO_BAR, VALUES_ONLY, SHORT_TURN = range(1, 6)
"""The steps that shorten the line, in order, least lost first: the meter's bar half as long,
the turn's cached tokens, the bar, the settings' names ("model", "effort"), "in" and "out"."""
MIN_CELLS = 8
"""What a name cut short keeps at least (its ellipsis included)."""
TURN, COST, CONTEXT, SETTING = range(4)
"""The order in which items leave a line too narrow for them all (never its last)."""


class Item(NamedTuple):
    """One item of the line."""

    forms: tuple[tuple[int, Content], ...]
    """How it reads: whole first (step 0), then each shorter form with the step that takes it."""
    tight: bool = False
    """Joined to the item before it by the tight separator (one setting after another)."""
    cut: bool = False
    """A name that may be cut short with an ellipsis (a model's), where figures may not."""
    drop: int = 0
    """When the line cannot fit it, it goes before those of a higher `drop`."""


def human_tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{count / 1000:.0f}k"
    if count >= 1000:
        return f"{count / 1000:.1f}k"
    return str(count)


def turn_summary(usage: TurnUsage) -> tuple[tuple[int, str], ...]:
    """What the last turn took: `turn 1.2k in (30k cached) / 340 out`, and its shorter forms
    (without the cache, then `turn 1.2k/340`), each with the step that takes it."""
    cached = usage.cached_read_tokens
    read, written = human_tokens(usage.input_tokens), human_tokens(usage.output_tokens)
    forms = [(0, f"turn {read} in / {written} out"), (SHORT_TURN, f"turn {read}/{written}")]
    if cached:
        whole = f"turn {read} in ({human_tokens(cached)} cached) / {written} out"
        forms[0] = (NO_CACHE, forms[0][1])
        forms.insert(0, (0, whole))
    return tuple(forms)


def settings_summary(state: SessionState) -> tuple[tuple[str, str], ...]:
    """`(("mode", "Ask"), ("model", "Demo Fast"))`: the first three selects, in the agent's
    order, each with its name."""
    parts: list[tuple[str, str]] = []
    options = [o for o in display_order(state.config_options) if o.type == "select"]
    has_mode_option = any(o.category == "mode" for o in options)
    if state.modes and not has_mode_option:
        current = next((m.name for m in state.modes if m.id == state.current_mode), None)
        if current:
            parts.append(("mode", current))
    for option in options[:3]:
        value = next(
            (c.name for c in option.choices() if c.value == option.current_value),
            option.current_value,
        )
        parts.append((option.name.lower(), value))
    return tuple(parts)


class UsageBar(Widget):
    """`context ━━━━━──────── 12.3k / 200k 6%  ·  turn 1.2k in / 340 out  ·  $0.0123  ·  mode Ask
    · model Demo Fast`"""

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
    turn: reactive[tuple[tuple[int, str], ...]] = reactive(())
    """What the last turn took (`turn_summary`), when the agent says."""
    cost: reactive[str] = reactive("")
    """The session's cost so far, formatted with its currency, when the agent sends it."""
    settings: reactive[tuple[tuple[str, str], ...]] = reactive(())
    """The current mode, model and the like (`settings_summary`)."""
    violations: reactive[int] = reactive(0)
    """Messages of the agent's that broke the protocol's schema (the live check)."""

    def render(self) -> Content:
        return fit(self._items(), self.size.width)

    def _items(self) -> list[Item]:
        items: list[Item] = []
        used, size = self.used, self.window
        if used is not None and size:
            items.append(Item(context_forms(used, size), drop=CONTEXT))
        if self.turn:
            forms = tuple((step, Content(text)) for step, text in self.turn)
            items.append(Item(forms, drop=TURN))
        if self.cost:
            items.append(Item(((0, Content(self.cost)),), drop=COST))
        for index, (name, value) in enumerate(self.settings):
            forms = ((0, Content(f"{name} {value}")), (VALUES_ONLY, Content(value)))
            items.append(Item(forms, tight=index > 0, cut=True, drop=SETTING + index))
        if self.violations:
            count, plural = self.violations, "s" if self.violations > 1 else ""
            warning = f"⚠ {count} protocol violation{plural} (F12)"
            items.append(Item(((0, Content.styled(warning, "$text-warning")),)))
        return items


def context_forms(used: int, size: int) -> tuple[tuple[int, Content], ...]:
    """`context ━━━━━━── 12.3k / 200k 6%`, then with a bar half as long, then with none."""
    ratio = max(0.0, min(1.0, used / size))
    colour = "$text-success" if ratio < 0.6 else "$text-warning" if ratio < 0.85 else "$text-error"
    share = (f"{ratio:.0%}", "bold")
    figures = Content.assemble(f"{human_tokens(used)} / {human_tokens(size)} ", share)

    def bar(cells: int) -> Content:
        filled = round(ratio * cells)
        return Content.assemble(
            ("━" * filled, colour), ("━" * (cells - filled), "$foreground 15%"), " "
        )

    return (
        (0, Content.assemble("context ", bar(BAR_CELLS), figures)),
        (SHORTER_BAR, Content.assemble("context ", bar(BAR_CELLS // 2), figures)),
        (NO_BAR, Content.assemble("context ", figures)),
    )


def fit(items: list[Item], width: int) -> Content:
    """`items` on one line of `width` cells: whole when they fit; else closer together, then
    shortened step by step (`SHORTER_BAR`...), then with names cut short and, if it must, the
    items that matter least left out (`Item.drop`), as few as can be. The last item is always
    whole: it is the one a line cut at its end would lose (the mode, or a violation)."""
    parts = [item.forms[0][1] for item in items]
    if _line(items, parts, SEPARATORS[0]).cell_length <= width:
        return _line(items, parts, SEPARATORS[0])
    for step in range(SHORT_TURN + 1):
        for index, item in enumerate(items):
            parts[index] = next(form for taken, form in reversed(item.forms) if taken <= step)
        if _line(items, parts, SEPARATORS[1]).cell_length <= width:
            return _line(items, parts, SEPARATORS[1])
    leaving = sorted(range(len(items) - 1), key=lambda index: items[index].drop)
    for gone in range(len(leaving) + 1):
        kept = [index for index in range(len(items)) if index not in leaving[:gone]]
        line = _cut([items[i] for i in kept], [parts[i] for i in kept], width)
        if line.cell_length <= width:
            break
    return line


def _cut(items: list[Item], parts: list[Content], width: int) -> Content:
    """The line with its names (but the last item) cut short, the widest first, to fit
    `width` if they can."""
    parts = list(parts)
    while (excess := _line(items, parts, SEPARATORS[1]).cell_length - width) > 0:
        names = [
            index
            for index, item in enumerate(items[:-1])
            if item.cut and parts[index].cell_length > MIN_CELLS
        ]
        if not names:
            break
        widest = max(names, key=lambda index: parts[index].cell_length)
        keep = max(MIN_CELLS, parts[widest].cell_length - excess)
        parts[widest] = parts[widest].truncate(keep, ellipsis=True)
    return _line(items, parts, SEPARATORS[1])


def _line(items: list[Item], parts: list[Content], separator: str) -> Content:
    joined: list[Content] = []
    for index, (item, part) in enumerate(zip(items, parts, strict=True)):
        if index:
            joined.append(Content(SEPARATORS[1] if item.tight else separator))
        joined.append(part)
    return Content.assemble(*joined)
