"""A view is what one batch row of a pass runs: a constant temperature or a published schedule, on the model's own
rotary positions or on a RoPE recipe. T = 1 with no recipe is the model as trained, the reference every other view
is compared with (`reference_index`, the one place that finds it). A view is stored whole (`to_dict`: its kind, its
temperature or its schedule's name and parameter, its recipe as Rope.to_dict writes it), never as its label, and its
canonical JSON is what a cache key hashes. Numpy only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model_utils.core.errors import AnalysisError
from model_utils.core.rope import Rope
from model_utils.core.schedules import LengthTemperature, PositionSchedule, Schedule, logit_multipliers, spec_label
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

    def to_dict(self) -> dict:
        """{"kind": "temperature", "temperature": 1.25, "rope": None}; a schedule by its name and parameter (None:
        its default), the fitter's log-length family by its slope and trained length; a recipe as Rope.to_dict."""
        spec = self.spec
        if isinstance(spec, Schedule):
            body = {"kind": "schedule", "schedule": spec.name,
                    "parameter": None if spec.parameter is None else float(spec.parameter)}
        elif isinstance(spec, LengthTemperature):
            body = {"kind": "length_temperature", "slope": float(spec.slope), "trained_length": spec.trained_length}
        else:
            body = {"kind": "temperature", "temperature": float(spec)}
        return body | {"rope": None if self.rope is None else self.rope.to_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> View:
        """A view as to_dict writes it; ValueError naming what is missing or wrong."""
        try:
            kind, rope = data["kind"], None if data["rope"] is None else Rope.from_dict(data["rope"])
            if kind == "schedule":
                return cls(Schedule(data["schedule"], data["parameter"]), rope)
            if kind == "length_temperature":
                return cls(LengthTemperature(data["slope"], data["trained_length"]), rope)
            if kind == "temperature":
                return cls(check_temperature(data["temperature"]), rope)
        except (KeyError, TypeError):
            pass
        raise ValueError(f"a view needs 'kind' (temperature, schedule or length_temperature), its value(s) and "
                         f"'rope', got {data!r}")

    def canonical(self) -> str:
        """to_dict as JSON with sorted keys and every number in full (repr), so two views are one string exactly when
        they are one view: what a cache key hashes (a label rounds to 6 digits)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))


class OfView:
    """What a record of one view (its field `view`) says of it: its label, temperature (None for a schedule),
    schedule, recipe, and the recipe's label ('yarn-rope (s=2)'; None on the model's own positions)."""

    @property
    def label(self) -> str:
        return self.view.label

    @property
    def temperature(self) -> float | None:
        return self.view.temperature

    @property
    def schedule(self) -> PositionSchedule | None:
        return self.view.schedule

    @property
    def rope(self) -> Rope | None:
        return self.view.rope

    @property
    def recipe(self) -> str | None:
        return None if self.view.rope is None else self.view.rope.label


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
