"""Reading a sweep document (its record) or a corpus summary into what the figures draw and the CSV holds
(present/sweep_data.py), and the context-length captions that follow the numbers."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np

from components.present import captions, sweep_data
from components.widgets.downloads import rows_csv
from model_utils.core.records.base import DocumentEntry
from model_utils.core.records.tune import TuneSummary
from model_utils.core.rope import Rope
from model_utils.core.statistics import STATISTICS
from model_utils.core.views import View
from model_utils.verdicts import words


def test_statistics_by_bucket_are_means_of_heads_and_geometric_for_the_ratio(document):
    result = document.results[1]
    heads = {name: np.asarray(result.heads[name]) for name in STATISTICS}  # [bucket, layer, head]
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
    result = document.results[0]
    layers = np.asarray(result.distance_profile_layers)
    assert layers.shape == (8, 3, 12)  # [bucket, layer, distance bin]
    np.testing.assert_allclose(sweep_data.distance_by_bucket(result), layers.mean(axis=1), atol=2e-6)
    np.testing.assert_array_equal(sweep_data.distance_by_bucket(result, 1), layers[:, 1])


def test_csv_rows_are_one_per_bucket_and_result(document):
    rows = sweep_data.sweep_rows(document)
    assert len(rows) == len(document.buckets) * len(document.results)
    first = rows[len(document.results) + 1]  # bucket 1, the second result (T = 1)
    assert (first["bucket_start"], first["bucket_stop"], first["label"]) == (256, 512, "T=1")
    assert first["nll"] == document.results[1].nll[1]
    text = rows_csv(rows)
    header = text.splitlines()[0].split(",")
    assert header == ["bucket_start", "bucket_stop", "label", "temperature", "schedule", "rope", "nll", *STATISTICS]
    assert len(text.strip().splitlines()) == len(rows) + 1


def test_identical_results_are_found_from_the_numbers(document):
    # anchored at the same length, SSMax (s = 1 / ln L) is exactly log-n with base L: identical passes
    for numbers in ("nll", "heads"):
        assert sweep_data.identical_results(document.results, numbers) == [["ssmax (train_length=1024)",
                                                                           "logn (base=1024)"]]
    assert captions.identical_lines([["a", "b"], ["c", "d", "e"]]) == (
        "Identical numbers, so one line hides the other: a and b; c, d and e.")
    assert captions.identical_lines([]) is None


def test_default_comparison_and_the_trained_length_of_a_summary(document, summary_file):
    assert sweep_data.default_comparison(document) == "T=1.25"  # the best T of the last bucket
    summary = TuneSummary.from_dict(json.loads(summary_file.read_text()))
    assert summary.settings.trained_length is None
    assert sweep_data.corpus_trained_length(summary, [None, document]) == 1024
    assert sweep_data.corpus_trained_length(summary) is None
    summary = replace(summary, settings=replace(summary.settings, trained_length=512))
    assert sweep_data.corpus_trained_length(summary, [document]) == 512


def test_a_large_corpus_is_counted_not_listed(summary_file):
    summary = TuneSummary.from_dict(json.loads(summary_file.read_text()))
    summary = replace(summary, corpus=replace(summary.corpus, listed=tuple(
        DocumentEntry(name=f"doc {i}", sha256="", n_tokens=2048) for i in range(20))))
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
    short = replace(document, n_tokens=1000, buckets=((1, 256), (256, 512), (512, 768), (768, 1000)))
    assert "ends at 1,000 tokens, within the trained length of 1,024" in words.no_context_verdict(short)
    wide = replace(document, bucket_size=2048, buckets=((1, 2048),))
    assert "no bucket of 2,048 positions lies wholly past the trained length" in words.no_context_verdict(wide)
    assert sweep_data.past_bucket_without_loss(document) is None


def test_a_corpus_summary_reads_with_the_attributes_of_a_sweep(summary_file):
    """The summary's record has the results, buckets, best and bootstrap the shared functions read."""
    data = json.loads(summary_file.read_text())
    summary = TuneSummary.from_dict(data)
    assert [result.view.to_dict() for result in summary.results] == [result["view"] for result in data["results"]]
    assert all(result.recipe is None for result in summary.results)  # the tiny corpus ran no recipe
    assert sweep_data.reference_result(summary).label == "T=1"
    assert sweep_data.constant_temperatures(summary) == [0.8, 1.0, 1.25]
    np.testing.assert_allclose(sweep_data.best_nll_by_bucket(summary), [entry["nll"] for entry in data["best"]])
    low, high = sweep_data.summary_intervals(summary.results[1])
    assert np.all(low <= np.asarray(data["results"][1]["nll"])) and np.all(np.asarray(
        data["results"][1]["nll"]) <= high)
    said = captions.best_caption(summary)
    assert "the bars are its range of the 2 documents (too few documents" in said and "blocks of" not in said


# --- RoPE recipes ----------------------------------------------------------------------------------------------


def test_a_results_recipe_is_a_rope_and_its_label_the_ropes(recipe_document):
    ropes = [result.rope for result in recipe_document.results]
    assert ropes[:8] == [None] * 8  # three temperatures and five schedules on the model's own positions
    assert ropes[8:] == [Rope("yarn", 2.0)] + [Rope("yarn-rope", 2.0)] * 3 + [Rope("linear", 2.0)]
    assert [result.recipe for result in recipe_document.results] == [None if rope is None else rope.label
                                                                    for rope in ropes]
    assert sweep_data.recipes(recipe_document) == ["yarn (s=2)", "yarn-rope (s=2)", "linear (s=2)"]
    assert sweep_data.constant_temperatures(recipe_document) == [0.8, 1.0, 1.25]
    assert sweep_data.constant_temperatures(recipe_document, "yarn-rope (s=2)") == [0.9, 1.0, 1.1]
    # T = 1 on the model's own positions is the reference, not a recipe's T = 1
    assert sweep_data.reference_result(recipe_document).label == recipe_document.reference().label == "T=1"


def test_line_groups_put_the_main_comparison_first_then_own_positions_then_each_recipe(recipe_document, document):
    labels = [result.label for result in recipe_document.results]
    groups = {name: [labels[i] for i in indices] for name, indices in sweep_data.line_groups(recipe_document).items()}
    assert list(groups) == [sweep_data.MAIN_LINES, sweep_data.OWN_POSITIONS, "yarn (s=2)", "yarn-rope (s=2)",
                            "linear (s=2)"]
    assert groups[sweep_data.MAIN_LINES] == ["T=1", "yarn (s=2) + T=1", "yarn-rope (s=2) + T=1", "linear (s=2) + T=1"]
    assert groups[sweep_data.OWN_POSITIONS] == labels[:8]
    assert groups["yarn-rope (s=2)"] == ["T=1", "yarn-rope (s=2) + T=0.9", "yarn-rope (s=2) + T=1",
                                        "yarn-rope (s=2) + T=1.1"]
    # without recipes there is only the model's own positions
    assert list(sweep_data.line_groups(document)) == [sweep_data.OWN_POSITIONS]
    # a recipe run without T = 1 shows its first pass in the main comparison
    linear = replace(recipe_document.results[-1], view=View(1.1, Rope("linear", 4.0)))
    no_one = replace(recipe_document, results=(recipe_document.results[1], linear))
    assert sweep_data.line_groups(no_one)[sweep_data.MAIN_LINES] == [0, 1]


def test_the_best_line_is_each_buckets_best_nll_on_its_positions(recipe_document):
    best = sweep_data.best_nll_by_bucket(recipe_document)
    np.testing.assert_allclose(best, [entry.nll for entry in recipe_document.best])
    on_recipe = sweep_data.best_nll_by_bucket(recipe_document, "yarn-rope (s=2)")
    np.testing.assert_allclose(on_recipe, [e.nll for e in recipe_document.best_by_rope[Rope("yarn-rope", 2.0)]])
    assert sweep_data.best_recipes(recipe_document) == ["yarn-rope (s=2)"]
    assert sweep_data.best_entries(recipe_document, "linear (s=2)") == ()  # one temperature only: no best
    partial = replace(recipe_document, best=recipe_document.best[1:])
    assert np.isnan(sweep_data.best_nll_by_bucket(partial)[0])  # a bucket without an entry draws no point


def test_the_distance_profile_opens_on_the_first_recipe(recipe_document):
    assert sweep_data.default_comparison(recipe_document) == "yarn (s=2) + T=1"


def test_csv_rows_name_each_passes_recipe(recipe_document):
    rows = sweep_data.sweep_rows(recipe_document)
    first_bucket = rows[: len(recipe_document.results)]
    assert [row["rope"] for row in first_bucket] == [None] * 8 + ["yarn (s=2)"] + ["yarn-rope (s=2)"] * 3 + [
        "linear (s=2)"]
    assert "untrained_mass" in first_bucket[0]


def test_an_older_sweep_without_a_statistic_offers_only_what_it_holds(document):
    older = replace(document, results=tuple(
        replace(result, heads={name: values for name, values in result.heads.items() if name != "untrained_mass"})
        for result in document.results))
    assert sweep_data.statistics_of(older) == [name for name in STATISTICS if name != "untrained_mass"]
    assert "untrained_mass" not in sweep_data.sweep_rows(older)[0]
    assert sweep_data.statistics_of(document) == list(STATISTICS)


def test_the_recipe_captions_follow_the_document(recipe_document):
    said = captions.sweep_caption(recipe_document)
    assert "3 constant temperatures (T=0.8, T=1, T=1.25) and 5 schedules (" in said
    assert ("on the model's own positions, and 5 passes on RoPE recipes (yarn (s=2) + T=1, yarn-rope (s=2) + T=0.9, "
            "yarn-rope (s=2) + T=1, yarn-rope (s=2) + T=1.1, linear (s=2) + T=1), each its own in-model pass") in said
    best = captions.best_caption(recipe_document, "yarn-rope (s=2)")
    assert best.endswith("what it saves is against yarn-rope (s=2) at T = 1, not against the model's own positions.")
    assert "RoPE recipe" not in captions.best_caption(recipe_document)
    assert "(moving-block bootstrap over the positions of each bucket, blocks of 64 positions)" in best
    groups = list(sweep_data.line_groups(recipe_document))
    assert "the best constant temperature of each bucket (black, dotted)" in captions.lines_caption(groups[0], groups)
    assert "every pass on the RoPE recipe yarn-rope (s=2)" in captions.lines_caption("yarn-rope (s=2)", groups)
    assert "other choices above" in captions.lines_caption(sweep_data.OWN_POSITIONS, groups)
    assert "other choices" not in captions.lines_caption(sweep_data.OWN_POSITIONS, [sweep_data.OWN_POSITIONS])
    assert "keys at least 8,192 tokens back" in captions.untrained_caption(None, 8192)
    assert "every layer" not in captions.untrained_caption(3, 8192)
    assert "mean over the heads of layer 3 and" in captions.untrained_caption(3, 8192)


def test_a_recipe_counts_in_the_budget_refusal():
    assert captions.sweep_over_budget(2048, 2, 0, 8192, recipe="yarn (s=2)") is None  # 2 + 2 passes x 2,048
    refusal = captions.sweep_over_budget(2049, 2, 1, 8192, recipe="yarn (s=2)")
    assert "2,049 tokens x 5 passes (2 temperatures + 1 schedule + 2 on yarn (s=2)) = 10,245" in refusal
    assert refusal.endswith("Ask for at most 1,638 tokens, or fewer temperatures or schedules, or no recipe.")


def test_the_recipes_table_is_short_and_its_details_say_what_each_changes_and_what_is_applied():
    from model_utils.core.rope import RECIPES

    rows = captions.recipe_rows()
    assert [(row["recipe"], row["what it is"]) for row in rows] == [(kind, info.name) for kind, info in RECIPES.items()]
    assert [row["run it"] for row in rows] == [f"--rope {kind}:S" for kind in RECIPES]
    assert max(len(cell) for row in rows for cell in row.values()) <= 60  # a few words a cell
    details = dict(captions.recipe_details())
    for kind, info in RECIPES.items():
        said = details[f"{kind}: {info.name}"]
        assert said.startswith(info.formula) and info.source in said and f"--rope {kind}:S" in said
    assert "is the yarn schedule above" in details["yarn: YaRN"]
    assert sum("schedule above" in said for said in details.values()) == 1  # only YaRN has a temperature of its own


def test_a_remapped_pass_shows_its_untrained_mass_on_the_distances_it_gives(remap_document):
    """A distance remapping keeps its far keys far back in the text: its heatmap row is its effective mass (on the
    remapped distances), marked so; every other row is the untrained mass, where the two are equal."""
    values, labels = sweep_data.untrained_rows(remap_document)
    results = remap_document.results
    for row, label, result in zip(values, labels, results, strict=True):
        if result.rope is not None and result.rope.remaps:
            assert label == f"{result.label} (remapped distances)"
            np.testing.assert_allclose(row, result.heads["effective_untrained_mass"].mean(axis=(1, 2)))
        else:
            assert label == result.label
            np.testing.assert_allclose(row, result.heads["untrained_mass"].mean(axis=(1, 2)))
    grouped = next(i for i, result in enumerate(results) if result.label == "self-extend (G=2, W=256) + T=1")
    raw = sweep_data.statistic_by_bucket(results[grouped], "untrained_mass")
    assert raw[-1] > 0.01 and values[grouped][-1] < raw[-1]  # far back in the text, nearer once remapped
    assert sweep_data.statistics_of(remap_document)[-1] == "effective_untrained_mass"
    assert "effective_untrained_mass" in sweep_data.sweep_rows(remap_document)[0]
    said = captions.untrained_caption(None, 1024, remapped=True)
    assert "marked (remapped distances)" in said and "(remapped" not in captions.untrained_caption(None, 1024)


def test_each_recipe_family_is_a_group_of_lines_where_more_than_one_ran(remap_document, recipe_document):
    groups = sweep_data.line_groups(remap_document)
    labels = [result.label for result in remap_document.results]
    frequency, remap, sinks = (sweep_data.family_group(family) for family in ("frequency", "remap", "sink_window"))
    assert list(groups)[:4] == [sweep_data.MAIN_LINES, frequency, remap, sinks]
    assert [labels[i] for i in groups[remap]] == ["T=1", "self-extend (G=2, W=256) + T=1"]
    assert [labels[i] for i in groups[sinks]] == ["T=1", "sink-window (S=4, W=512) + T=1"]
    assert [labels[i] for i in groups[frequency]] == ["T=1", "yarn-rope (s=2) + T=1"]
    assert "each distance remapping at T = 1" in captions.lines_caption(remap, list(groups))
    assert not any(name.startswith("T = 1 and each") for name in sweep_data.line_groups(recipe_document))
