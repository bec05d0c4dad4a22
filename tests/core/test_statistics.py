"""Closed-form checks of the teaching functions and the row statistics (no model)."""

import math

import numpy as np
import pytest
import torch

from model_utils.core.softmax import (
    check_temperature,
    entropy,
    entropy_curve,
    softmax_with_temperature,
    top_gap,
    weight_ratio,
)
from model_utils.core.statistics import ROW_FIELDS, distance_bins, top_ratio_from_gap, untrained_bin
from model_utils.engine.row_statistics import row_statistics, statistics_from_probabilities, top_two
from tests.support.reference import reference_head, reference_row


@pytest.mark.parametrize(("scores", "gap"), [([5, 0, 0, 0], 5.0), ([0, 2, 3, 1], 1.0), ([2, 2, -1], 0.0),
                                             ([-4.5, -1.25], 3.25)])
def test_top_gap_is_the_top_score_over_the_runner_up(scores, gap):
    assert top_gap(scores) == gap
    weights = softmax_with_temperature(scores, 0.7)
    top, runner_up = np.sort(weights)[[-1, -2]]
    assert top / runner_up == pytest.approx(weight_ratio(top_gap(scores), 0.7))


def test_weight_ratio_of_the_classic_example():
    assert weight_ratio(5, 1) == pytest.approx(148.413, abs=1e-3)
    assert weight_ratio(5, 2) == pytest.approx(12.182, abs=1e-3)
    assert weight_ratio(5, 0.5) == pytest.approx(math.exp(10))


def test_softmax_with_temperature_keeps_the_order_and_tends_to_uniform():
    scores = np.array([5.0, 0.0, 0.0, 0.0])
    at_one = softmax_with_temperature(scores, 1.0)
    assert at_one.sum() == pytest.approx(1.0)
    assert at_one[0] / at_one[1] == pytest.approx(math.exp(5))
    for temperature in (0.1, 0.5, 2.0, 10.0, 100.0):
        weights = softmax_with_temperature(scores, temperature)
        assert weights.argmax() == 0  # the top key stays on top at every T
    assert np.allclose(softmax_with_temperature(scores, 100.0), 0.25, atol=0.02)  # over-softened: near uniform
    assert softmax_with_temperature(scores, 0.05)[0] == pytest.approx(1.0)  # sharpened: near one-hot


@pytest.mark.parametrize("n", [2, 5, 64, 1000])
def test_entropy_is_within_zero_and_ln_n_and_rises_with_temperature(n):
    scores = np.random.default_rng(n).normal(scale=3.0, size=n)
    temperatures = np.geomspace(0.05, 100.0, 40)
    curve = entropy_curve(scores, temperatures)
    assert np.all(curve >= -1e-12) and np.all(curve <= math.log(n) + 1e-9)
    assert np.all(np.diff(curve) >= -1e-9), "entropy must be non-decreasing in T"
    assert curve[-1] > 0.95 * math.log(n)  # T = 100 is close to uniform
    assert entropy(np.full(n, 1.0 / n)) == pytest.approx(math.log(n))
    assert entropy(np.eye(n)[0]) == 0.0


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), 100.5, 1e9, 1e-39, 9.99e-4, "abc", None, ""])
def test_check_temperature_rejects_what_is_outside_its_range(bad):
    with pytest.raises(ValueError, match=r"\[0.001, 100\]"):
        check_temperature(bad)


@pytest.mark.parametrize("good", [1e-3, 0.05, 1, "2.5", 100])
def test_check_temperature_accepts_the_range(good):
    assert check_temperature(good) == float(good)


def test_top_ratio_saturates_instead_of_overflowing():
    assert top_ratio_from_gap(5.0) == pytest.approx(148.413, abs=1e-3)
    assert math.isfinite(top_ratio_from_gap(1e6))


def masked_logits(n: int, multiplier: float, seed: int) -> tuple[torch.Tensor, np.ndarray]:
    """Causal logits [n, n] (the dtype's min above the diagonal) and the matching float64 probabilities."""
    scores = torch.from_numpy(np.random.default_rng(seed).normal(scale=2.0, size=(n, n)))
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    logits = (scores * multiplier).masked_fill(future, torch.finfo(torch.float64).min)
    return logits, torch.softmax(logits, dim=-1).numpy()


@pytest.mark.parametrize("multiplier", [1e-2, 0.5, 1.0, 2.0, 20.0])
@pytest.mark.parametrize("window", [1, 3, 8])
def test_row_statistics_match_the_plain_reference(multiplier, window):
    n, start, trained = 24, 5, 7  # queries from 7 on see untrained distances (7 is not a power-of-two edge)
    logits, probs = masked_logits(n, multiplier, seed=window)
    edges = torch.from_numpy(distance_bins(n, trained))
    stats, last_row = row_statistics(logits[start:].clone(), start, window, edges, None,
                                     untrained_bin(edges.numpy(), trained))
    assert np.allclose(last_row.numpy(), probs[-1], atol=1e-12)
    for i, q in enumerate(range(start, n)):
        expected = reference_row(probs[q], q, window, trained_length=trained)
        names = [("gap" if name == "top_gap" else name) for name in ROW_FIELDS]
        got = dict(zip(names, stats[i, : len(ROW_FIELDS)].tolist(), strict=True))
        expected["gap"] = float(logits[q, : q + 1].topk(2).values.diff().abs())  # from logits: exact at any T
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)
        assert got["sink_mass"] + got["recent_mass"] + got["distant_mass"] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("multiplier", [1e9, 1e-2])
def test_row_statistics_stay_finite_at_extreme_temperatures(multiplier):
    logits, _ = masked_logits(40, multiplier, seed=1)
    stats, last_row = row_statistics(logits[1:].float().clone(), 1, 4)
    assert torch.isfinite(stats).all() and torch.isfinite(last_row).all()
    assert (stats[:, 0] >= 0).all()
    assert last_row.sum().item() == pytest.approx(1.0, abs=1e-5)
    assert torch.allclose(stats[:, 2:5].sum(-1), torch.ones(39), atol=1e-5)  # sink + recent + distant


def test_statistics_from_probabilities_match_the_reference():
    _, probs = masked_logits(30, 1.0, seed=3)
    stats = statistics_from_probabilities(torch.from_numpy(probs)[None], window=4)
    expected = reference_head(probs, window=4)
    for name, value in expected.items():
        assert stats[name][0] == pytest.approx(value, rel=1e-9), name


@pytest.mark.parametrize("n", [5, 255, 256, 300, 1000])
def test_top_two_equals_topk_including_ties_masks_and_tails(n):
    values = torch.randn(3, 7, n, generator=torch.Generator().manual_seed(n))
    values[0, :, n // 3] = values[0, :, n // 2] = 10.0  # a tie for the top in every row of the first slice
    values[1, :, -3:] = torch.finfo(torch.float32).min  # masked keys in the ragged tail
    values[2, :, -1] = values[2].amax(dim=-1) + 1.0  # the winner in the tail
    first, second = top_two(values)
    expected = values.topk(2, dim=-1).values
    assert torch.equal(first, expected[..., 0]) and torch.equal(second, expected[..., 1])
    assert torch.equal(first[0], second[0])  # a tie gives a gap of exactly 0
