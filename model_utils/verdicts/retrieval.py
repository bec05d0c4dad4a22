"""The retrieval probe's judge (numbers only; verdicts.words writes them in words): each view's gain by distance over
the passages, its reach (where the gain falls below REACH_SHARE of its short-distance value, interpolated in log
distance between the measured distances), and what every view does to the reach against T = 1."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from model_utils.core.bootstrap import spread_over
from model_utils.core.records.retrieval import (
    Curve,
    Direction,
    Reach,
    ReachOutcome,
    ReachShift,
    RetrievalPoint,
    RetrievalVerdict,
    ViewEntry,
)

REACH_SHARE = 0.5  # the reach: the distance where the gain falls below this share of its short-distance value
SMALL_SHIFT = 0.05  # a view "barely moves" the reach when it shifts it by less than this share of T = 1's


def reach_of(distances: Sequence[int], gains: Sequence[float]) -> tuple[ReachOutcome, float | None]:
    """The reach of one gain curve (distances ascending): where it first falls below REACH_SHARE of its first value,
    linear in log distance between the last distance above and the first below."""
    gains = [float(g) for g in gains]
    if not gains or gains[0] <= 0:
        return ReachOutcome.NONE, None
    level = REACH_SHARE * gains[0]
    for index in range(1, len(gains)):
        if gains[index] < level:
            near, far = math.log(distances[index - 1]), math.log(distances[index])
            step = (gains[index - 1] - level) / (gains[index - 1] - gains[index])
            return ReachOutcome.FOUND, math.exp(near + step * (far - near))
    return ReachOutcome.BEYOND, float(distances[-1])


def gain_table(points: Sequence[RetrievalPoint], view: str, passages: Sequence[str],
               distances: Sequence[int]) -> np.ndarray:
    """[passage, distance] gains of one view."""
    found = {(p.passage, p.distance): p.gain for p in points if p.view == view}
    return np.array([[found[(name, distance)] for distance in distances] for name in passages])


def _reach_value(distances: Sequence[int]):
    """The statistic a reach's spread is taken of: the mean curve's reach, the longest distance for BEYOND."""
    def value(rows: np.ndarray) -> float:
        kind, found = reach_of(distances, rows.mean(axis=0))
        return math.nan if kind is ReachOutcome.NONE else found
    return value


def reach(table: np.ndarray, distances: Sequence[int], rng: np.random.Generator) -> Reach:
    """The reach of the mean curve of `table` ([passage, distance] gains), with its spread over the passages."""
    kind, value = reach_of(distances, table.mean(axis=0))
    statistic = _reach_value(distances)
    spread, low, high = spread_over(table, statistic, rng)
    beyond = sum(reach_of(distances, row)[0] is ReachOutcome.BEYOND for row in table)
    return Reach(outcome=kind, value=value, low=_finite(low), high=_finite(high), spread=spread, passages=len(table),
                 beyond=beyond)


def curve(points: Sequence[RetrievalPoint], view: str, passages: Sequence[str], distances: Sequence[int],
          seed: int = 0) -> Curve:
    """One view's curve over the passages: mean gain with its spread, its share of the shortest distance's, the mean
    losses planted and not, the mean mass on the copy, and the reach."""
    table = gain_table(points, view, passages, distances)
    rng = np.random.default_rng(seed)
    spread, low, high = spread_over(table, lambda rows: rows.mean(axis=0), rng)
    mean = table.mean(axis=0)
    mine = [p for p in points if p.view == view]

    def averaged(value) -> tuple[float, ...]:
        return tuple(round(float(np.mean([value(p) for p in mine if p.distance == d])), 5) for d in distances)

    return Curve(view=view, distances=tuple(distances), gain=_round(mean), low=_round(low), high=_round(high),
                 spread=spread,
                 share=tuple(round(float(g / mean[0]), 4) if mean[0] > 0 else None for g in mean),
                 planted_loss=averaged(lambda p: p.planted.loss), unplanted_loss=averaged(lambda p: p.unplanted.loss),
                 copy_mass=averaged(lambda p: float(p.planted.copy_mass.mean())),
                 reach=reach(table, distances, np.random.default_rng(seed)))


def shift(points: Sequence[RetrievalPoint], view: str, reference: str, passages: Sequence[str],
          distances: Sequence[int], seed: int = 0) -> ReachShift:
    """`view`'s reach minus the reference's, on the mean curves, with the spread of the passages' paired shifts."""
    pair = np.stack([gain_table(points, name, passages, distances) for name in (view, reference)])  # [2, P, D]
    statistic = _reach_value(distances)
    mine, theirs = statistic(pair[0]), statistic(pair[1])
    if math.isnan(mine) or math.isnan(theirs):
        return ReachShift(view=view, shift=None, low=None, high=None, direction=Direction.UNKNOWN)
    if all(reach_of(distances, row)[0] is ReachOutcome.BEYOND for row in pair.reshape(-1, pair.shape[-1])):
        # both still use the copy at the longest distance on every passage: a shift of 0 would only be the grid's
        return ReachShift(view=view, shift=None, low=None, high=None, direction=Direction.BOTH_BEYOND)
    paired = np.transpose(pair, (1, 0, 2))  # [P, 2, D]: a passage's two curves travel together

    def difference(rows: np.ndarray) -> float:
        return statistic(rows[:, 0]) - statistic(rows[:, 1])

    _, low, high = spread_over(paired, difference, np.random.default_rng(seed))
    low, high = float(low), float(high)
    direction = (Direction.UNKNOWN if math.isnan(low) or math.isnan(high) else Direction.LONGER if low > 0
                 else Direction.SHORTER if high < 0 else Direction.UNCHANGED)
    return ReachShift(view=view, shift=round(mine - theirs, 1), low=_finite(low), high=_finite(high),
                      direction=direction)


def retrieval_verdict(points: Sequence[RetrievalPoint], views: Sequence[ViewEntry], curves: Sequence[Curve],
                      passages: Sequence[str], distances: Sequence[int], reference: str,
                      trained_length: int) -> RetrievalVerdict:
    """The reference's reach, every other view's shift of it, and the constant temperature that reaches farthest."""
    by_view = {c.view: c for c in curves}
    others = [v.label for v in views if v.label != reference]
    constant = [v for v in views if v.temperature is not None and v.rope is None
                and by_view[v.label].reach.value is not None]
    best = max(constant, key=lambda v: (by_view[v.label].reach.value, float(np.mean(by_view[v.label].gain))),
               default=None)
    return RetrievalVerdict(
        reference=reference, reach=by_view[reference].reach,
        shifts=tuple(shift(points, view, reference, passages, distances) for view in others),
        best_temperature=None if best is None else best.temperature, trained_length=trained_length,
        longest_distance=int(max(distances)))


def _round(values) -> tuple[float, ...]:
    return tuple(round(float(v), 5) for v in values)


def _finite(value) -> float | None:
    value = float(value)
    return None if math.isnan(value) else round(value, 1)
