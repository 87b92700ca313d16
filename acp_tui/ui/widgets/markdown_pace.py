"""How much a `MarkdownView` does a frame, and when: the figures behind its pacing (each
measured: bench/README.md, "Streaming" and "Long answers (issue 29)")."""

FRAME = 1 / 60
"""Seconds between two renders of a streaming tail: the screen cannot show more."""
FOLD_STEP = 2048
"""Characters of new text parsed at a time (a small share of what markdown-it parses in a
frame's `PARSE_TIME`: bench/README.md, "Streaming"; each parse also parses the tail again, so
not much less)."""
PARSE_TIME = 0.015
"""Seconds a frame may spend parsing new text (~20 KB; the rest waits for the next frame): a
share of a flood's frame large enough for the display to keep up with the agent (bench/README.md,
"Long answers (issue 29)")."""
SKIM_PIECE = 1024
"""Characters of skimmed text (see `_skim`) in one piece, at least: a piece is parsed and
rendered at once when it is shown or caught up on (~2-4 ms a KB, as a frame parses)."""
SKIM_TEXT = 256 * 1024
"""Characters a view skims in a frame, at most."""
TAIL_PACE = 4.0
"""A tail that took t seconds to render is rendered again no sooner than `TAIL_PACE` * t later
(its new text waits): a tail of a millisecond is rendered every frame, a 600 KB paragraph is
not (rendered every frame, it made its stream quadratic)."""
TYPING_PARSE_TIME = 0.005
"""`PARSE_TIME` while the user types (a key within `TYPING` s): a key waits for shorter frames."""
TYPING = 1.0
"""Seconds after a key press during which the user counts as typing."""
FOLD_TIME = 0.010
"""Seconds a frame may spend catching up on estimated heights (once the text paused), or
measuring a view again at a new width: with the screen's update, it stays under 20 ms."""
QUIET = 0.5
"""Seconds without text for any view after which estimated blocks are rendered (`_catch_up`):
rendering blocks no one sees took more than half of a flood's frames (bench/README.md, "Long
answers (issue 29)"), so it waits for a pause (the end of the answer, in a flood), longer
than a slow frame of the flood is."""
WHOLE_TEXT = 8192
"""Characters of text a view takes in whole at its first layout, heights exact at once (a
message shown again). More is taken in as a stream is, a frame's worth at a time: a flood is
read for a while before its message's first layout (66 KB in the long-answer bench), and taking
all of it in held the answer's first frame for most of a second (bench/README.md, "Long answers
(issue 29)")."""
