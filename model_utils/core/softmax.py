"""Softmax with a temperature on small numpy arrays: what the Softmax lab teaches and every page's numbers rest on.
T > 1 softens (higher entropy), T < 1 sharpens; a score gap g becomes a weight ratio exp(g / T)."""

from __future__ import annotations

import math

import numpy as np

# Temperatures the engine accepts. Below MIN_TEMPERATURE attention is one-hot to float precision anyway, and the
# multiplier 1 / T would grow towards float32 overflow.
MIN_TEMPERATURE = 1e-3
MAX_TEMPERATURE = 100.0
TEMPERATURE_RANGE = f"[{MIN_TEMPERATURE:g}, {MAX_TEMPERATURE:g}]"


def check_temperature(temperature: float) -> float:
    """Return `temperature` as a float, or raise ValueError saying which values are allowed."""
    try:
        value = float(temperature)
    except (TypeError, ValueError):
        raise ValueError(f"temperature {temperature!r} is not a number; use a number in {TEMPERATURE_RANGE}") from None
    if not math.isfinite(value) or not MIN_TEMPERATURE <= value <= MAX_TEMPERATURE:
        raise ValueError(f"temperature {temperature!r} is out of range; use a number in {TEMPERATURE_RANGE}")
    return value


def softmax_with_temperature(scores, temperature: float) -> np.ndarray:
    """softmax(scores / T) along the last axis, stable for any accepted T (the row max is subtracted first)."""
    temperature = check_temperature(temperature)
    logits = np.asarray(scores, dtype=np.float64) / temperature
    shifted = logits - logits.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


def entropy(probabilities) -> np.ndarray:
    """-sum p ln p along the last axis, in nats, with 0 ln 0 = 0."""
    p = np.asarray(probabilities, dtype=np.float64)
    safe = np.where(p > 0, p, 1.0)  # ln 1 = 0 stands in for the 0 ln 0 terms
    return -(p * np.log(safe)).sum(axis=-1)


def weight_ratio(gap, temperature: float):
    """Weight of a key over one whose score is `gap` lower: exp(gap / T). Gap 5 gives ~148.4 at T=1, ~12.18 at T=2;
    inf where a float cannot hold it (gap 1000 at T = 0.05), without a warning: that is the answer."""
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(gap, dtype=np.float64) / check_temperature(temperature))


def top_gap(scores) -> float:
    """The top score minus the runner-up's (0 where two share the top): exp(top_gap / T) is the top key's weight
    over the runner-up's."""
    top, runner_up = np.sort(np.asarray(scores, dtype=np.float64))[[-1, -2]]
    return float(top - runner_up)


def entropy_curve(scores, temperatures) -> np.ndarray:
    """Entropy of softmax(scores / T) for each T: the curve the Softmax lab plots against T."""
    return np.array([entropy(softmax_with_temperature(scores, t)) for t in temperatures])
