"""Bootstrap intervals and the choice of a best temperature from them: numpy only, shared by the sweep (positions
resampled in blocks), the tuner (documents resampled) and the verdicts, which also choose on one half of the data
and score on the other (`fold_sums`, `cross_fit`) so that a gain is not measured on the positions it was chosen on."""

from __future__ import annotations

import math
import warnings

import numpy as np

from model_utils.core.records.spread import Spread

BOOTSTRAP_RESAMPLES = 1000
# Fewer documents (or passages) than this give their range, not a 95% interval: a bootstrap over 4 documents has only
# 35 distinct resamples, and its "interval" ends on single documents.
MIN_FOR_INTERVAL = 8
BOOTSTRAP_BLOCK = 64  # positions per bootstrap block: next-token losses of neighbouring positions are correlated
CONFIDENCE = 0.95


def block_starts(positions: int, rng: np.random.Generator, resamples: int = BOOTSTRAP_RESAMPLES,
                 block: int = BOOTSTRAP_BLOCK) -> tuple[np.ndarray, int]:
    """[resamples, blocks] first positions of moving blocks drawn with replacement, enough blocks of `block` (or
    all the positions, if fewer) to cover the positions once; and the block size."""
    size = min(block, positions)
    starts = rng.integers(0, positions - size + 1, size=(resamples, math.ceil(positions / size)))
    return starts, size


def block_bootstrap(nll: np.ndarray, rng: np.random.Generator, resamples: int = BOOTSTRAP_RESAMPLES,
                    block: int = BOOTSTRAP_BLOCK) -> np.ndarray:
    """[resamples, configs] mean NLL of moving-block bootstrap resamples of the positions (columns of `nll`,
    [configs, positions]): blocks of `block` consecutive positions drawn with replacement, so that the interval
    respects the correlation between neighbouring positions."""
    positions = nll.shape[1]
    starts, size = block_starts(positions, rng, resamples, block)
    index = (starts[..., None] + np.arange(size)).reshape(resamples, -1)[:, :positions]
    return nll[:, index].mean(axis=2).T


def fold_sums(nll: np.ndarray, rng: np.random.Generator, resamples: int = BOOTSTRAP_RESAMPLES,
              block: int = BOOTSTRAP_BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """The positions (columns of `nll`, [configs, positions]) cut into consecutive blocks of `block` (smaller when
    there are fewer than two such blocks, so that both folds hold positions), even blocks in fold 0 and odd ones in
    fold 1: sums [1 + resamples, 2, configs] of each fold, the positions as they are first, then resamples; and
    counts [2] of the positions in each fold (the same in every resample). Blocks, not single positions, alternate
    because neighbouring losses are correlated: a temperature chosen on a position's neighbour would be half chosen
    on the position itself. A resample draws each fold's positions from that fold alone (circular blocks over the
    fold's positions in order), so the two folds stay disjoint and a cross-fit on a resample is still chosen
    without the positions it is scored on; blocks drawn from the whole text would put some positions in both."""
    configs, positions = nll.shape
    size = max(1, min(block, positions // 2))
    fold_of = (np.arange(positions) // size) % 2
    sums = np.zeros((1 + resamples, 2, configs))
    counts = np.zeros(2, dtype=int)
    for fold in (0, 1):
        own = nll[:, fold_of == fold]  # [configs, the fold's positions], in order
        counts[fold] = own.shape[1]
        if counts[fold] == 0:
            continue
        sums[0, fold] = own.sum(axis=1)
        sums[1:, fold] = _block_sums(own, rng, resamples, size)
    return sums, counts


def _block_sums(nll: np.ndarray, rng: np.random.Generator, resamples: int, block: int) -> np.ndarray:
    """[resamples, configs] NLL sums of circular block resamples of the positions (columns of `nll`): blocks of
    `block` consecutive positions, the last position followed by the first, drawn with replacement and the last
    drawn block cut so that every resample holds as many positions as `nll`. Wrapping round gives every position
    the same chance (moving blocks that stop at the end draw the middle of a short fold more often than its ends,
    which moves the resampled mean off the fold's own)."""
    positions = nll.shape[1]
    size = min(block, positions)
    count = math.ceil(positions / size)
    lengths = np.full(count, size)
    lengths[-1] = positions - (count - 1) * size
    starts = rng.integers(0, positions, size=(resamples, count))
    twice = np.concatenate([nll, nll], axis=1)
    prefix = np.concatenate([np.zeros((len(nll), 1)), np.cumsum(twice, axis=1)], axis=1)  # [configs, 2 n + 1]
    return (prefix[:, starts + lengths] - prefix[:, starts]).sum(axis=2).T


def cross_fit(reference: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Held-out saving of choosing among candidates: `reference` [..., 2] and `candidates` [..., 2, choices] are NLL
    sums over two folds of the same positions (so within a fold the lowest sum is the lowest mean). The candidate
    with the lowest sum on one fold is scored on the other, both ways round. Returns the NLL saved against the
    reference summed over every position (each scored once, by a choice made without it) [...], and the choice made
    on each fold [..., 2]."""
    chosen = np.argmin(candidates, axis=-1)  # [..., fold chosen on]
    scored = np.take_along_axis(np.flip(candidates, axis=-2), chosen[..., None], axis=-1)[..., 0]
    return (np.flip(reference, axis=-1) - scored).sum(axis=-1), chosen


def interval(samples: np.ndarray) -> list[float]:
    """The CONFIDENCE percentile interval of bootstrap samples (along the first axis)."""
    low, high = (1 - CONFIDENCE) / 2 * 100, (1 + CONFIDENCE) / 2 * 100
    return [float(np.percentile(samples, low)), float(np.percentile(samples, high))]


def bounds(samples: np.ndarray, spread: Spread) -> list[float]:
    """The spread of `samples` (along the first axis) as `spread` says: their CONFIDENCE interval where they are
    bootstrap resamples, their range where they are the documents one by one (below MIN_FOR_INTERVAL of them)."""
    if spread is Spread.RANGE:
        return [float(np.min(samples)), float(np.max(samples))]
    return interval(samples)


def best_temperature(temperatures: np.ndarray, means: np.ndarray, samples: np.ndarray, reference: int,
                     spread: Spread = Spread.INTERVAL_95) -> dict:
    """The constant temperature with the lowest mean NLL, its NLL, the NLL at T = 1 (`reference`), what it saves,
    and the spreads of the best temperature and of the saving (`bounds`), from `samples` [rows, temperatures] of
    the mean NLL: bootstrap resamples, or each document alone (`spread` RANGE). Shared by the sweep (positions
    resampled) and the tuner (documents resampled, or one by one)."""
    winner = int(np.argmin(means))
    winners = temperatures[np.argmin(samples, axis=1)]
    saved = samples[:, reference] - samples.min(axis=1)
    return {"temperature": float(temperatures[winner]), "nll": float(means[winner]),
            "nll_at_1": float(means[reference]), "saved": float(means[reference] - means[winner]),
            "temperature_interval": bounds(winners, spread), "saved_interval": bounds(saved, spread)}


def spread_over(values: np.ndarray, statistic, rng: np.random.Generator) -> tuple[Spread, np.ndarray, np.ndarray]:
    """(how, low, high) of `statistic` (rows of `values` are documents or passages -> a number or an array) over
    the rows: the range of the rows' own values below MIN_FOR_INTERVAL rows, else a CONFIDENCE bootstrap interval
    of the statistic over resampled rows. A row whose statistic is NaN is left out (all NaN: NaN)."""
    if len(values) < MIN_FOR_INTERVAL:
        each = np.array([statistic(values[i : i + 1]) for i in range(len(values))], dtype=np.float64)
        return Spread.RANGE, _nan_quiet(np.nanmin, each), _nan_quiet(np.nanmax, each)
    draws = rng.integers(0, len(values), size=(BOOTSTRAP_RESAMPLES, len(values)))
    samples = np.array([statistic(values[draw]) for draw in draws], dtype=np.float64)
    tail = (1 - CONFIDENCE) / 2 * 100
    low = _nan_quiet(lambda found, axis: np.nanpercentile(found, tail, axis=axis), samples)
    high = _nan_quiet(lambda found, axis: np.nanpercentile(found, 100 - tail, axis=axis), samples)
    return Spread.INTERVAL_95, low, high


def _nan_quiet(reduce, values: np.ndarray) -> np.ndarray:
    """reduce(values, axis=0) leaving NaN out, NaN where every value is (numpy warns there; here it is the answer)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return reduce(values, axis=0)


def paired_block_interval(difference: np.ndarray, rng: np.random.Generator) -> tuple[float, float, float]:
    """(mean, low, high) of a per-position difference of two passes over the same positions, with its CONFIDENCE
    moving-block bootstrap interval (blocks of BOOTSTRAP_BLOCK positions: neighbouring losses are correlated)."""
    samples = block_bootstrap(difference[None, :], rng)[:, 0]
    low, high = interval(samples)
    return float(difference.mean()), low, high
