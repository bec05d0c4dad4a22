"""Bootstrap intervals and the choice of a best temperature from them: numpy only, shared by the sweep (positions
resampled in blocks), the tuner (documents resampled) and the verdicts, which also choose on one half of the data
and score on the other (`fold_sums`, `cross_fit`) so that a gain is not measured on the positions it was chosen on."""

from __future__ import annotations

import math

import numpy as np

BOOTSTRAP_RESAMPLES = 1000
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
    fold 1: sums [1 + resamples, 2, configs] of each fold, the positions as they are first, then moving-block
    resamples whose j-th drawn block goes to fold j % 2; and counts [2] of the positions in each fold (the same in
    every resample). Blocks, not single positions, alternate because neighbouring losses are correlated: a
    temperature chosen on a position's neighbour would be half chosen on the position itself."""
    configs, positions = nll.shape
    size = max(1, min(block, positions // 2))
    count = math.ceil(positions / size)
    lengths = np.full(count, size)
    lengths[-1] = positions - (count - 1) * size
    own = np.arange(count)[None, :] * size  # the positions as they are: block j starts at j * size
    starts = np.concatenate([own, block_starts(positions, rng, resamples, size)[0]])  # [1 + resamples, blocks]
    prefix = np.concatenate([np.zeros((configs, 1)), np.cumsum(nll, axis=1)], axis=1)  # [configs, positions + 1]
    sums = prefix[:, starts + lengths] - prefix[:, starts]  # [configs, 1 + resamples, blocks]
    folds = np.stack([sums[:, :, 0::2].sum(axis=2), sums[:, :, 1::2].sum(axis=2)], axis=2)  # [configs, R, 2]
    return np.moveaxis(folds, 0, -1), np.array([lengths[0::2].sum(), lengths[1::2].sum()])


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


def best_temperature(temperatures: np.ndarray, means: np.ndarray, samples: np.ndarray, reference: int) -> dict:
    """The constant temperature with the lowest mean NLL, its NLL, the NLL at T = 1 (`reference`), what it saves,
    and bootstrap intervals of the best temperature and of the saving, from `samples` [resamples, temperatures]
    of the mean NLL. Shared by the sweep (positions resampled) and the tuner (documents resampled)."""
    winner = int(np.argmin(means))
    winners = temperatures[np.argmin(samples, axis=1)]
    saved = samples[:, reference] - samples.min(axis=1)
    return {"temperature": float(temperatures[winner]), "nll": float(means[winner]),
            "nll_at_1": float(means[reference]), "saved": float(means[reference] - means[winner]),
            "temperature_interval": interval(winners), "saved_interval": interval(saved)}
