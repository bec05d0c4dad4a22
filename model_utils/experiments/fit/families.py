"""The one-parameter temperature families the fitter tunes: a constant temperature T (on the model's own positions
or on a RoPE recipe), and T(p) = 1 + a ln(max(1, (p + 1) / L)), 1 up to the trained length L (core.schedules
.LengthTemperature). Each says its knob, the bounds the optimizer searches and the tolerance it stops at; the words
say what each fits (verdicts.words.FIT_FAMILIES)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from model_utils.core.schedules import LengthTemperature, PositionSchedule


@dataclass(frozen=True, kw_only=True)
class Family:
    name: str
    knob: str  # the parameter's name, as shown to users
    bounds: tuple[float, float]  # searched by the optimizer (--bounds overrides)
    tolerance: float  # the optimizer stops once the minimum is located to within this (scipy's xatol)
    spec_of: Callable[[float, int], float | PositionSchedule]  # (value, trained length) -> what a pass runs

    def spec(self, value: float, trained_length: int) -> float | PositionSchedule:
        return self.spec_of(value, trained_length)


FAMILIES = {
    "constant": Family(
        name="constant", knob="T", bounds=(0.6, 1.6), tolerance=0.01, spec_of=lambda value, _: value),
    "logn": Family(
        name="logn", knob="a", bounds=(-0.6, 1.0), tolerance=0.01,
        spec_of=lambda value, trained: LengthTemperature(value, trained)),
}
