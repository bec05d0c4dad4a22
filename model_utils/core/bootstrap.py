"""Bootstrap intervals and the choice of a best temperature from them: numpy only, shared by the sweep (positions
resampled in blocks), the tuner (documents resampled) and the verdicts."""

from __future__ import annotations

import math

import numpy as np

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_BLOCK = 64  # positions per bootstrap block: next-token losses of neighbouring positions are correlated
CONFIDENCE = 0.95


def block_bootstrap(nll: np.ndarray, rng: np.random.Generator, resamples: int = BOOTSTRAP_RESAMPLES,
                    block: int = BOOTSTRAP_BLOCK) -> np.ndarray:
    """[resamples, configs] mean NLL of moving-block bootstrap resamples of the positions (columns of `nll`,
    [configs, positions]): blocks of `block` consecutive positions drawn with replacement, so that the interval
    respects the correlation between neighbouring positions."""
    positions = nll.shape[1]
    size = min(block, positions)
    count = math.ceil(positions / size)
    starts = rng.integers(0, positions - size + 1, size=(resamples, count))
    index = (starts[..., None] + np.arange(size)).reshape(resamples, -1)[:, :positions]
    return nll[:, index].mean(axis=2).T


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
