"""The fitted value and its interval over documents. Near the minimum, each training document's NLL past the
trained length is a quadratic in the parameter (least squares through its fold's evaluations within WINDOW of the
fold's best), so the value a set of documents would fit is the minimum of their token-weighted sum of quadratics:
the value is that minimum over every document, and its interval a percentile bootstrap over documents of it. No
pass is run: the curves come from the evaluations the folds' searches already made."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from model_utils.core.bootstrap import BOOTSTRAP_RESAMPLES, interval
from model_utils.core.records.fit import Fold

WINDOW = 0.1  # in the parameter: the evaluations this close to a fold's best describe a document's curve there
POINTS = 3  # a quadratic needs three; fewer within WINDOW takes the three nearest


@dataclass(frozen=True, kw_only=True)
class Curves:
    """One quadratic per document, a x^2 + b x + c, in NLL per token, weighted by its positions past the trained
    length."""

    coefficients: np.ndarray  # [document, 3]: a, b, c
    weights: np.ndarray  # [document]: positions past the trained length

    def minimum(self, counts: np.ndarray) -> np.ndarray:
        """[resample] the minimum of the summed quadratics, each document taken counts[resample, document] times;
        NaN where the sum has no minimum (a curvature of 0 or below)."""
        scaled = counts * self.weights
        a, b = scaled @ self.coefficients[:, 0], scaled @ self.coefficients[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a > 0, -b / (2 * a), np.nan)


@dataclass(frozen=True, kw_only=True)
class Spread:
    """What fit.json says of its value: the minimum over every document and the bootstrap interval."""

    parameter: float
    interval: tuple[float, float]


def document_curve(points: Sequence[tuple[float, float]], best: float) -> np.ndarray:
    """a, b, c of the least-squares quadratic through (parameter, NLL) points near `best`."""
    near = [point for point in points if abs(point[0] - best) <= WINDOW]
    if len(near) < POINTS:
        near = sorted(points, key=lambda point: abs(point[0] - best))[:POINTS]
    x, y = np.array(near).T
    return np.polyfit(x, y, 2)


def document_curves(folds: Sequence[Fold], nll: Callable[[str, float], tuple[float, int]]) -> Curves:
    """The curve of every training document of every fold; nll(document, value) is its (NLL per token past the
    trained length, positions there) at an evaluated value."""
    rows, weights = [], []
    for fold in folds:
        for document in fold.training:
            measured = [(entry.parameter, *nll(document, entry.parameter)) for entry in fold.evaluations]
            rows.append(document_curve([(value, loss) for value, loss, _ in measured], fold.parameter))
            weights.append(measured[0][2])
    return Curves(coefficients=np.array(rows), weights=np.array(weights, dtype=float))


def spread(curves: Curves, bounds: tuple[float, float], rng: np.random.Generator,
           resamples: int = BOOTSTRAP_RESAMPLES) -> Spread:
    """The minimum over all documents and its percentile bootstrap over documents, both clipped to the searched
    bounds (a minimum beyond them is not measured)."""
    count = len(curves.weights)
    draws = rng.integers(0, count, size=(resamples, count))
    counts = np.zeros((resamples, count))
    np.add.at(counts, (np.arange(resamples)[:, None], draws), 1)
    every = float(np.clip(curves.minimum(np.ones((1, count)))[0], *bounds))
    samples = np.clip(curves.minimum(counts), *bounds)
    samples = samples[np.isfinite(samples)]
    low, high = interval(samples) if len(samples) else (every, every)
    return Spread(parameter=every, interval=(float(low), float(high)))
