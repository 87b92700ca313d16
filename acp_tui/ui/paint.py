"""Showing what the user typed at once, without waiting for the screen's next frame.

Textual paints the screen on a 60 Hz timer: a change waits for the timer's next tick. While an
agent streams, every tick is taken, so a key typed just after one waits up to a whole tick,
and behind whatever else the loop runs meanwhile (bench/README.md, "Typing latency").
`paint_now` composites just the widget's changed lines over the layout already on screen and
hands them to the driver, as the screen's own update does; everything else (the stream, a
change of the widget's size) waits for the tick.

It uses Textual internals (the screen's compositor and `App._display`), pinned by the
`textual<9` requirement and exercised by the prompt's tests.
"""

from __future__ import annotations

from textual.widget import Widget


def paint_now(widget: Widget) -> None:
    """Put `widget`'s pending repaint on the screen now (a no-op when its layout changed: the
    next frame lays it out and paints it)."""
    app = widget.app
    if widget._layout_required or app._batch_count or app.is_inline or not widget.is_attached:
        return
    screen = widget.screen
    if not screen.is_current:
        return
    compositor = screen._compositor
    if widget not in compositor.visible_widgets:
        return
    compositor.update_widgets({widget})
    app._display(screen, compositor.render_update(screen_stack=app._background_screens))
