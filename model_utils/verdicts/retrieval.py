"""The retrieval probe's judge (numbers only; verdicts.words writes them in words): each view's gain by distance over
the passages, its reach (where the gain falls below REACH_SHARE of its short-distance value, core.reach) as the two
measured distances that bracket it, per view and per passage, and what every view does to the reach against T = 1:
moved only where the brackets do not overlap, and on every passage only where each passage's own do not."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model_utils.core.bootstrap import spread_over
from model_utils.core.reach import REACH_SHARE, ReachOutcome, bracket, comeback, read_between
from model_utils.core.records.retrieval import (
    Curve,
    Reach,
    ReachShift,
    RetrievalPoint,
    RetrievalVerdict,
)
from model_utils.core.views import View

__all__ = ["REACH_SHARE", "comeback", "curve", "gain_table", "reach_of", "retrieval_verdict", "shift"]


def reach_of(distances: Sequence[int], gains: Sequence[float]) -> tuple[ReachOutcome, float | None]:
    """The reach of one gain curve (distances ascending): its outcome, and a value read between the two measured
    distances that bracket it on a log scale (for drawing; the longest distance for BEYOND)."""
    return bracket(distances, gains)[0], read_between(distances, gains)


def gain_table(points: Sequence[RetrievalPoint], view: View, passages: Sequence[str],
               distances: Sequence[int]) -> np.ndarray:
    """[passage, distance] gains of one view."""
    found = {(p.passage, p.distance): p.gain for p in points if p.view == view}
    return np.array([[found[(name, distance)] for distance in distances] for name in passages])


def view_distances(points: Sequence[RetrievalPoint], view: View) -> tuple[int, ...]:
    """Every distance `view` was measured at: the grid's and any --refine added, ascending."""
    return tuple(sorted({p.distance for p in points if p.view == view}))


def curve(points: Sequence[RetrievalPoint], view: View, passages: Sequence[str], distances: Sequence[int] | None = None,
          seed: int = 0) -> Curve:
    """One view's curve over the passages, at `distances` (default: every distance it was measured at): mean gain
    with its spread, its share of the shortest distance's, the mean losses planted and not, the mean mass on the
    copy, and the reach."""
    distances = tuple(view_distances(points, view) if distances is None else distances)
    table = gain_table(points, view, passages, distances)
    rng = np.random.default_rng(seed)
    spread, low, high = spread_over(table, lambda rows: rows.mean(axis=0), rng)
    mean = table.mean(axis=0)
    mine = [p for p in points if p.view == view]

    def averaged(value) -> tuple[float, ...]:
        return tuple(round(float(np.mean([value(p) for p in mine if p.distance == d])), 5) for d in distances)

    return Curve(view=view, distances=distances, gain=_round(mean), low=_round(low), high=_round(high),
                 spread=spread,
                 share=tuple(round(float(g / mean[0]), 4) if mean[0] > 0 else None for g in mean),
                 planted_loss=averaged(lambda p: p.planted.loss), unplanted_loss=averaged(lambda p: p.unplanted.loss),
                 copy_mass=averaged(lambda p: float(p.planted.copy_mass.mean())),
                 reach=Reach.of(distances, passages, table))


def shift(curves: Sequence[Curve], view: View, reference: View) -> ReachShift:
    """`view`'s reach against the reference's, by brackets (ReachShift.of)."""
    by_view = {c.view: c for c in curves}
    return ReachShift.of(view, by_view[view].reach, by_view[reference].reach)


def retrieval_verdict(views: Sequence[View], curves: Sequence[Curve], reference: View,
                      trained_length: int) -> RetrievalVerdict:
    """The reference's reach, every other view's shift of it, and the constant temperature that reaches farthest:
    the farthest bracket (BEYOND first, then the bracket's nearer distance), ties by the value read between points,
    then by the larger mean gain."""
    by_view = {c.view: c for c in curves}
    constant = [v for v in views if v.temperature is not None and v.rope is None
                and by_view[v].reach.outcome is not ReachOutcome.NONE]
    best = max(constant, key=lambda v: _farthest(by_view[v]), default=None)
    return RetrievalVerdict(
        reference=reference, reach=by_view[reference].reach,
        shifts=tuple(shift(curves, v, reference) for v in views if v != reference),
        best_temperature=None if best is None else best.temperature, trained_length=trained_length,
        longest_distance=int(max(max(c.distances) for c in curves)))


def _farthest(found: Curve) -> tuple:
    reach = found.reach
    low = reach.between[0] if reach.between is not None else reach.longest
    return reach.outcome is ReachOutcome.BEYOND, low, reach.value or 0.0, float(np.mean(found.gain))


def _round(values) -> tuple[float, ...]:
    return tuple(round(float(v), 5) for v in values)
