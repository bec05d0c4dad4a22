"""The retrieval probe's judge on numbers made up to the point: the reach is read between the measured distances in
log distance; a curve that never falls, or never rises, says so; the spread over passages is their range below 8 and
a 95% bootstrap interval from 8 on; a shift moves the reach only when every passage (or the interval) agrees."""

import math

import numpy as np
import pytest

from model_utils.core.bootstrap import MIN_FOR_INTERVAL, spread_over
from model_utils.core.records.retrieval import Direction, ReachOutcome, RetrievalPass, RetrievalPoint
from model_utils.core.records.spread import Spread
from model_utils.verdicts.retrieval import REACH_SHARE, reach_of, shift

DISTANCES = (500, 1000, 2000, 4000, 8000)


def test_the_reach_is_where_the_gain_falls_below_half_read_in_log_distance():
    outcome, value = reach_of(DISTANCES, [3.0, 2.9, 2.5, 1.0, 0.1])
    assert outcome is ReachOutcome.FOUND
    step = (2.5 - REACH_SHARE * 3.0) / (2.5 - 1.0)  # between 2,000 (above half) and 4,000 (below)
    assert value == pytest.approx(math.exp(math.log(2000) + step * math.log(2)))
    assert 2000 < value < 4000


def test_a_curve_that_never_falls_reaches_past_the_longest_distance_and_one_without_gain_reaches_nothing():
    assert reach_of(DISTANCES, [3.0, 2.9, 2.8, 2.7, 2.0]) == (ReachOutcome.BEYOND, 8000.0)
    assert reach_of(DISTANCES, [0.0, 0.1, 0.0, 0.0, 0.0]) == (ReachOutcome.NONE, None)
    assert reach_of(DISTANCES, [-0.2, 0.0, 0.0, 0.0, 0.0])[0] is ReachOutcome.NONE


def test_fewer_than_eight_rows_give_their_range_and_eight_a_bootstrap_interval():
    rows = np.array([[1.0], [2.0], [4.0], [3.0]])
    spread, low, high = spread_over(rows, lambda found: found.mean(axis=0), np.random.default_rng(0))
    assert spread is Spread.RANGE and (float(low[0]), float(high[0])) == (1.0, 4.0)
    rows = np.arange(MIN_FOR_INTERVAL, dtype=np.float64)[:, None]
    spread, low, high = spread_over(rows, lambda found: found.mean(axis=0), np.random.default_rng(0))
    assert spread is Spread.INTERVAL_95 and 0 < low[0] < rows.mean() < high[0] < rows.max()


def point(passage: str, distance: int, view: str, gain: float) -> RetrievalPoint:
    def made(loss: float) -> RetrievalPass:
        empty = np.zeros(2)
        return RetrievalPass(n_tokens=10, loss=loss, token_nll=np.array([loss]), copy_mass=empty, copy_mass_top=empty,
                             target_mass=empty, target_mass_top=empty, sink_mass=empty, seconds=0.0, kernel="torch",
                             peak_rss_gb=None)
    return RetrievalPoint(passage=passage, distance=distance, view=view, planted=made(4.0 - gain),
                          unplanted=made(4.0))


def curves(view: str, per_passage: dict[str, list[float]]) -> list[RetrievalPoint]:
    return [point(name, d, view, g) for name, gains in per_passage.items() for d, g in zip(DISTANCES, gains,
                                                                                           strict=True)]


def test_a_view_moves_the_reach_only_when_every_passage_agrees():
    reference = {"a": [3, 3, 1, 0, 0], "b": [3, 3, 3, 1, 0]}
    longer = {"a": [3, 3, 3, 1, 0], "b": [3, 3, 3, 3, 0]}
    mixed = {"a": [3, 3, 3, 1, 0], "b": [3, 1, 0, 0, 0]}
    points = curves("T=1", reference) + curves("L", longer) + curves("M", mixed)
    moved = shift(points, "L", "T=1", ["a", "b"], DISTANCES)
    assert moved.direction is Direction.LONGER and moved.shift > 0 and moved.low > 0
    unsure = shift(points, "M", "T=1", ["a", "b"], DISTANCES)
    assert unsure.direction is Direction.UNCHANGED and unsure.low < 0 < unsure.high


def test_two_views_that_both_reach_the_longest_distance_are_not_called_unchanged():
    """Every passage still uses the copy at the longest distance under both views: both reaches are the grid's
    end, so a shift of 0 would be made up; the probe cannot tell (BOTH_BEYOND). One passage that falls off under
    either view makes it a measured shift again."""
    far = {"a": [3, 3, 3, 3, 2.5], "b": [3, 3, 3, 2.8, 2.6]}
    also = {"a": [3, 3, 3, 3, 2.9], "b": [3, 3, 2.9, 2.8, 2.7]}
    falls = {"a": [3, 3, 3, 3, 0.5], "b": [3, 3, 2.9, 2.8, 2.7]}
    points = curves("T=1", far) + curves("A", also) + curves("F", falls)
    censored = shift(points, "A", "T=1", ["a", "b"], DISTANCES)
    assert censored.direction is Direction.BOTH_BEYOND and censored.shift is None
    assert shift(points, "F", "T=1", ["a", "b"], DISTANCES).direction is not Direction.BOTH_BEYOND


def test_the_found_bullet_does_not_call_a_censored_temperature_unmoved(tiny_retrieval_file):
    """When T = 1 and every plain temperature still use the copy at the longest distance, the README's bullet says
    the probe cannot tell, not that no temperature moves the reach."""
    import json
    from dataclasses import replace

    from model_utils.core.records.retrieval import ReachShift, RetrievalDocument
    from model_utils.verdicts import words

    probe = RetrievalDocument.from_dict(json.loads(tiny_retrieval_file.read_text()))
    longest = float(probe.verdict.longest_distance)
    reach = replace(probe.verdict.reach, outcome=ReachOutcome.BEYOND, value=longest, low=longest, high=longest)
    shifts = tuple(ReachShift(view=s.view, shift=None, low=None, high=None, direction=Direction.BOTH_BEYOND)
                   for s in probe.verdict.shifts)
    bullet = words.found_bullets([], [replace(probe, verdict=replace(probe.verdict, reach=reach, shifts=shifts))])[-1]
    assert "cannot tell whether a temperature moves it" in bullet and "no temperature tried" not in bullet
    assert "T=0.8 (sharper)" in bullet and "T=1.25 (softer)" in bullet
