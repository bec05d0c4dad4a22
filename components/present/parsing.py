"""What users type (temperatures, a window, scores) and what links carry, parsed into values. A value that does not
parse raises ValueError (AnalysisError for temperatures) with a message for the user."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from model_utils.core.errors import AnalysisError
from model_utils.core.limits import resolve_temperatures

MAX_SCORES = 64  # keys in the Softmax lab: more bars than this are unreadable
# Temperatures compared at once on a page: one panel per temperature side by side stays readable up to 6 on a laptop
# screen (the engine takes up to core.limits.MAX_TEMPERATURES, for the command line).
MAX_UI_TEMPERATURES = 6
MAX_WINDOW = 4096  # the recent window, in tokens: no page runs longer texts
# The Softmax lab's slider: 0.1 .. 10 in 20 log steps a decade, to 2 digits so that it lands on 0.2, 0.25, 0.5, 2, 5
LAB_GRID = tuple(float(f"{0.1 * 10 ** (step / 20):.2g}") for step in range(41))
_SEPARATORS = re.compile(r"[,\s;]+")
_DIGIT_COMMA_DIGIT = re.compile(r"(?<![\d.])(\d+),(\d+)(?![\d.])")  # 0,5 but not the 5,1 of 0.5,1
# A comma between digits while other numbers are apart by ';' or by spaces alone: '0,5; 2', '0,5 2'
_DECIMAL_COMMA_LIST = re.compile(r";|\d\s+[-+.\d]")


def _numbers_of(text: str) -> list[str]:
    return [part for part in _SEPARATORS.split(text.strip()) if part]


def decimal_comma_hint(text: str) -> str | None:
    """'use a point for decimals: 0.5, not 0,5' when `text` holds a comma between two digits (the user's own
    number quoted back), else None. A comma is also the list's separator, so this is a hint, never a reading."""
    match = _DIGIT_COMMA_DIGIT.search(text)
    return None if match is None else f"use a point for decimals: {match[1]}.{match[2]}, not {match[0]}"


def _refuse_decimal_commas(text: str, error: type[Exception]) -> None:
    """Raise `error` with the hint where the list reads only as decimal commas ('0,5; 2': ';' or spaces part the
    numbers, so the comma between digits is not a separator)."""
    hint = decimal_comma_hint(text)
    if hint is not None and _DECIMAL_COMMA_LIST.search(text):
        raise error(f"{hint}; separate the numbers with commas, e.g. 0.5, 2")


def parse_temperatures(text: str) -> tuple[float, ...]:
    """'0.5, 1 2' -> (0.5, 1.0, 2.0); raises AnalysisError with a message for the user, which hints at a point for
    decimals where the text holds a comma between digits ('0,5, 2' reads as 0, 5 and 2)."""
    _refuse_decimal_commas(text, AnalysisError)
    parts = _numbers_of(text)
    try:
        if len(parts) > MAX_UI_TEMPERATURES:
            raise AnalysisError(f"at most {MAX_UI_TEMPERATURES} temperatures at once; {len(parts)} were given")
        return tuple(resolve_temperatures(parts))
    except AnalysisError as error:
        hint = decimal_comma_hint(text)
        if hint is None:
            raise
        raise AnalysisError(f"{hint} (as written, {error})") from None


def format_numbers(values) -> str:
    """(0.5, 1.0, 2.0) -> '0.5, 1, 2': numbers as a text box shows them."""
    return ", ".join(f"{value:g}" for value in values)


def parse_window(text: str) -> int:
    value = int(text)
    if not 1 <= value <= MAX_WINDOW:
        raise ValueError("window out of range")
    return value


def parse_scores(text: str) -> list[float]:
    """'5, 0 0; 1' -> [5.0, 0.0, 0.0, 1.0]: 2 to MAX_SCORES finite numbers within +-1e6; '0,5; 2' is refused with a
    hint at a point for decimals (it would read as 0, 5 and 2)."""
    _refuse_decimal_commas(text, ValueError)
    parts = _numbers_of(text)
    try:
        scores = [float(part) for part in parts]
    except ValueError:
        raise ValueError("scores must be numbers separated by commas, e.g. 5, 0, 0, 0") from None
    if not 2 <= len(scores) <= MAX_SCORES:
        raise ValueError(f"give between 2 and {MAX_SCORES} scores; {len(scores)} were given")
    if not all(math.isfinite(score) and abs(score) <= 1e6 for score in scores):
        raise ValueError("every score must be a finite number between -1e6 and 1e6")
    return scores


def slider_temperatures(listed: Sequence[float], grid: Sequence[float] = LAB_GRID) -> list[float]:
    """The lab slider's options: `grid` with the `listed` temperatures in it exactly, in order, and without the grid
    points within half a grid step of a listed one (0.501 beside 0.5 would only draw a second, identical panel)."""
    half_step = math.log10(grid[-1] / grid[0]) / (len(grid) - 1) / 2
    kept = [t for t in grid if all(abs(math.log10(t / float(near))) >= half_step for near in listed)]
    return sorted({*kept, *(float(t) for t in listed)})


def nearest_on_log_scale(raw: str | float, options: Sequence[float]) -> float:
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
