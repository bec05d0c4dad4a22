"""The rise past the trained length on the same tokens: on one text the mean per-position difference with a
moving-block interval, over documents pooled with their range below 8 and a 95% interval from 8 on; and the one
function that puts it in a verdict's place, so that the shares and the dominant lever are of the same-token rise."""

import numpy as np
import pytest

from model_utils.core.records.cut_context import CutContextPass
from model_utils.core.records.spread import Spread
from model_utils.core.records.verdict import Dominant, RiseBase
from model_utils.verdicts.rise import corpus_rise, one_text_rise, with_same_token_rise
from tests.golden import cases


def cut_pass(nll: np.ndarray) -> CutContextPass:
    return CutContextPass(trained_length=1024, stride=128, n_tokens=1025 + len(nll), min_context=897, windows=4,
                          position_nll=nll, seconds=1.0)


def test_one_text_the_rise_is_the_mean_difference_on_the_same_positions():
    rng = np.random.default_rng(1)
    cut = rng.gamma(2.0, 1.0, size=2000)
    full = cut + 0.4 + rng.normal(0.0, 0.3, size=2000)
    found = one_text_rise(full, cut_pass(cut))
    assert found.rise == pytest.approx(float(np.mean(full - cut)))
    assert found.nll_cut == pytest.approx(cut.mean()) and found.spread is Spread.INTERVAL_95
    assert found.interval[0] < found.rise < found.interval[1] and found.interval[1] - found.interval[0] < 0.1
    assert (found.stride, found.min_context, found.documents) == (128, 897, None)
    with pytest.raises(ValueError, match="not made on the same text"):
        one_text_rise(full[:-1], cut_pass(cut))


def test_over_documents_the_rise_is_pooled_and_its_spread_is_a_range_below_eight():
    counts = np.array([100.0, 300.0, 200.0, 400.0])
    cut = np.array([2.0, 2.5, 1.5, 3.0]) * counts
    full = cut + np.array([0.1, 0.5, 0.3, 0.7]) * counts
    found = corpus_rise(full, cut, counts, stride=1024, min_context=7169)
    assert found.rise == pytest.approx((full.sum() - cut.sum()) / counts.sum())
    assert found.spread is Spread.RANGE and found.interval == pytest.approx((0.1, 0.7)) and found.documents == 4
    eight = corpus_rise(np.tile(full, 2), np.tile(cut, 2), np.tile(counts, 2), stride=1024, min_context=7169)
    assert eight.spread is Spread.INTERVAL_95 and 0.1 < eight.interval[0] < eight.rise < eight.interval[1] < 0.7


def test_the_same_token_rise_takes_the_verdicts_rise_its_shares_and_its_lead():
    verdict = cases.verdicts()["a recipe recovers the rise"]
    assert verdict.decomposition.rise_base is RiseBase.EARLIER_POSITIONS and verdict.same_token_rise is None
    half = corpus_rise(np.array([3.0]), np.array([1.0]), np.array([1.0]), stride=1, min_context=1)
    half = type(half)(**{**half.to_dict(), "rise": verdict.rise * 2, "spread": Spread.RANGE, "interval": None})
    moved = with_same_token_rise(verdict, half)
    assert moved.rise == verdict.rise * 2 and moved.decomposition.rise_base is RiseBase.CUT_CONTEXT
    assert moved.rise_against_earlier == verdict.rise_against_earlier and moved.same_token_rise is half
    row = moved.decomposition.levers[0]
    assert moved.decomposition.share_of_rise(row) == pytest.approx(verdict.decomposition.share_of_rise(row) / 2)
    if verdict.gains.held_out is not None:
        assert moved.gains.held_out.share_of_rise == pytest.approx(verdict.gains.held_out.share_of_rise / 2)
    assert with_same_token_rise(moved, half) == moved  # applied twice, the same
    none = type(half)(**{**half.to_dict(), "rise": -0.2, "spread": Spread.RANGE, "interval": None})
    assert with_same_token_rise(verdict, none).decomposition.dominant is Dominant.NO_RISE
