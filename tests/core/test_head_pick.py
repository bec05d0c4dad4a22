"""The head the Attention maps page opens on for a query (Report.head_pick): the largest rise of the query row's
normalized entropy from the sharpest to the softest constant T, not the largest fall of its top / runner-up ratio,
which a sink head near one-hot at both ends wins by powers of ten while nothing visible changes."""

import math

import numpy as np
import pytest

from model_utils.core.report import LayerInputs, Report, TemperatureResult, runner_up_ratio
from model_utils.core.schedules import Schedule
from model_utils.core.softmax import softmax_with_temperature
from model_utils.core.views import View


def result(temperature: float | None) -> TemperatureResult:
    return TemperatureResult(view=View(Schedule("yarn", 2.0) if temperature is None else temperature),
                             applied_rope=None, loss=1.0, next_token=[],
                             heads={"entropy": np.zeros((2, 2))}, last_rows=np.zeros((2, 2, 6)),
                             last_log_probs=np.zeros(4), position_nll=np.zeros(5), position_greedy=np.zeros(5, bool),
                             bucket_heads={}, bucket_nll=np.zeros(1), distance_profile=np.zeros((1, 2, 3)))


def report(temperatures, sliding=(None, None)) -> Report:
    kept = {layer: LayerInputs(query=np.zeros(1), key=np.zeros(1), scaling=1.0, sliding=window, softcap=None)
            for layer, window in enumerate(sliding)}
    return Report(model="m", n_tokens=6, tokens=list("abcdef"), token_ids=list(range(6)), truncated=False,
                  mode="in-model", window=32, q_start=1, layers=None, seconds=0.0,
                  results=[result(t) for t in temperatures], trained_length=64, beyond_trained=False,
                  bucket_size=None, buckets=[(1, 6)], distance_edges=np.array([0, 1]), kernel="torch",
                  multipliers=np.ones((len(temperatures), 6)), kept=kept)


SCORES = {  # [layer, head] -> the query's scores over its 6 keys (position 5 sees 0..5)
    (0, 0): [12.0, 0.0, 0.5, 0.0, 0.2, 0.1],  # a sink head: near one-hot at T = 0.5 and at T = 2
    (0, 1): [0.0, 0.1, 0.0, 0.2, 0.1, 0.0],  # near uniform at both
    (1, 0): [0.0, 2.0, 0.0, 0.5, 0.0, 0.0],  # one key ahead by a gap of 1.5: sharp at 0.5, spread at 2
    (1, 1): [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # uniform
}


def rows_at(temperature: float) -> np.ndarray:
    rows = np.zeros((2, 2, 6))
    for (layer, head), scores in SCORES.items():
        rows[layer, head] = softmax_with_temperature(scores, temperature)
    return rows


def test_the_pick_is_the_head_whose_row_spreads_most_not_the_sink_heads_ratio():
    picked = report([1.0, 2.0, 0.5]).head_pick(rows_at(0.5), rows_at(2.0), query=5)
    sink_fall = runner_up_ratio(rows_at(0.5)[0, 0]) / runner_up_ratio(rows_at(2.0)[0, 0])
    assert sink_fall > 1e6  # the sink head's ratio falls most, by far
    assert (picked.layer, picked.head) == (1, 0)
    assert picked.temperatures == (0.5, 2.0)  # the sharpest and the softest constant T, whatever their order
    assert picked.ratios == pytest.approx((math.exp(1.5 / 0.5), math.exp(1.5 / 2.0)))
    assert picked.ratio_factor == pytest.approx(math.exp(1.5 * 1.5))
    spread = [-(w * np.log(w)).sum() / math.log(6) for w in (rows_at(0.5)[1, 0], rows_at(2.0)[1, 0])]
    assert picked.entropies == pytest.approx(tuple(spread))


def test_a_sliding_window_layer_normalizes_by_the_keys_it_sees():
    """Layer 0 sees 2 keys: a row spread evenly over them is at its top spread, 1, not at ln 2 / ln 6."""
    sharp, soft = rows_at(0.5), rows_at(2.0)
    sharp[0, 1], soft[0, 1] = [0, 0, 0, 0, 0.999, 0.001], [0, 0, 0, 0, 0.5, 0.5]
    assert report([0.5, 2.0]).head_pick(sharp, soft, query=5).layer == 1
    picked = report([0.5, 2.0], sliding=(2, None)).head_pick(sharp, soft, query=5)
    assert (picked.layer, picked.head) == (0, 1) and picked.entropies[1] == pytest.approx(1.0)


def test_no_pick_without_two_constant_temperatures_a_visible_key_or_a_change():
    assert report([1.0, None]).head_pick(rows_at(0.5), rows_at(2.0), query=5) is None
    assert report([0.5, 2.0]).head_pick(rows_at(0.5)[..., :1], rows_at(2.0)[..., :1], query=0) is None
    same = rows_at(1.0)
    assert report([0.5, 2.0]).head_pick(same, same, query=5) is None  # T acts on no layer: nothing spreads


def test_the_runner_up_ratio_of_a_row():
    assert runner_up_ratio(np.array([0.1, 0.6, 0.3])) == pytest.approx(2.0)
    assert runner_up_ratio(np.array([1.0, 0.0, 0.0])) == math.inf
