"""Verdicts on one report: what each temperature or schedule did against T = 1, as numbers and enums (words/ says
them). Every verdict names the direction the multiplier m = 1 / T really went: "over-softened" only where m < 1 on
every measured query, "over-sharpened" only where m > 1; where m crosses 1 along the text a worse loss is a neutral
"the loss rose"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from model_utils.core.report import Report
from model_utils.core.statistics import MASS_PARTS

NEAR_UNIFORM = 0.9  # a layer is near uniform above this mean normalized entropy of its heads
NEAR_ONE_HOT = 0.1  # and near one-hot (all weight on one key) below this
LOSS_FACTOR = 1.5  # a loss is "far above" the reference's beyond this many times it
ANSWER_FLOOR = 0.1  # the whole answer "falls" from at least this probability at the reference to under half of it


class Way(StrEnum):
    """Which way a result moves m over the measured queries."""

    SOFTER = "softer"  # m < 1 on every one
    SHARPER = "sharper"  # m > 1 on every one
    UNCHANGED = "unchanged"  # m = 1 throughout
    MIXED = "mixed"  # m crosses 1 along the text


class Outcome(StrEnum):
    """What went wrong, in the direction m really went."""

    OVER_SOFTENED = "over-softened"
    OVER_SHARPENED = "over-sharpened"
    LOSS_ROSE = "the loss rose"


@dataclass(frozen=True, kw_only=True)
class Direction:
    """Which way a result moves the logit multiplier m over the measured queries, against T = 1 (m = 1)."""

    softer_share: float  # share of the measured queries with m < 1
    sharper_share: float  # share with m > 1
    smallest: float  # smallest and largest m over those queries
    largest: float

    @property
    def kind(self) -> Way:
        if self.softer_share == 1.0:
            return Way.SOFTER
        if self.sharper_share == 1.0:
            return Way.SHARPER
        return Way.UNCHANGED if self.softer_share == self.sharper_share == 0.0 else Way.MIXED


@dataclass(frozen=True, kw_only=True)
class Finding:
    """What one result did, against the reference result (T = 1, or the temperature closest to it)."""

    label: str
    direction: Direction
    n_layers: int
    near_uniform_layers: int
    near_one_hot_layers: int
    loss: float
    loss_ratio: float | None  # loss / reference loss (None when this is the reference)
    mass_shift: dict[str, float]  # mean over layers and heads, minus the reference's
    answer_probability: float | None
    answer_dropped: bool

    @property
    def loss_rose(self) -> bool:
        return (self.loss_ratio or 0.0) > LOSS_FACTOR

    @property
    def verdict(self) -> Outcome | None:
        """What went wrong, or None when nothing is wrong."""
        kind = self.direction.kind
        if kind is Way.SOFTER and (self.loss_rose or self.near_uniform_layers > self.n_layers // 2):
            return Outcome.OVER_SOFTENED
        if kind is Way.SHARPER and (self.loss_rose or self.near_one_hot_layers > self.n_layers // 2):
            return Outcome.OVER_SHARPENED
        return Outcome.LOSS_ROSE if self.loss_rose else None


def direction_of(report: Report, view: int) -> Direction:
    multipliers = report.multipliers[view, report.q_start :]
    return Direction(softer_share=float(np.mean(multipliers < 1.0)), sharper_share=float(np.mean(multipliers > 1.0)),
                     smallest=float(multipliers.min()), largest=float(multipliers.max()))


def findings(report: Report, answer_probabilities: Sequence[float] | None = None) -> tuple[int, list[Finding]]:
    """(index of the reference result, one Finding per result). With `answer_probabilities` (per result, the
    probability of the whole expected answer after the text: core.collapse.AnswerProbe), its fall is followed too."""
    base = report.reference_index
    reference = report.results[base]
    base_masses = reference.mean_masses()
    answers = None if answer_probabilities is None else [float(p) for p in answer_probabilities]
    found = []
    for index, result in enumerate(report.results):
        per_layer = result.layer_mean("normalized_entropy")
        masses = result.mean_masses()
        answer = None if answers is None else answers[index]
        dropped = answers is not None and answers[base] >= ANSWER_FLOOR and answer < answers[base] / 2
        found.append(Finding(
            label=result.label,
            direction=direction_of(report, index),
            n_layers=len(per_layer),
            near_uniform_layers=int((per_layer > NEAR_UNIFORM).sum()),
            near_one_hot_layers=int((per_layer < NEAR_ONE_HOT).sum()),
            loss=result.loss,
            loss_ratio=None if index == base else result.loss / reference.loss,
            mass_shift={part: masses[part] - base_masses[part] for part in MASS_PARTS},
            answer_probability=answer,
            answer_dropped=dropped,
        ))
    return base, found
