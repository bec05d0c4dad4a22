"""Statistics and loss by query position: buckets add up to the whole text, a shorter run's buckets are the long
run's (causality), and each bucket equals an independent computation from full maps."""

import itertools

import numpy as np
import pytest
import torch

from model_utils import AnalysisError, analyze
from model_utils.core.statistics import STATISTICS, bucket_bounds, distance_bins
from tests.support import SAMPLE_TEXT
from tests.support.models import reference_copy
from tests.support.reference import reference_row

LONG_TEXT = SAMPLE_TEXT * 4  # 992 bytes: 992 tokens of the tiny model's byte tokenizer
TEMPERATURES = [0.5, 1.0, 2.0]


def test_bucket_bounds_line_up_with_multiples_of_the_bucket_size():
    assert bucket_bounds(1, 2500, 1024) == [(1, 1024), (1024, 2048), (2048, 2500)]
    assert bucket_bounds(1024, 3072, 1024) == [(1024, 2048), (2048, 3072)]
    assert bucket_bounds(32, 100, None) == [(32, 100)]
    assert bucket_bounds(5, 6, 4) == [(5, 6)]


def counts(report) -> np.ndarray:
    return np.array([stop - start for start, stop in report.buckets], dtype=np.float64)


@pytest.mark.parametrize("mode", ["in-model", "isolated"])
def test_the_weighted_mean_of_the_buckets_is_the_whole_text(tiny, mode):
    whole = analyze(tiny, LONG_TEXT, temperatures=TEMPERATURES, mode=mode, window=16)
    split = analyze(tiny, LONG_TEXT, temperatures=TEMPERATURES, mode=mode, window=16, bucket_size=100)
    weights = counts(split)
    assert len(split.buckets) == 10 and split.buckets[0] == (16, 100) and split.buckets[-1] == (900, 992)
    for a, b in zip(whole.results, split.results, strict=True):
        for name in STATISTICS:
            values = np.log(b.bucket_heads[name]) if name == "top_ratio" else b.bucket_heads[name]
            mean = np.tensordot(weights / weights.sum(), values, axes=1)
            expected = np.log(a.heads[name]) if name == "top_ratio" else a.heads[name]
            np.testing.assert_allclose(mean, expected, rtol=1e-9, atol=1e-12, err_msg=name)
        positions = np.concatenate([np.arange(start, min(stop, len(b.position_nll)))
                                    for start, stop in split.buckets])
        nll_counts = np.array([len(range(s, min(e, len(b.position_nll)))) for s, e in split.buckets])
        assert np.average(b.bucket_nll, weights=nll_counts) == pytest.approx(b.position_nll[positions].mean())
        assert a.loss == pytest.approx(b.loss) and a.loss == pytest.approx(a.position_nll.mean())


def test_a_shorter_run_has_exactly_the_long_runs_buckets_below_its_length(tiny):
    """Causality: the query at position p sees keys 0..p whatever follows, so cutting the text changes nothing
    before the cut."""
    long = analyze(tiny, LONG_TEXT, temperatures=TEMPERATURES, window=8, bucket_size=128, q_start=1, max_tokens=992)
    short = analyze(tiny, LONG_TEXT, temperatures=TEMPERATURES, window=8, bucket_size=128, q_start=1, max_tokens=512)
    assert short.buckets == long.buckets[: len(short.buckets)] and short.buckets[-1] == (384, 512)
    shared = len(short.buckets)
    for a, b in zip(long.results, short.results, strict=True):
        for name in STATISTICS:
            np.testing.assert_allclose(b.bucket_heads[name], a.bucket_heads[name][:shared], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(b.distance_profile, a.distance_profile[:shared, :, : b.distance_profile.shape[2]],
                                   atol=1e-7)
        np.testing.assert_allclose(b.position_nll, a.position_nll[:511], atol=1e-6)
        np.testing.assert_allclose(b.bucket_nll[:-1], a.bucket_nll[: shared - 1], atol=1e-7)


def test_buckets_equal_an_independent_computation_from_full_maps(tiny):
    """Each bucket's head statistics, distance profile and NLL against plain loops over transformers' own eager
    maps (isolated mode at T = 1 and 2: the maps are the model's, re-softmaxed)."""
    window, size = 8, 64
    report = analyze(tiny, LONG_TEXT[:300], temperatures=[1.0, 2.0], mode="isolated", window=window, bucket_size=size)
    ids = torch.tensor(report.token_ids)[None]
    with torch.inference_mode():
        output = reference_copy(tiny, "eager")(ids, labels=ids, output_attentions=True)
    maps = [m[0].double().numpy() for m in output.attentions]  # per layer [H, n, n]
    logits = output.logits[0, :-1].double()
    nll = torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="none").numpy()
    edges = distance_bins(report.n_tokens)
    for result, temperature in zip(report.results, [1.0, 2.0], strict=True):
        for b, (start, stop) in enumerate(report.buckets):
            for layer, layer_maps in enumerate(maps):
                profile = np.zeros(len(edges) - 1)
                for head, head_map in enumerate(layer_maps):
                    scaled = np.exp(np.log(np.maximum(head_map, 1e-300)) / temperature) * (head_map > 0)
                    rows = scaled / scaled.sum(axis=-1, keepdims=True)
                    stats = [reference_row(rows[q], q, window) for q in range(start, stop)]
                    for name in ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass"):
                        expected = np.mean([row[name] for row in stats])
                        assert result.bucket_heads[name][b, layer, head] == pytest.approx(expected, abs=2e-5)
                    for q in range(start, stop):
                        by_distance = rows[q, : q + 1][::-1]  # [distance]
                        profile += [by_distance[low:high].sum() for low, high in itertools.pairwise(edges)]
                profile /= len(layer_maps) * (stop - start)
                np.testing.assert_allclose(result.distance_profile[b, layer], profile, atol=2e-5)
        for b, (start, stop) in enumerate(report.buckets):
            expected = nll[start : min(stop, len(nll))].mean()
            assert result.bucket_nll[b] == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"bucket_size": 0}, "bucket_size must be >= 1, got 0"),
    ({"bucket_size": -5}, "bucket_size must be >= 1"),
    ({"bucket_size": 2.5}, "bucket_size must be a whole number"),
    ({"q_start": 0}, "q_start must be >= 1"),
    ({"q_start": 5000}, "q_start must be below the number of tokens \\(600\\)"),
    ({"bucket_size": True}, "bucket_size must be a whole number"),
])
def test_bad_bucket_requests_are_refused_before_any_work(tiny, kwargs, message):
    with pytest.raises(AnalysisError, match=message):
        analyze(tiny, "x" * 600, temperatures=[1.0], **kwargs)


@pytest.mark.slow
def test_bundled_buckets_are_causal_and_add_up_on_a_long_run(bundled):
    """One long run past half the trained context on the real model: a 1,024-token run's buckets are the
    3,000-token run's, and the buckets' weighted mean is the whole text."""
    from model_utils.experiments.texts import builtin_text

    text = builtin_text("long")
    long = analyze(bundled, text, temperatures=[1.0, 2.0], window=32, bucket_size=512, q_start=1, max_tokens=3000)
    short = analyze(bundled, text, temperatures=[1.0, 2.0], window=32, bucket_size=512, q_start=1, max_tokens=1024)
    whole = analyze(bundled, text, temperatures=[1.0, 2.0], window=32, q_start=1, max_tokens=3000)
    for a, b, w in zip(long.results, short.results, whole.results, strict=True):
        for name in ("entropy", "sink_mass", "distant_mass"):
            np.testing.assert_allclose(b.bucket_heads[name], a.bucket_heads[name][:2], rtol=1e-5, atol=1e-6)
            mean = np.tensordot(counts(long) / counts(long).sum(), a.bucket_heads[name], axes=1)
            np.testing.assert_allclose(mean, w.heads[name], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(b.position_nll, a.position_nll[:1023], atol=1e-4)
