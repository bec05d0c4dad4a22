"""Reading a sweep document or a corpus summary into what the figures draw and the CSV holds (present/sweep_data.py),
and the context-length captions that follow the numbers."""

from __future__ import annotations

import json

import numpy as np

from components.present import captions, sweep_data
from components.widgets.downloads import rows_csv
from model_utils.core.statistics import STATISTICS
from model_utils.verdicts.context import context_verdict


def test_statistics_by_bucket_are_means_of_heads_and_geometric_for_the_ratio(document):
    result = document["results"][1]
    heads = {name: np.asarray(result["heads"][name]) for name in STATISTICS}  # [bucket, layer, head]
    np.testing.assert_allclose(sweep_data.statistic_by_bucket(result, "sink_mass"),
                               heads["sink_mass"].mean(axis=(1, 2)))
    np.testing.assert_allclose(sweep_data.statistic_by_bucket(result, "entropy", layer=2),
                               heads["entropy"][:, 2].mean(axis=1))
    ratio = sweep_data.statistic_by_bucket(result, "top_ratio")
    np.testing.assert_allclose(ratio, np.exp(np.log(heads["top_ratio"]).mean(axis=(1, 2))))
    assert np.all(ratio <= heads["top_ratio"].mean(axis=(1, 2)))  # a geometric mean never exceeds the mean
    masses = sum(sweep_data.statistic_by_bucket(result, part) for part in ("sink_mass", "recent_mass",
                                                                             "distant_mass"))
    np.testing.assert_allclose(masses, 1.0, atol=1e-4)  # they add up to 1 (rounded to 5 decimals in the file)


def test_distance_profile_by_bucket_is_the_layer_mean_or_one_layer(document):
    result = document["results"][0]
    layers = np.asarray(result["distance_profile_layers"])
    np.testing.assert_allclose(sweep_data.distance_by_bucket(result), layers.mean(axis=1), atol=2e-6)
    np.testing.assert_array_equal(sweep_data.distance_by_bucket(result, 1), layers[:, 1])


def test_csv_rows_are_one_per_bucket_and_result(document):
    rows = sweep_data.sweep_rows(document)
    assert len(rows) == len(document["buckets"]) * len(document["results"])
    first = rows[len(document["results"]) + 1]  # bucket 1, the second result (T = 1)
    assert (first["bucket_start"], first["bucket_stop"], first["label"]) == (256, 512, "T=1")
    assert first["nll"] == document["results"][1]["nll"][1]
    text = rows_csv(rows)
    header = text.splitlines()[0].split(",")
    assert header == ["bucket_start", "bucket_stop", "label", "temperature", "schedule", "nll", *STATISTICS]
    assert len(text.strip().splitlines()) == len(rows) + 1


def test_identical_results_are_found_from_the_numbers(document):
    # anchored at the same length, SSMax (s = 1 / ln L) is exactly log-n with base L: identical passes
    assert sweep_data.identical_results(document["results"]) == [["ssmax (train_length=1024)", "logn (base=1024)"]]
    assert captions.identical_lines([["a", "b"], ["c", "d", "e"]]) == (
        "Identical numbers, so one line hides the other: a and b; c, d and e.")
    assert captions.identical_lines([]) is None


def test_default_comparison_and_the_trained_length_of_a_summary(document, summary_file):
    assert sweep_data.default_comparison(document) == "T=1.25"  # the best T of the last bucket
    summary = json.loads(summary_file.read_text())
    assert summary["settings"]["trained_length"] is None
    assert sweep_data.corpus_trained_length(summary, [None, document]) == 1024
    assert sweep_data.corpus_trained_length(summary) is None
    summary["settings"]["trained_length"] = 512
    assert sweep_data.corpus_trained_length(summary, [document]) == 512


def test_a_large_corpus_is_counted_not_listed(summary_file):
    summary = json.loads(summary_file.read_text())
    summary["corpus"]["list"] = [{"name": f"doc {i}", "sha256": "", "n_tokens": 2048} for i in range(20)]
    caption = captions.corpus_caption(summary, 1024)
    assert "(doc 0, doc 1, doc 2, doc 3, doc 4, doc 5, doc 6, doc 7 and 12 more)" in caption


def test_budget_and_no_verdict_wording_follow_the_numbers(document):
    assert captions.sweep_over_budget(2048, 3, 5, 16384) is None  # exactly the budget
    refusal = captions.sweep_over_budget(2049, 3, 5, 16384)
    assert "2,049 tokens x 8 passes (3 temperatures + 5 schedules) = 16,392" in refusal
    assert refusal.endswith("Ask for at most 2,048 tokens, or fewer temperatures or schedules.")
    assert "1 temperature + 0 schedules" in captions.sweep_over_budget(20000, 1, 0, 16384)
    # the bundled model on the default budget: 4 passes fit 4,096 tokens, short of its 8,192
    assert captions.sweep_over_budget(16384, 4, 0, 16384, trained_length=8192).endswith(
        "Ask for at most 4,096 tokens, or fewer temperatures or schedules. That is not past the model's trained "
        "length of 8,192: with 4 passes this server cannot run past it.")
    assert "cannot run past" not in captions.sweep_over_budget(4096, 8, 0, 16384, trained_length=1024)
    short = document | {"n_tokens": 1000, "buckets": [[1, 256], [256, 512], [512, 768], [768, 1000]]}
    assert "ends at 1,000 tokens, within the trained length of 1,024" in captions.no_context_verdict(short)
    wide = document | {"bucket_size": 2048, "buckets": [[1, 2048]]}
    assert "no bucket of 2,048 positions lies wholly past the trained length" in captions.no_context_verdict(wide)
    assert sweep_data.past_bucket_without_loss(document) is None


def test_the_cached_form_with_arrays_reads_as_the_json_does(document):
    """The page caches the committed sweep with its big tables as arrays: verdict, rows and groups are the same."""
    import copy

    arrays = sweep_data.with_arrays(copy.deepcopy(document))
    assert isinstance(arrays["results"][0]["heads"]["entropy"], np.ndarray)
    assert arrays["results"][0]["distance_profile_layers"].shape == (8, 3, 12)  # [bucket, layer, distance bin]
    assert context_verdict(arrays).sentences() == context_verdict(document).sentences()
    assert sweep_data.sweep_rows(arrays) == sweep_data.sweep_rows(document)
    for key in ("nll", "heads"):
        assert sweep_data.identical_results(arrays["results"], key) == sweep_data.identical_results(
            document["results"], key) == [["ssmax (train_length=1024)", "logn (base=1024)"]]
    summary = {"results": [{"label": "T=1", "nll": [2.0], "nll_interval": [[1.9, 2.1]]}]}
    assert sweep_data.with_arrays(copy.deepcopy(summary)) == summary  # a corpus summary has no tables to convert
