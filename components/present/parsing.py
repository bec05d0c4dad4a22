"""What users type (temperatures, a window, scores) and what links carry, parsed into values. A value that does not
parse raises ValueError (AnalysisError for temperatures) with a message for the user."""

from __future__ import annotations

import math
import re

from model_utils.core.errors import AnalysisError
from model_utils.core.limits import resolve_temperatures

MAX_SCORES = 64  # keys in the Softmax lab: more bars than this are unreadable
# Temperatures compared at once on a page: one panel per temperature side by side stays readable up to 6 on a laptop
# screen (the engine takes up to core.limits.MAX_TEMPERATURES, for the command line).
MAX_UI_TEMPERATURES = 6
MAX_WINDOW = 4096  # the recent window, in tokens: no page runs longer texts


def parse_temperatures(text: str) -> tuple[float, ...]:
    """'0.5, 1 2' -> (0.5, 1.0, 2.0); raises AnalysisError with a message for the user."""
    parts = [part for part in re.split(r"[,\s;]+", text.strip()) if part]
    if len(parts) > MAX_UI_TEMPERATURES:
        raise AnalysisError(f"at most {MAX_UI_TEMPERATURES} temperatures at once; {len(parts)} were given")
    return tuple(resolve_temperatures(parts))


def format_numbers(values) -> str:
    """(0.5, 1.0, 2.0) -> '0.5, 1, 2': numbers as a text box shows them."""
    return ", ".join(f"{value:g}" for value in values)


def parse_window(text: str) -> int:
    value = int(text)
    if not 1 <= value <= MAX_WINDOW:
        raise ValueError("window out of range")
    return value


def parse_scores(text: str) -> list[float]:
    """'5, 0 0; 1' -> [5.0, 0.0, 0.0, 1.0]: 2 to MAX_SCORES finite numbers within +-1e6."""
    parts = [part for part in re.split(r"[,\s;]+", text.strip()) if part]
    try:
        scores = [float(part) for part in parts]
    except ValueError:
        raise ValueError("scores must be numbers separated by commas, e.g. 5, 0, 0, 0") from None
    if not 2 <= len(scores) <= MAX_SCORES:
        raise ValueError(f"give between 2 and {MAX_SCORES} scores; {len(scores)} were given")
    if not all(math.isfinite(score) and abs(score) <= 1e6 for score in scores):
        raise ValueError("every score must be a finite number between -1e6 and 1e6")
    return scores


def nearest_on_log_scale(raw: str, options: list[float]) -> float:
    """The option closest to the positive number `raw` on a log scale (a link's lab_t=2.1 -> the slider's 2)."""
    value = float(raw)
    if not value > 0:
        raise ValueError("not a positive number")
    return min(options, key=lambda option: abs(math.log(option) - math.log(value)))


def parse_choice(raw: str, options) -> object:
    """`raw` as the option it names (options may be numbers): a link can only pick what the widget offers."""
    for option in options:
        if str(option) == raw:
            return option
    raise ValueError(f"{raw!r} is not one of the choices")
