"""core.bootstrap.fold_sums: the two folds of a cross-fit stay disjoint in every resample."""

import numpy as np
import pytest

from model_utils.core.bootstrap import BOOTSTRAP_BLOCK, cross_fit, fold_sums


def folds_of(positions: int) -> np.ndarray:
    """[positions] the fold each position belongs to, as fold_sums cuts them."""
    size = max(1, min(BOOTSTRAP_BLOCK, positions // 2))
    return (np.arange(positions) // size) % 2


@pytest.mark.parametrize("positions", [1, 2, 3, 65, 130, 1000, 1023])
def test_the_first_row_is_the_positions_as_they_are_and_the_counts_are_the_folds(positions):
    nll = np.random.default_rng(0).random((3, positions))
    sums, counts = fold_sums(nll, np.random.default_rng(1), resamples=20)
    fold = folds_of(positions)
    assert sums.shape == (21, 2, 3)
    assert counts.tolist() == [int((fold == 0).sum()), int((fold == 1).sum())]
    for which in (0, 1):
        assert np.allclose(sums[0, which], nll[:, fold == which].sum(axis=1))


@pytest.mark.parametrize("positions", [2, 65, 130, 1023])
def test_a_resample_draws_each_fold_from_its_own_positions(positions):
    """Every position of fold 1 marked 1 and of fold 0 marked 0: a resample whose fold 0 held a fold-1 position
    would sum above 0 there. Blocks drawn from the whole text put positions into both folds and scored a choice
    partly on the positions it was made on, which shifted the cross-fit's interval up from its point value."""
    marked = np.tile(folds_of(positions).astype(float), (2, 1))
    sums, counts = fold_sums(marked, np.random.default_rng(2), resamples=200)
    assert np.allclose(sums[:, 0], 0.0)
    assert np.allclose(sums[:, 1], counts[1])


def test_a_cross_fit_on_noise_has_its_point_value_inside_its_interval():
    """Temperatures that differ by noise alone: choosing on one fold and scoring on the other saves about 0, and
    the resampled cross-fits spread around the point value rather than above it."""
    rng = np.random.default_rng(3)
    nll = 2.0 + rng.normal(0.0, 1.0, (6, 4096))
    sums, _ = fold_sums(nll, np.random.default_rng(4), resamples=400)
    saved = cross_fit(sums[..., 0], sums[..., 1:])[0] / nll.shape[1]
    low, high = np.percentile(saved[1:], [2.5, 97.5])
    assert low <= saved[0] <= high
    assert low < 0 < high


def test_every_position_of_a_fold_is_drawn_equally_often_on_average():
    """Position i of each fold marked with a one-hot column: over many resamples every position is drawn about once
    per resample, the ends of a fold as often as its middle, so the resampled mean centres on the fold's own."""
    positions = 256  # two folds of 128 positions, two blocks of 64 each
    sums, _ = fold_sums(np.eye(positions), np.random.default_rng(5), resamples=4000)
    drawn = sums[1:].sum(axis=1).mean(axis=0)  # [position]: times drawn per resample, on average
    assert np.allclose(drawn, 1.0, atol=0.08)
