"""A view is what one batch row of a pass runs: a constant temperature or a published schedule, on the model's own
rotary positions or on a RoPE recipe. T = 1 with no recipe is the model as trained, the reference every other view
is compared with (`reference_index`, the one place that finds it). Numpy only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model_utils.core.errors import AnalysisError
from model_utils.core.rope import Rope
from model_utils.core.schedules import PositionSchedule, logit_multipliers, spec_label
from model_utils.core.softmax import check_temperature


@dataclass(frozen=True)
class View:
    """A temperature (or schedule) `spec` with an optional RoPE recipe."""

    spec: float | PositionSchedule
    rope: Rope | None = None

    @property
    def label(self) -> str:
        """'T=1.25', 'yarn (scale=2)', 'yarn-rope (s=2) + T=1.25'."""
        return spec_label(self.spec) if self.rope is None else f"{self.rope.label} + {spec_label(self.spec)}"

    @property
    def temperature(self) -> float | None:
        return None if isinstance(self.spec, PositionSchedule) else self.spec

    @property
    def schedule(self) -> PositionSchedule | None:
        return self.spec if isinstance(self.spec, PositionSchedule) else None

    @property
    def is_plain(self) -> bool:
        """A constant temperature on the model's own positions: the grid the best temperature is chosen from."""
        return self.rope is None and self.temperature is not None

    def multipliers(self, n_tokens: int) -> np.ndarray:
        return logit_multipliers(self.spec, n_tokens)


def as_view(entry, rope: Rope | None = None) -> View:
    """A View from a View, a Schedule or a temperature (checked), on `rope` unless the entry is a View already."""
    if isinstance(entry, View):
        return View(_spec(entry.spec), entry.rope)
    return View(_spec(entry), rope)


def _spec(entry) -> float | PositionSchedule:
    if isinstance(entry, PositionSchedule):
        return entry
    try:
        return check_temperature(entry)
    except ValueError as error:
        raise AnalysisError(str(error)) from None


def passes_of(views: Sequence[View]) -> list[tuple[Rope | None, list[int]]]:
    """The views grouped into passes, one per recipe in order of first appearance: (recipe, indices of its
    views)."""
    groups: dict[Rope | None, list[int]] = {}
    for index, view in enumerate(views):
        groups.setdefault(view.rope, []).append(index)
    return list(groups.items())


def reference_index(runs: Sequence, rope: Rope | None = None) -> int | None:
    """Which of `runs` is the reference the others are compared with: T = 1 on `rope` (None: the model as trained,
    on its own positions), not a schedule; None where none ran. A run is anything with a `temperature` and a `rope`:
    a View, a sweep's or a tune's result, what a verdict knows of a view."""
    return next((index for index, run in enumerate(runs) if run.temperature == 1.0 and run.rope == rope), None)
