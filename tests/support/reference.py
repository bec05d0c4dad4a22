"""A slow, plain reference for the head statistics: loops over queries in float64 numpy, written from the
definitions in model_utils/core/statistics.py's module docstring without sharing any of that module's code."""

import math

import numpy as np


def reference_row(p: np.ndarray, q: int, window: int, sliding_window: int | None = None,
                  trained_length: int | None = None, distances: np.ndarray | None = None,
                  visible: int | None = None) -> dict:
    """Statistics of the attention row `p` (length >= q + 1, zeros after q) of the query at position q.

    In a sliding-window layer (keys q - sliding_window < k <= q visible) the normalized entropy divides by the log of
    the number of keys the query can see, min(q + 1, sliding_window), instead of ln(q + 1) (`visible`, if given,
    says how many). The untrained mass is that of keys 1..q - trained_length (at distance >= trained_length), 0
    without a trained length; the effective untrained mass the same on `distances` [q + 1] (each key's distance as
    a remapping gives it; default q - k)."""
    row = np.asarray(p[: q + 1], dtype=np.float64)
    distances = np.arange(q, -1, -1) if distances is None else np.asarray(distances)[: q + 1]
    far = np.arange(q + 1) >= 1
    if trained_length is not None:
        far &= distances >= trained_length
    nonzero = row[row > 0]
    entropy = float(-(nonzero * np.log(nonzero)).sum())
    first_recent = max(1, q - window + 1)
    logs = np.sort(np.log(nonzero))
    gap = logs[-1] - logs[-2] if len(logs) >= 2 else math.inf
    if visible is None:
        visible = q + 1 if sliding_window is None else min(q + 1, sliding_window)
    return {
        "entropy": entropy,
        "normalized_entropy": entropy / math.log(visible),
        "sink_mass": float(row[0]),
        "recent_mass": float(row[first_recent : q + 1].sum()),
        "distant_mass": float(row[1:first_recent].sum()),
        "gap": float(gap),
        "untrained_mass": 0.0 if trained_length is None else float(row[1 : max(1, q - trained_length + 1)].sum()),
        "effective_untrained_mass": 0.0 if trained_length is None else float(row[far].sum()),
    }


def reference_head(probs: np.ndarray, window: int, sliding_window: int | None = None,
                   trained_length: int | None = None) -> dict:
    """Mean over queries q_start <= q < n of reference_row, for one head's map [n, n]; top_ratio = exp(mean gap).
    sliding_window: the layer's attention window, if it has one; trained_length: see reference_row."""
    n = probs.shape[0]
    q_start = max(1, min(window, n - 1))
    rows = [reference_row(probs[q], q, window, sliding_window, trained_length) for q in range(q_start, n)]
    means = {key: float(np.mean([r[key] for r in rows])) for key in rows[0]}
    means["top_ratio"] = math.exp(means.pop("gap"))
    return means


def resoftmax(probs: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(ln p / T) row by row (== softmax(s / T)); zeros stay zeros."""
    with np.errstate(divide="ignore"):
        logits = np.where(probs > 0, np.log(np.maximum(probs, 1e-300)), -np.inf) / temperature
    logits -= logits.max(axis=-1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=-1, keepdims=True)


def assert_statistics_match_maps(report, maps, windows, temperatures, window: int) -> None:
    """Every statistic of an isolated-mode report equals the one recomputed from the model's own eager attention
    maps ([layer][head] of [n, n] probabilities at T = 1), re-softmaxed at each temperature."""
    import pytest

    from model_utils.core.statistics import STATISTICS

    for result, temperature in zip(report.results, temperatures, strict=True):
        for layer, layer_maps in enumerate(maps):
            for head, head_map in enumerate(layer_maps):
                expected = reference_head(resoftmax(head_map, temperature), window, windows[layer])
                for field in STATISTICS:
                    assert result.heads[field][layer, head] == pytest.approx(expected[field], rel=2e-4, abs=1e-5), (
                        f"T={temperature} layer {layer} (window {windows[layer]}) head {head} {field}")


def reference_last_query_masses(row: np.ndarray, window: int, fact: tuple[int, int] | None) -> dict:
    """Where one attention row of the last query (keys 0..n-1) puts its weight, key by key: key 0 is the sink, keys
    at distance below `window` (n - window <= k, k >= 1) recent, keys of the fact [start, stop) outside those two the
    fact, any other key elsewhere."""
    n = len(row)
    masses = {"sink": 0.0, "recent": 0.0, "fact": 0.0, "elsewhere": 0.0}
    for key, weight in enumerate(np.asarray(row, dtype=np.float64)):
        if key == 0:
            part = "sink"
        elif n - 1 - key < window:
            part = "recent"
        elif fact is not None and fact[0] <= key < fact[1]:
            part = "fact"
        else:
            part = "elsewhere"
        masses[part] += float(weight)
    return masses
