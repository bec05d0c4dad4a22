"""The cut-context reference on the tiny model: every scored position's NLL equals the model's own on the window of
the last tokens it was given, whatever the stride, the tokenizer's lead (a BOS) first where it adds one, and the
windows come from the cache on a second call."""

import hashlib
from dataclasses import replace

import numpy as np
import pytest
import torch

from model_utils.core.errors import AnalysisError
from model_utils.core.records.cut_context import CutContextPass
from model_utils.experiments.cut_context import FORMAT, _key, cut_context_pass, lead_tokens, windows

pytestmark = pytest.mark.usefixtures("one_torch_thread")
L = 16  # a short "trained length", so that the tiny model's windows are cheap


BOS = 2


class WithBos:
    """A tokenizer that puts BOS before every text it encodes with its special tokens, as Gemma 3's does."""

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, text, add_special_tokens=True):
        ids = list(self.inner(text, add_special_tokens=False)["input_ids"])
        return {"input_ids": [BOS, *ids] if add_special_tokens else ids}

    def __getattr__(self, name):  # decode and the rest: the inner tokenizer's
        return getattr(self.inner, name)


def own_nll(tiny, ids: list[int], position: int, start: int, lead: tuple[int, ...] = ()) -> float:
    """NLL of token position + 1 from the plain model reading `lead`, then ids[start : position + 1]."""
    with torch.inference_mode():
        read = [*lead, *ids[start : position + 1]]
        logits = tiny.model(input_ids=torch.tensor([read])).logits[0, -1].double()
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


def test_the_lead_is_what_the_tokenizer_puts_before_a_text(tiny):
    assert lead_tokens(WithBos(tiny.tokenizer)) == (BOS,)
    assert lead_tokens(tiny.tokenizer) == tuple(tiny.tokenizer("x", add_special_tokens=True)["input_ids"][:-1])


@pytest.mark.parametrize("stride", [1, 6, L - 1])
def test_with_a_bos_each_window_reads_it_first_and_the_trained_length_in_all(tiny, tmp_path, stride):
    """A fresh read of a position's last tokens starts with the BOS, as the full pass does: the window is the BOS
    and the L - 1 text tokens before its end."""
    with_bos = replace(tiny, tokenizer=WithBos(tiny.tokenizer))
    ids = [BOS, *(int(i) for i in np.random.default_rng(stride).integers(3, 200, size=40))]
    found = cut_context_pass(with_bos, ids, L, stride, tmp_path)
    assert found.lead == 1 and found.min_context == L - stride + 1
    for first, stop in windows(len(ids), L, stride):
        for position in range(first, stop):
            expected = own_nll(tiny, ids, position, stop - L + 1, lead=(BOS,))
            assert found.position_nll[position - L] == pytest.approx(expected, abs=2e-4)
    raw = cut_context_pass(tiny, ids, L, stride, tmp_path)  # no lead: the raw slice, cached apart
    assert raw.lead == 0 and not np.allclose(raw.position_nll, found.position_nll)


def test_a_text_without_the_lead_or_a_stride_past_its_room_is_refused(tiny, tmp_path):
    with_bos = replace(tiny, tokenizer=WithBos(tiny.tokenizer))
    with pytest.raises(AnalysisError, match="special tokens"):
        cut_context_pass(with_bos, list(range(3, 40)), L, 4, tmp_path)
    with pytest.raises(AnalysisError, match="room for its lead"):
        cut_context_pass(with_bos, [BOS, *range(3, 40)], L, L, tmp_path)


def test_a_window_without_a_lead_keeps_the_key_it_had():
    """The committed windows of a model without a lead (the bundled SmolLM2) are found by the key they were saved
    under: the tokens ids[stop - L : stop + 1] and the positions scored."""
    ids, stop, first = list(range(3, 60)), 40, 36
    tokens = np.asarray(ids[stop - L : stop + 1], dtype=np.int64).tobytes()
    parts = [str(FORMAT), "model", hashlib.sha256(tokens).hexdigest(), str(stop - first)]
    before = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]
    assert _key("model", ids[stop - L : stop], ids[stop], stop - first) == before


def test_a_reference_written_before_leads_reads_as_none():
    ref = CutContextPass(trained_length=L, stride=4, n_tokens=30, min_context=13, windows=4,
                         position_nll=np.zeros(13), seconds=1.0, lead=1)
    old = {key: value for key, value in ref.to_dict().items() if key != "lead"}
    assert CutContextPass.from_dict(old).lead == 0 and CutContextPass.from_dict(ref.to_dict()) == ref
