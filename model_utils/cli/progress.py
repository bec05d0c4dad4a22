"""The command line's words for the engine's progress events (core.progress): one line each, on stderr. The pages
have their own (components/present/progress.py); the engine never formats progress."""

from __future__ import annotations

import sys

from model_utils.core.progress import EVALUATION, LAYER, TOKEN, Progress


def progress_line_text(event: Progress) -> str:
    """'Layer 3 of 30 (pass 1 of 2, 4 temperature(s) at once, 2,048 tokens), about 20 s left', 'Token 5 of 40',
    'fold 1 of 3: evaluation 4 of at most 12, T = 1.1 (...); at most 2 min left in this fold', or what a model
    load is doing."""
    if event.stage == LAYER:
        which = "" if event.parts == 1 else f"pass {event.part} of {event.parts}, "
        return (f"Layer {event.step} of {event.steps} ({which}{event.detail}), "
                f"about {event.seconds_left or 0:.0f} s left")
    if event.stage == TOKEN:
        return f"Token {event.step} of {event.steps}"
    if event.stage == EVALUATION:
        return (f"fold {event.part} of {event.parts}: evaluation {event.step} of at most {event.steps}, "
                f"{event.detail}; at most {(event.seconds_left or 0) / 60:.0f} min left in this fold")
    return event.detail


def progress_line(event: Progress) -> None:
    """Redraw one line on a terminal ([ 40%] and the event's words); nothing when stderr is not a terminal."""
    if sys.stderr.isatty():
        print(f"\r[{event.fraction:4.0%}] {progress_line_text(event):<70}", end="\n" if event.fraction >= 1 else "",
              file=sys.stderr, flush=True)


def progress_lines(event: Progress) -> None:
    """One line per event, for slow events worth a log line each (a fit's evaluations)."""
    print(progress_line_text(event), file=sys.stderr, flush=True)
