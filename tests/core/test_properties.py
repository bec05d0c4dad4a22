"""Property-based tests (hypothesis) over random scores and temperatures: the invariants the explorer relies on."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model_utils import analyze
from model_utils.core.softmax import MAX_TEMPERATURE, MIN_TEMPERATURE, entropy, softmax_with_temperature
from model_utils.engine.row_statistics import row_statistics
from tests.support import SAMPLE_TEXT

temperatures = st.floats(min_value=MIN_TEMPERATURE, max_value=MAX_TEMPERATURE, allow_nan=False,
                         allow_infinity=False)  # the whole accepted range, ends included
score_vectors = st.lists(st.floats(min_value=-1e4, max_value=1e4, allow_nan=False), min_size=2, max_size=64)


@given(score_vectors, temperatures)
def test_weights_sum_to_one_and_stay_finite(scores, temperature):
    weights = softmax_with_temperature(scores, temperature)
    assert np.isfinite(weights).all() and np.all(weights >= 0)
    assert weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert weights[int(np.argmax(scores))] == weights.max()  # the top key stays on top


@given(score_vectors, temperatures, temperatures)
def test_entropy_is_bounded_and_non_decreasing_in_temperature(scores, first, second):
    low, high = sorted((first, second))
    h_low, h_high = (float(entropy(softmax_with_temperature(scores, t))) for t in (low, high))
    ceiling = math.log(len(scores))
    assert -1e-12 <= h_low <= ceiling + 1e-9 and -1e-12 <= h_high <= ceiling + 1e-9
    assert h_low <= h_high + 1e-9


@st.composite
def causal_blocks(draw):
    """A causal block of attention logits [heads, rows, keys] for queries start..start+rows-1, and a window."""
    n = draw(st.integers(min_value=3, max_value=160))
    start = draw(st.integers(min_value=1, max_value=n - 1))
    heads = draw(st.integers(min_value=1, max_value=3))
    seed = draw(st.integers(min_value=0, max_value=2**31 - 1))
    scale = draw(st.floats(min_value=1e-3, max_value=50.0))
    multiplier = draw(st.floats(min_value=1e-2, max_value=1e9))
    scores = torch.randn(heads, n, n, generator=torch.Generator().manual_seed(seed)) * scale
    logits = scores * multiplier
    logits = logits.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), torch.finfo(torch.float32).min)
    return logits[:, start:].contiguous(), start, draw(st.integers(min_value=1, max_value=n + 5))


@given(causal_blocks())
def test_row_statistics_masses_add_up_and_entropy_is_bounded(block):
    logits, start, window = block
    stats, last_row = row_statistics(logits.clone(), start, window)
    assert torch.isfinite(stats).all() and torch.isfinite(last_row).all()
    masses = stats[..., 2:5]
    assert (masses >= -1e-6).all()
    assert torch.allclose(masses.sum(dim=-1), torch.ones(masses.shape[:-1]), atol=1e-5)  # sink + recent + distant
    ceilings = torch.log(torch.arange(start, start + logits.shape[-2], dtype=torch.float32) + 1.0)
    assert (stats[..., 0] >= 0).all() and (stats[..., 0] <= ceilings + 1e-4).all()
    assert (stats[..., 5] >= 0).all()  # the top-2 gap
    assert last_row.sum(dim=-1).sub(1).abs().max() <= 1e-5


@settings(max_examples=12)
@given(temperatures.filter(lambda t: 0.05 <= t <= 100.0))
def test_isolated_top_ratio_is_the_t1_ratio_to_the_power_one_over_t(tiny, temperature):
    if temperature == 1.0:
        temperature = 2.0
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[temperature, 1.0], mode="isolated")
    at_t, at_one = (result.heads["log_top_ratio"] for result in report.results)
    # log top_ratio(T) = log top_ratio(1) / T, i.e. top_ratio(T) = top_ratio(1) ** (1 / T)
    np.testing.assert_allclose(at_t, at_one / temperature, rtol=1e-4, atol=1e-6)


@settings(max_examples=12)
@given(st.lists(temperatures, min_size=1, max_size=3, unique=True), st.sampled_from(["in-model", "isolated"]))
def test_no_nan_or_inf_for_any_temperature_in_range(tiny, chosen, mode):
    report = analyze(tiny, SAMPLE_TEXT[:120], temperatures=chosen, mode=mode, window=8)
    for result in report.results:
        assert math.isfinite(result.loss)
        assert np.isfinite(result.last_rows).all() and np.isfinite(result.last_log_probs).all()
        for values in result.heads.values():
            assert np.isfinite(values).all()
