"""The limits of a request and the checks of what a user asks for, with numpy only: the pages and the command line
run them before they import torch; the engine's request check builds on them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model_utils.core.errors import AnalysisError
from model_utils.core.schedules import Schedule
from model_utils.core.softmax import check_temperature

MODES = ("in-model", "isolated")
# One batch row per temperature in in-model mode: 8 rows of 4,096 tokens keep a pass within a few GB.
MAX_TEMPERATURES = 8
# The longest text one pass takes: 4x the bundled model's 16,384-token sweep, still within a few GB per pass.
MAX_TOKENS = 65_536


def resolve_temperatures(temperatures: Sequence) -> list[float | Schedule]:
    """Check the list: 1..MAX_TEMPERATURES entries, each an accepted T or a Schedule, none twice."""
    if isinstance(temperatures, np.ndarray):
        temperatures = temperatures.tolist()
    if isinstance(temperatures, (str, bytes)) or not isinstance(temperatures, Sequence):
        raise AnalysisError("temperatures must be a list of numbers, e.g. [0.5, 1, 2]")
    if not temperatures:
        raise AnalysisError("give at least one temperature, e.g. [0.5, 1, 2]")
    if len(temperatures) > MAX_TEMPERATURES:
        raise AnalysisError(f"at most {MAX_TEMPERATURES} temperatures at once; {len(temperatures)} were given")
    resolved = []
    for entry in temperatures:
        try:
            value = entry if isinstance(entry, Schedule) else check_temperature(entry)
        except ValueError as error:
            raise AnalysisError(str(error)) from None
        if value in resolved:
            raise AnalysisError(f"temperature {entry} is listed twice; list each temperature once")
        resolved.append(value)
    return resolved


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    """`value` as an int within [low, high], or AnalysisError naming `name` and the bounds."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise AnalysisError(f"{name} must be a whole number, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"between {low} and {high}"
        raise AnalysisError(f"{name} must be {bound}, got {value}")
    return int(value)
