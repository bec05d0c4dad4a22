"""The cut-context reference on the tiny model: every scored position's NLL equals the model's own on the window of
the last tokens it was given, whatever the stride, and the windows come from the cache on a second call."""

import numpy as np
import pytest
import torch

from model_utils.core.errors import AnalysisError
from model_utils.core.records.cut_context import CutContextPass
from model_utils.experiments.cut_context import cut_context_pass, windows

pytestmark = pytest.mark.usefixtures("one_torch_thread")
L = 16  # a short "trained length", so that the tiny model's windows are cheap


def own_nll(tiny, ids: list[int], position: int, start: int) -> float:
    """NLL of token position + 1 from the plain model reading ids[start : position + 1]."""
    with torch.inference_mode():
        logits = tiny.model(input_ids=torch.tensor([ids[start : position + 1]])).logits[0, -1].double()
    return float(-torch.log_softmax(logits, dim=-1)[ids[position + 1]])


def test_windows_cover_every_position_past_the_trained_length_once():
    blocks = windows(50, L, 6)
    covered = [p for first, stop in blocks for p in range(first, stop)]
    assert covered == list(range(L, 49))
    assert all(stop - first <= 6 for first, stop in blocks)
    with pytest.raises(AnalysisError, match="stride"):
        windows(50, L, L + 1)


@pytest.mark.parametrize("stride", [1, 5, L])
def test_each_position_reads_the_window_that_ends_its_block(tiny, tmp_path, stride):
    ids = [int(i) for i in np.random.default_rng(stride).integers(3, 200, size=41)]
    found = cut_context_pass(tiny, ids, L, stride, tmp_path)
    assert found.position_nll.shape == (41 - 1 - L,)
    assert found.min_context == L - stride + 1 and found.windows == len(windows(41, L, stride))
    for first, stop in windows(41, L, stride):
        for position in range(first, stop):
            expected = own_nll(tiny, ids, position, stop - L)
            assert found.position_nll[position - L] == pytest.approx(expected, abs=2e-4)
    if stride == 1:  # every position reads exactly its last L tokens
        assert found.position_nll[3] == pytest.approx(own_nll(tiny, ids, L + 3, L + 3 - L + 1), abs=2e-4)


def test_cached_windows_give_the_same_record_without_a_pass(tiny, tmp_path):
    ids = list(range(3, 40))
    first = cut_context_pass(tiny, ids, L, 8, tmp_path)
    heard = []
    again = cut_context_pass(tiny, ids, L, 8, tmp_path, on_window=lambda i, n: heard.append(i))
    assert heard == [] and np.array_equal(first.position_nll, again.position_nll)
    assert CutContextPass.from_dict(first.to_dict()).position_nll.tolist() == first.position_nll.tolist()


def test_a_text_within_the_trained_length_is_refused(tiny, tmp_path):
    with pytest.raises(AnalysisError, match="no position past the trained length"):
        cut_context_pass(tiny, list(range(3, 3 + L)), L, 4, tmp_path)


def test_a_sweep_and_a_tune_measure_their_rise_against_the_cut_context(document, summary_file):
    """The tiny model's sweep and tune (conftest: 2,048 tokens, twice its trained length): the reference travels
    with them, and the verdict's rise is T = 1's loss past the trained length minus the reference's, on the same
    positions, which the shares divide."""
    import json

    from model_utils.core.records.tune import TuneSummary

    verdict, cut = document.verdict, document.cut_context
    assert cut is not None and cut.trained_length == 1024 and cut.stride == 128
    assert len(cut.position_nll) == document.n_tokens - 1 - 1024
    same = verdict.same_token_rise
    assert same.nll_cut == pytest.approx(float(cut.position_nll.mean()))
    assert same.rise == pytest.approx(verdict.nll_past - same.nll_cut, abs=1e-5)  # bucket means vs positions
    assert verdict.rise == same.rise and verdict.decomposition.rise_base.value == "cut_context"
    summary = TuneSummary.from_dict(json.loads(summary_file.read_text()))
    cuts, rise = summary.cut_context, summary.verdict.same_token_rise
    assert len(cuts) == 2 and rise.documents == 2 and rise.spread.value == "range"
    pooled = sum(c.nll_sum for c in cuts) / sum(c.positions for c in cuts)
    assert rise.nll_cut == pytest.approx(pooled) and rise.rise == pytest.approx(summary.verdict.nll_past - pooled)
