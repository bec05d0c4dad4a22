"""What a softmax temperature does to one attention row, as pure numpy/torch functions.

Two groups live here. The teaching functions (`softmax_with_temperature`, `entropy`, `weight_ratio`,
`entropy_curve`) work on small numpy arrays for the Softmax lab. The row statistics (`row_statistics`) work on
torch blocks of attention logits in model_utils/row_statistics.py; the fused kernel (fused_attention.c) computes
the same quantities, and tests hold the two together. This module needs numpy only, so a page about the softmax
alone never imports torch.

The definitions, for the query at position q with attention weights p over the keys it can see:
entropy H = -sum p ln p (nats); normalized entropy H / ln(number of visible keys), 0 = one key, 1 = uniform;
sink mass p of key 0; recent mass p of keys max(1, q - window + 1)..q; distant mass the rest (sink + recent +
distant = 1); top gap = largest logit - second largest, reported as top_ratio = exp(mean gap), the geometric
mean over queries of the top key's weight over the runner-up's; distance bin j = p of the keys at distance
edges[j] <= q - k < edges[j + 1] (distance 0 = the query itself).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

# Order of the per-row quantities in `row_statistics`' last axis (and the fused kernel's); distance bins follow.
ROW_FIELDS = ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass", "top_gap")
# The per-head statistics a report carries, by name: the one list every module, page and test imports.
STATISTICS = ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass", "top_ratio")
MASS_PARTS = ("sink_mass", "recent_mass", "distant_mass")  # they add up to 1
STATISTIC_LABELS = {
    "entropy": "entropy (nats)",
    "normalized_entropy": "normalized entropy H / ln(visible keys)",
    "sink_mass": "sink mass (first token)",
    "recent_mass": "recent mass",
    "distant_mass": "distant mass",
    "top_ratio": "top / runner-up weight ratio (geometric mean over queries)",
}
# Temperatures the engine accepts. Below MIN_TEMPERATURE attention is one-hot to float precision anyway, and the
# multiplier 1 / T would grow towards float32 overflow (T = 1e-39 gave NaN everywhere).
MIN_TEMPERATURE = 1e-3
MAX_TEMPERATURE = 100.0
TEMPERATURE_RANGE = f"[{MIN_TEMPERATURE:g}, {MAX_TEMPERATURE:g}]"

# exp() of anything above this overflows a float64; top_ratio saturates there instead of becoming inf.
_LOG_FLOAT_MAX = math.log(np.finfo(np.float64).max)


def distance_bins(n_tokens: int) -> np.ndarray:
    """Edges 0, 1, 2, 4, 8, ... of log-spaced key-distance bins covering distances 0..n-1 (bin i: [e_i, e_i+1))."""
    edges = [0, 1]
    while edges[-1] < n_tokens:
        edges.append(edges[-1] * 2)
    return np.array(edges)


def mass_by_distance(row: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Attention mass of the last query (row[-1 - d] is the key at distance d) summed in each distance bin."""
    by_distance = np.asarray(row, dtype=np.float64)[::-1]  # [distance]
    cumulative = np.concatenate([[0.0], np.cumsum(by_distance)])
    clipped = np.minimum(edges, len(by_distance))
    return cumulative[clipped[1:]] - cumulative[clipped[:-1]]


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
    """Weight of a key over one whose score is `gap` lower: exp(gap / T). Gap 5 gives ~148.4 at T=1, ~12.18 at T=2."""
    return np.exp(np.asarray(gap, dtype=np.float64) / check_temperature(temperature))


def entropy_curve(scores, temperatures) -> np.ndarray:
    """Entropy of softmax(scores / T) for each T: the curve the Softmax lab plots against T."""
    return np.array([entropy(softmax_with_temperature(scores, t)) for t in temperatures])


def top_ratio_from_gap(mean_gap: float) -> float:
    """exp(mean top-2 logit gap): the geometric-mean weight ratio of the top key over the runner-up.

    Saturates at the largest float64 rather than returning inf (only reachable for T near 0)."""
    return math.exp(min(float(mean_gap), _LOG_FLOAT_MAX))


def statistic_mean(values: np.ndarray, statistic: str, axis=None) -> np.ndarray:
    """Mean of one per-head statistic over `axis` (all by default): geometric for top_ratio, which is a ratio (as
    TemperatureResult.layer_mean averages its logarithm), arithmetic for the rest."""
    if statistic == "top_ratio":
        return np.exp(np.log(values).mean(axis=axis))
    return values.mean(axis=axis)


def first_stat_query(n_tokens: int, window: int) -> int:
    """q_start = max(1, min(window, n - 1)): statistics average over queries q_start <= q < n."""
    return max(1, min(window, n_tokens - 1))


def summarize(mean_rows: np.ndarray) -> dict[str, np.ndarray]:
    """Turn means over queries [..., len(ROW_FIELDS) (+ bins)] into named arrays: the STATISTICS, the top gap as
    `top_ratio` (its exponential) and `log_top_ratio`."""
    named = {field: mean_rows[..., i] for i, field in enumerate(ROW_FIELDS)}
    gap = named.pop("top_gap")
    named["top_ratio"] = np.vectorize(top_ratio_from_gap, otypes=[np.float64])(gap)
    named["log_top_ratio"] = gap
    return named


def bucket_bounds(q_start: int, n: int, bucket_size: int | None) -> list[tuple[int, int]]:
    """[start, stop) of each query-position bucket. Boundaries sit at multiples of bucket_size, so buckets line up
    with round positions (and a trained length of 8,192 falls on one with buckets of 1,024): the first bucket
    starts at q_start and may be shorter, as may the last. None: one bucket, q_start..n-1."""
    if not bucket_size:
        return [(q_start, n)]
    edges = [q_start, *range((q_start // bucket_size + 1) * bucket_size, n, bucket_size), n]
    return [(start, stop) for start, stop in itertools.pairwise(edges)]
