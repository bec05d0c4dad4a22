"""The retrieval probe's judge on numbers made up to the point: the reach is the two measured distances that bracket
where the gain falls below half (a value read between them in log distance is for drawing); a curve that never
falls, or never rises, says so; the spread of the gains over passages is their range below 8 and a 95% bootstrap
interval from 8 on; a view moves the reach only where its bracket and T = 1's do not overlap, and on every passage
only where each passage's own do not; --refine's bisection narrows a bracket to max(256 tokens, 3%)."""

import math

import numpy as np
import pytest

from model_utils.core.bootstrap import MIN_FOR_INTERVAL, spread_over
from model_utils.core.reach import bracket, compare, midpoint, narrow
from model_utils.core.records.retrieval import Direction, ReachOutcome, RetrievalPass, RetrievalPoint
from model_utils.core.records.spread import Spread
from model_utils.core.views import View
from model_utils.experiments.retrieval.points import refine_path
from model_utils.verdicts.retrieval import REACH_SHARE, curve, reach_of, shift

DISTANCES = (500, 1000, 2000, 4000, 8000)


def test_the_reach_is_bracketed_by_measured_distances_and_drawn_between_them_in_log_distance():
    gains = [3.0, 2.9, 2.5, 1.0, 0.1]
    assert bracket(DISTANCES, gains) == (ReachOutcome.FOUND, (2000, 4000))
    outcome, value = reach_of(DISTANCES, gains)
    step = (2.5 - REACH_SHARE * 3.0) / (2.5 - 1.0)  # between 2,000 (above half) and 4,000 (below)
    assert outcome is ReachOutcome.FOUND and value == pytest.approx(math.exp(math.log(2000) + step * math.log(2)))
    # the first fall counts, even where the curve rises again later
    assert bracket(DISTANCES, [3.0, 1.0, 2.9, 0.1, 0.1]) == (ReachOutcome.FOUND, (500, 1000))


def test_a_curve_that_never_falls_reaches_past_the_longest_distance_and_one_without_gain_reaches_nothing():
    assert reach_of(DISTANCES, [3.0, 2.9, 2.8, 2.7, 2.0]) == (ReachOutcome.BEYOND, 8000.0)
    assert bracket(DISTANCES, [3.0, 2.9, 2.8, 2.7, 2.0]) == (ReachOutcome.BEYOND, None)
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


def curves(view: str, per_passage: dict[str, list[float]], distances=DISTANCES) -> list[RetrievalPoint]:
    return [point(name, d, view, g) for name, gains in per_passage.items() for d, g in zip(distances, gains,
                                                                                           strict=True)]


def judged(points, *views):
    return [curve(points, view, ["a", "b"]) for view in views]


def test_a_view_moves_the_reach_only_where_the_brackets_do_not_overlap_and_says_on_how_many_passages():
    reference = {"a": [3, 3, 1, 0, 0], "b": [3, 3, 3, 1, 0]}  # mean falls between 2,000 and 4,000
    longer = {"a": [3, 3, 3, 1, 0], "b": [3, 3, 3, 3, 0]}  # between 4,000 and 8,000; each passage's own apart
    some = {"a": [3, 3, 3, 3, 0], "b": [3, 3, 3, 1, 0]}  # mean apart, but b's own bracket is T = 1's b's
    same = {"a": [3, 3, 3, 1, 0], "b": [3, 3, 1, 0, 0]}  # the same bracket as T = 1's mean
    points = curves("T=1", reference) + curves("L", longer) + curves("S", some) + curves("M", same)
    found = judged(points, "T=1", "L", "S", "M")
    assert found[0].reach.between == (2000, 4000) and found[0].reach.per_passage[0].between == (1000, 2000)
    moved = shift(found, "L", "T=1")
    assert moved.direction is Direction.LONGER and moved.between == (4000, 8000) and moved.every_passage
    partly = shift(found, "S", "T=1")
    assert partly.direction is Direction.LONGER and (partly.agree, partly.passages) == (1, 2)
    assert not partly.every_passage
    assert shift(found, "M", "T=1").direction is Direction.OVERLAP


def test_brackets_that_touch_do_not_overlap_and_one_past_the_grid_is_farther_than_any_found():
    assert compare((6400.0, 6656.0), (6144.0, 6400.0)) is Direction.LONGER
    assert compare((6144.0, 6400.0), (6144.0, 6656.0)) is Direction.OVERLAP
    assert compare((8000.0, math.inf), (4000.0, 8000.0)) is Direction.LONGER
    assert compare((8000.0, math.inf), (8000.0, math.inf)) is Direction.BOTH_BEYOND
    assert compare(None, (4000.0, 8000.0)) is Direction.UNKNOWN


def test_two_views_that_both_reach_the_longest_distance_are_not_called_unchanged():
    """Every passage still uses the copy at the longest distance under both views: the probe cannot tell
    (BOTH_BEYOND). One that falls off under either view is a comparison of brackets again."""
    far = {"a": [3, 3, 3, 3, 2.5], "b": [3, 3, 3, 2.8, 2.6]}
    also = {"a": [3, 3, 3, 3, 2.9], "b": [3, 3, 2.9, 2.8, 2.7]}
    falls = {"a": [3, 3, 3, 3, 0.5], "b": [3, 3, 2.9, 2.8, 0.1]}
    found = judged(curves("T=1", far) + curves("A", also) + curves("F", falls), "T=1", "A", "F")
    assert shift(found, "A", "T=1").direction is Direction.BOTH_BEYOND
    assert shift(found, "F", "T=1").direction is Direction.SHORTER


def test_refining_bisects_the_bracket_until_it_is_at_most_256_tokens_or_three_percent():
    truth = 6_900.0  # a gain curve that halves exactly there

    def mean_gain(distance: int) -> float:
        return 3.0 if distance < truth else 1.0

    grid = (512, 1024, 2048, 4096, 6144, 7900)
    added = refine_path(grid, mean_gain)
    distances = sorted({*grid, *added})
    outcome, between = bracket(distances, [mean_gain(d) for d in distances])
    assert outcome is ReachOutcome.FOUND and between[0] < truth <= between[1] and narrow(between)
    assert between[1] - between[0] <= 256 and added[0] == midpoint((6144, 7900)) == 7022
    assert narrow((30_000, 30_900)) and not narrow((30_000, 31_000))  # 3% of 30,000 is 900
    assert refine_path(grid, lambda d: 3.0) == []  # nothing to bisect past the grid


def test_the_found_bullet_does_not_call_a_censored_temperature_unmoved(tiny_retrieval_file):
    """When T = 1 and every plain temperature still use the copy at the longest distance, the README's bullet says
    the probe cannot tell, not that no temperature moves the reach."""
    import json
    from dataclasses import replace

    from model_utils.core.records.retrieval import ReachShift, RetrievalDocument
    from model_utils.verdicts import words

    probe = RetrievalDocument.from_dict(json.loads(tiny_retrieval_file.read_text()))
    reach = replace(probe.verdict.reach, outcome=ReachOutcome.BEYOND, between=None)
    shifts = tuple(ReachShift(view=s.view, direction=Direction.BOTH_BEYOND, outcome=ReachOutcome.BEYOND, between=None,
                              agree=0, passages=s.passages) for s in probe.verdict.shifts)
    bullet = words.found_bullets([], [replace(probe, verdict=replace(probe.verdict, reach=reach, shifts=shifts))])[-1]
    assert "cannot tell whether a temperature moves it" in bullet and "no temperature tried" not in bullet
    assert "T=0.8 (sharper)" in bullet and "T=1.25 (softer)" in bullet


def test_a_bullet_says_on_every_passage_only_where_each_passage_agrees(tiny_retrieval_file):
    import json
    from dataclasses import replace

    from model_utils.core.records.retrieval import ReachShift, RetrievalDocument
    from model_utils.verdicts import words

    probe = RetrievalDocument.from_dict(json.loads(tiny_retrieval_file.read_text()))
    reach = replace(probe.verdict.reach, outcome=ReachOutcome.FOUND, between=(640, 768))
    shifts = (ReachShift(view=View(0.8), direction=Direction.LONGER, outcome=ReachOutcome.FOUND, between=(768, 896),
                         agree=2, passages=4),
              ReachShift(view=View(1.25), direction=Direction.SHORTER, outcome=ReachOutcome.FOUND,
                         between=(512, 640), agree=4, passages=4))
    bullet = words.found_bullets([], [replace(probe, verdict=replace(probe.verdict, reach=reach, shifts=shifts))])[-1]
    assert "between 640 and 768 tokens" in bullet
    assert "T=1.25 (softer) cuts it short;" in bullet
    assert "T=0.8 (sharper) takes it farther on the passages' mean, not on each" in bullet
    sentence = words.shifts_sentence(replace(probe.verdict, reach=reach, shifts=shifts))
    assert "T=1.25 cuts it short on every passage: to between 512 and 640 tokens on the passages' mean" in sentence
    assert "T=0.8 takes it farther on 2 of the 4 passages" in sentence


def test_a_reach_is_placed_against_the_trained_length_only_as_far_as_its_bracket_allows():
    from model_utils.verdicts.words import against_trained

    assert against_trained((6_500, 6_675), 8_192) == "the reach ends inside it, 1,517 to 1,692 tokens short of it"
    assert against_trained((34_000, 36_000), 32_768) == "the reach ends past it, by 1,232 to 3,232 tokens"
    assert "cannot tell" in against_trained((32_000, 34_000), 32_768)
    assert "inside" in against_trained((30_000, 32_768), 32_768)  # a bracket that ends on it


def test_the_headline_names_the_bracket_and_its_side_of_the_trained_length_and_defers_the_rest():
    from dataclasses import replace

    from model_utils.experiments.committed import PROBES
    from model_utils.verdicts.words import between_text, reach_headline, reach_sentence

    document = PROBES.read_first()  # the bundled model's: a reach found between two measured distances
    verdict = document.verdict
    low, high = verdict.reach.between
    headline = reach_headline(document.model, verdict)
    assert between_text((low, high)) in headline and len(headline) < len(reach_sentence(document.model, verdict))
    assert "inside the" in reach_headline(document.model, replace(verdict, trained_length=high))
    assert "past the" in reach_headline(document.model, replace(verdict, trained_length=low))
    assert "cannot tell" in reach_headline(document.model, replace(verdict, trained_length=(low + high) // 2))
    beyond = replace(verdict, reach=replace(verdict.reach, outcome=ReachOutcome.BEYOND))
    assert reach_headline(document.model, beyond) == reach_sentence(document.model, beyond)
