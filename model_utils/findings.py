"""What a report says about over-softening and where attention mass moved: pure numpy over a Report.

The collapse inspector turns these numbers into sentences. Thresholds are the page's plain-language rules:
a layer is "near uniform" when its heads' mean normalized entropy exceeds NEAR_UNIFORM, and a loss "far above"
the reference when it exceeds LOSS_FACTOR times it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model_utils.analysis import Report, TemperatureResult

NEAR_UNIFORM = 0.9
LOSS_FACTOR = 1.5
MASS_PARTS = ("sink_mass", "recent_mass", "distant_mass")


@dataclass(frozen=True)
class Finding:
    label: str
    near_uniform_layers: int  # layers whose mean normalized entropy > NEAR_UNIFORM
    n_layers: int
    loss: float
    loss_ratio: float | None  # loss / reference loss (None when this is the reference)
    mass_shift: dict[str, float]  # mean over layers and heads, minus the reference's

    @property
    def over_softened(self) -> bool:
        return self.near_uniform_layers > self.n_layers // 2 or (self.loss_ratio or 0.0) > LOSS_FACTOR


def reference_index(report: Report) -> int:
    """The result to compare against: T = 1 if it was run, else the one closest to it (in log T)."""
    def distance(result: TemperatureResult) -> float:
        return abs(np.log(result.temperature)) if result.temperature is not None else np.inf
    return min(range(len(report.results)), key=lambda i: distance(report.results[i]))


def mean_masses(result: TemperatureResult) -> dict[str, float]:
    return {part: float(result.heads[part].mean()) for part in MASS_PARTS}


def findings(report: Report) -> tuple[int, list[Finding]]:
    """(index of the reference result, one Finding per result)."""
    base = reference_index(report)
    reference = report.results[base]
    base_masses = mean_masses(reference)
    found = []
    for index, result in enumerate(report.results):
        per_layer = result.layer_mean("normalized_entropy")
        masses = mean_masses(result)
        found.append(Finding(
            label=result.label,
            near_uniform_layers=int((per_layer > NEAR_UNIFORM).sum()),
            n_layers=len(per_layer),
            loss=result.loss,
            loss_ratio=None if index == base else result.loss / reference.loss,
            mass_shift={part: masses[part] - base_masses[part] for part in MASS_PARTS},
        ))
    return base, found
