"""Rich styles that follow the Textual theme, and the console that renders with them.

Transcript content is rendered by Rich (Markdown, syntax, diffs) into strips that widgets cache.
Rich looks styles up by name on its console, so each Textual theme gets one private console
whose Rich theme is built from the Textual theme's variables: code, headings and diffs then
change colour with the app's theme like the rest of the screen.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions
from rich.style import Style
from rich.theme import Theme
from textual.color import Color


@dataclass(frozen=True, slots=True)
class Palette:
    """The colours of one Textual theme, as Rich styles and a console that knows them."""

    name: str
    dark: bool
    console: Console
    code_theme: str
    code_background: str
    """Behind fenced code and diffs: a shade apart from the transcript's background."""

    def options(self, width: int) -> ConsoleOptions:
        return self.console.options.update(width=max(1, width), height=None)

    def style(self, name: str) -> Style:
        return self.console.get_style(name, default="none")


_PALETTES: dict[tuple[str, int], Palette] = {}


def palette_for(theme_name: str, variables: dict[str, str], dark: bool) -> Palette:
    """The palette for a theme; built once per theme (a console and a few dozen styles)."""
    key = (theme_name, hash(frozenset(variables.items())))
    palette = _PALETTES.get(key)
    if palette is None:
        palette = _PALETTES[key] = _build(theme_name, variables, dark)
    return palette


def _build(theme_name: str, variables: dict[str, str], dark: bool) -> Palette:
    background = _color(variables.get("background", "#121212"), Color(18, 18, 18))
    foreground = _color(variables.get("foreground", "#e0e0e0"), Color(224, 224, 224), background)

    def color(name: str, fallback: str = "#888888") -> str:
        parsed = _color(variables.get(name, fallback), Color.parse(fallback), background)
        if parsed.a < 1:
            parsed = background.blend(parsed.with_alpha(1.0), parsed.a)
        return parsed.hex6

    muted = background.blend(foreground, 0.6).hex6
    faint = background.blend(foreground, 0.35).hex6
    code_background = background.blend(foreground, 0.06 if dark else 0.05).hex6
    primary = color("text-primary", "#57a5e2")
    accent = color("text-accent", "#ffc473")
    success = color("text-success", "#8ad4a1")
    error = color("text-error", "#d17e92")
    warning = color("text-warning", "#ffc473")
    add_bg = background.blend(Color.parse(color("success", "#4ebf71")), 0.18).hex6
    remove_bg = background.blend(Color.parse(color("error", "#b93c5b")), 0.20).hex6
    styles = {
        "markdown.paragraph": "",
        "markdown.text": "",
        "markdown.em": "italic",
        "markdown.emph": "italic",
        "markdown.strong": "bold",
        "markdown.s": "strike",
        "markdown.code": f"{accent} on {code_background}",
        "markdown.code_block": f"on {code_background}",
        "markdown.block_quote": f"italic {muted}",
        "markdown.block_quote.bar": faint,
        "markdown.list": "",
        "markdown.item": "",
        "markdown.item.bullet": f"bold {accent}",
        "markdown.item.number": accent,
        "markdown.hr": faint,
        "markdown.h1": f"bold {primary}",
        "markdown.h1.border": faint,
        "markdown.h2": f"bold {primary}",
        "markdown.h3": "bold",
        "markdown.h4": f"bold {muted}",
        "markdown.h5": f"italic {muted}",
        "markdown.h6": f"italic {muted}",
        "markdown.h7": f"italic {muted}",
        "markdown.link": f"underline {primary}",
        "markdown.link_url": f"underline {primary}",
        "markdown.table.border": faint,
        "markdown.table.header": "bold",
        "markdown.kbd": f"bold {accent}",
        "acp.muted": muted,
        "acp.faint": faint,
        "acp.primary": primary,
        "acp.accent": accent,
        "acp.success": success,
        "acp.error": error,
        "acp.warning": warning,
        "acp.chip": f"{foreground.hex6} on {code_background}",
        "acp.chip.kind": f"bold {accent} on {code_background}",
        "acp.diff.add": f"on {add_bg}",
        "acp.diff.remove": f"on {remove_bg}",
        "acp.diff.add.sign": f"bold {success} on {add_bg}",
        "acp.diff.remove.sign": f"bold {error} on {remove_bg}",
        "acp.diff.gutter": faint,
        "acp.diff.hunk": f"{primary} on {code_background}",
        "acp.code": f"on {code_background}",
    }
    theme = Theme({name: Style.parse(value) for name, value in styles.items()}, inherit=True)
    console = Console(
        file=io.StringIO(),
        width=80,
        color_system="truecolor",
        force_terminal=True,
        legacy_windows=False,
        markup=False,
        emoji=False,
        highlight=False,
        theme=theme,
    )
    return Palette(
        name=theme_name,
        dark=dark,
        console=console,
        code_theme="github-dark" if dark else "default",
        code_background=code_background,
    )


def _color(value: str, fallback: Color, background: Color | None = None) -> Color:
    """A theme variable as a colour; `auto N%` (contrast text) resolves against the
    background, as Textual does."""
    value = value.strip()
    if value.startswith("auto"):
        base = background or Color(18, 18, 18)
        percent = value.removeprefix("auto").strip().rstrip("%") or "100"
        contrast = base.get_contrast_text()
        return base.blend(contrast.with_alpha(1.0), float(percent) / 100)
    try:
        return Color.parse(value)
    except Exception:
        return fallback
