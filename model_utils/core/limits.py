"""The limits of a request and the checks of what a user asks for, with numpy only: the pages and the command line
run them before they import torch; the engine's request check builds on them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model_utils.core.errors import AnalysisError
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View, as_view

MODES = ("in-model", "isolated")
# One batch row per temperature in in-model mode: 8 rows of 4,096 tokens keep a pass within a few GB.
MAX_TEMPERATURES = 8
MAX_VIEWS = 4 * MAX_TEMPERATURES  # every RoPE recipe runs as a pass of its own, so a request may hold several
# The longest text one pass takes: 4x the bundled model's 16,384-token sweep, still within a few GB per pass.
MAX_TOKENS = 65_536


def resolve_views(temperatures: Sequence, rope: Rope | None = None) -> list[View]:
    """Check a request's list: temperatures, Schedules or Views (each number or Schedule on `rope`), none twice, at
    most MAX_TEMPERATURES per recipe (one pass each) and MAX_VIEWS in all."""
    if isinstance(temperatures, np.ndarray):
        temperatures = temperatures.tolist()
    if isinstance(temperatures, (str, bytes)) or not isinstance(temperatures, Sequence):
        raise AnalysisError("temperatures must be a list of numbers, e.g. [0.5, 1, 2]")
    if not temperatures:
        raise AnalysisError("give at least one temperature, e.g. [0.5, 1, 2]")
    if rope is not None and not isinstance(rope, Rope):
        raise AnalysisError(f"rope must be a Rope recipe (e.g. Rope('yarn', 2)) or None, got {rope!r}")
    views = [as_view(entry, rope) for entry in temperatures]
    per_pass = max(sum(other.rope == view.rope for other in views) for view in views)
    if per_pass > MAX_TEMPERATURES or len(views) > MAX_VIEWS:
        each = " per RoPE recipe" if any(view.rope is not None for view in views) else ""
        raise AnalysisError(f"at most {MAX_TEMPERATURES} temperatures at once{each}; {len(views)} were given")
    labels = [view.label for view in views]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise AnalysisError(f"{', '.join(twice)} is listed twice; list each temperature once")
    return views


def resolve_temperatures(temperatures: Sequence) -> list[float | Schedule]:
    """Check a list of temperatures and Schedules on the model's own positions (resolve_views)."""
    return [view.spec for view in resolve_views(temperatures)]


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    """`value` as an int within [low, high], or AnalysisError naming `name` and the bounds."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise AnalysisError(f"{name} must be a whole number, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"between {low} and {high}"
        raise AnalysisError(f"{name} must be {bound}, got {value}")
    return int(value)
