"""Progress as data: the engine reports how far a long call is as a `Progress` event, and only the UI (the pages'
bar, components/present/progress.py) and the command line (cli/commands.py) turn it into words. Nothing parses
progress text back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

LOAD = "load"  # loading a model: no steps, `detail` says what happens (converting the bundled GGUF, ...)
LAYER = "layer"  # a forward pass of `analyze`: step = layers done, part = the pass (one per RoPE recipe)
TOKEN = "token"  # greedy generation: step = tokens generated
EVALUATION = "evaluation"  # a fit's search: step = evaluations done, steps = at most this many, part = the fold
PASS = "pass"  # a run of many passes (the retrieval probe's): step = the pass now running, steps = passes to run
STAGES = (LOAD, LAYER, TOKEN, EVALUATION, PASS)


@dataclass(frozen=True, kw_only=True)
class Progress:
    """How far a call is. `fraction` covers the whole call (0..1); step of steps counts what `stage` names within
    part of parts (a pass of an analysis, a fold of a fit); `seconds_left` is estimated from the speed of the steps
    done (None where there is no estimate); `detail` is what runs, for a reader, never parsed."""

    stage: str
    fraction: float
    step: int = 0
    steps: int = 0
    part: int = 1
    parts: int = 1
    seconds_left: float | None = None
    detail: str = ""


OnProgress = Callable[[Progress], None]


def report_progress(on_progress: OnProgress | None, event: Progress) -> None:
    """Hand `event` to the caller's callback, if there is one."""
    if on_progress is not None:
        on_progress(event)
