"""What the engine measures in every attention row, by name: the statistics, their labels, key-distance bins and
query-position buckets, and how per-row values are averaged. Numpy only, so pages name a statistic without torch.

For the query at position q with weights p over the keys it can see: entropy H = -sum p ln p (nats); normalized
entropy H / ln(visible keys); sink mass p of key 0; recent mass p of keys max(1, q - window + 1)..q; distant mass the
rest (sink + recent + distant = 1); top_ratio exp(mean top-2 logit gap), the geometric mean over queries of the top
key's weight over the runner-up's; untrained mass p of the keys at distance q - k >= L (the trained length), key 0
left out (the sink is reported on its own), so 0 inside the trained context; effective untrained mass the same on the
distance a remapping (core.rope.REMAPS) gives the pair, d' instead of q - k (without one, the untrained mass);
distance bin j = p of the keys at distance edges[j] <= q - k < edges[j + 1] (the distance in the text, remapped or
not).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

# Order of the per-row quantities in the torch path's and the fused kernel's last axis; distance bins follow.
ROW_FIELDS = ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass", "top_gap", "untrained_mass",
              "effective_untrained_mass")
# The per-head statistics a report carries, by name: the one list every module, page and test imports.
STATISTICS = ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass", "top_ratio",
              "untrained_mass")
MASS_PARTS = ("sink_mass", "recent_mass", "distant_mass")  # they add up to 1
# What a report, a sweep's pass and a tune's rows carry: STATISTICS, and the untrained mass on remapped distances,
# which the pages' lists of statistics leave out: on the model's own positions it is untrained_mass.
REPORTED_STATISTICS = (*STATISTICS, "effective_untrained_mass")
STATISTIC_LABELS = {
    "entropy": "entropy (nats)",
    "normalized_entropy": "normalized entropy H / ln(visible keys)",
    "sink_mass": "sink mass (first token)",
    "recent_mass": "recent mass",
    "distant_mass": "distant mass",
    "top_ratio": "top / runner-up weight ratio (geometric mean over queries)",
    "untrained_mass": "untrained-distance mass (keys farther back than the trained length, sink excluded)",
    "effective_untrained_mass": ("untrained-distance mass on the distances a remapping gives (keys whose remapped "
                                 "distance is at least the trained length, sink excluded)"),
}

# exp() of anything above this overflows a float64; top_ratio saturates there instead of becoming inf.
_LOG_FLOAT_MAX = math.log(np.finfo(np.float64).max)


def distance_bins(n_tokens: int, trained_length: int | None = None) -> np.ndarray:
    """Edges 0, 1, 2, 4, 8, ... of log-spaced key-distance bins covering distances 0..n-1 (bin i: [e_i, e_i+1)),
    with the trained length L added as an edge when the text reaches distance L, so that the bins from L on hold
    exactly the untrained distances."""
    edges = [0, 1]
    while edges[-1] < n_tokens:
        edges.append(edges[-1] * 2)
    if trained_length is not None and 1 < trained_length < n_tokens and trained_length not in edges:
        edges = sorted([*edges, trained_length])
    return np.array(edges)


def untrained_bin(edges: np.ndarray, trained_length: int | None) -> int:
    """Index of the first distance bin whose keys are all at distance >= L (the trained length), or the number of
    bins when no bin starts at L (the text does not reach that distance, or no trained length is given)."""
    edges = np.asarray(edges)
    where = np.flatnonzero(edges[:-1] == trained_length) if trained_length is not None else []
    return int(where[0]) if len(where) else len(edges) - 1


def mass_by_distance(row: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Attention mass of the last query (row[-1 - d] is the key at distance d) summed in each distance bin."""
    by_distance = np.asarray(row, dtype=np.float64)[::-1]  # [distance]
    cumulative = np.concatenate([[0.0], np.cumsum(by_distance)])
    clipped = np.minimum(edges, len(by_distance))
    return cumulative[clipped[1:]] - cumulative[clipped[:-1]]


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


def named_statistics(mean_rows: np.ndarray) -> dict[str, np.ndarray]:
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
