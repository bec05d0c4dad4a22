"""The Context length page's charts by position on a committed sweep with RoPE recipes and distance remappings: the
four lines it opens on (with the cut-context reference where the sweep has it), the main comparison, a recipe's
passes, the best temperature on a recipe, the untrained-distance mass of every pass, the distance profile, and each
recipe family's lines."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from components.present.sweep_data import CUT_LABEL
from components.present.text import plain
from components.serving import settings
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.verdict import Dominant
from model_utils.core.rope import Rope
from model_utils.core.statistics import STATISTIC_LABELS
from tests.support.apptest import array, assert_clean, chart, traces
from tests.support.context_page import (
    MAIN,
    OWN,
    by_label,
    every_line,
    line_names,
    open_page,
    trained_line_positions,
)


def test_the_loss_opens_on_t1_the_best_t_and_the_recipe_the_answer_names(recipe_env, runs, recipe_document):
    at = open_page()
    assert_clean(at)
    assert runs == {"sweeps": 0, "passes": 0}
    assert not at.toggle(key="context_every_line").value and "context_lines" not in [b.key for b in at.selectbox]
    lead = recipe_document.verdict.decomposition.lever(Dominant.RECIPE).view.label
    assert line_names(chart(at, "context_nll")) == ["T=1", "best constant T per bucket", lead, CUT_LABEL]
    assert recipe_document.cut_context is not None  # the sweep ran the cut-context pass: its line is drawn
    assert any(c.value.startswith(plain("Lines: T = 1 on the model's own positions (thick); the best constant"))
               and "cut to the trained length" in c.value for c in at.caption)


@pytest.fixture(scope="module")
def cut_document(tiny, recipe_document, tmp_path_factory) -> SweepDocument:
    """The recipe sweep with the cut-context reference pass of its text (experiments.cut_context on the tiny model:
    positions 1,024 .. 2,046, each read with at most the trained length of 1,024 before it, 256 scored a window)."""
    from model_utils.engine.analyze import tokenize
    from model_utils.experiments.cut_context import cut_context_pass
    from model_utils.experiments.texts import builtin_text

    ids, _ = tokenize(tiny, builtin_text("long"), recipe_document.n_tokens)
    assert len(ids) == recipe_document.n_tokens
    cut = cut_context_pass(tiny, ids, recipe_document.trained_length, 256, tmp_path_factory.mktemp("cut"))
    return replace(recipe_document, cut_context=cut)


def test_the_context_cut_to_the_trained_length_is_the_fourth_line_where_the_sweep_has_it(recipe_env, cut_document,
                                                                                         tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(cut_document.to_dict(), allow_nan=False))
    recipe_env.setattr(settings, "CONTEXT_SWEEP", path)
    at = open_page()
    assert_clean(at)
    lead = cut_document.verdict.decomposition.lever(Dominant.RECIPE).view.label
    figure = chart(at, "context_nll")
    assert line_names(figure) == ["T=1", "best constant T per bucket", lead, "T=1, context cut to the trained length"]
    cut = cut_document.cut_context
    drawn = array(traces(figure, "scatter")[3]["y"]).astype(float)
    for (start, stop), value in zip(cut_document.buckets, drawn, strict=True):
        if start < 1024:  # read whole: the cut changes nothing there, so no point is drawn
            assert np.isnan(value)
        else:  # the mean over the bucket's positions with a next token, as the passes' NLL
            positions = range(start, min(stop, cut_document.n_tokens - 1))
            assert value == pytest.approx(np.mean([cut.position_nll[p - 1024] for p in positions]), abs=1e-9)
    assert traces(figure, "scatter")[3]["line"]["dash"] == "dash"
    assert any(plain("cut to the trained length (grey, dashed)") in c.value for c in at.caption)
    # every line: the comparisons of passes, without the reference
    assert "T=1, context cut to the trained length" not in line_names(chart(every_line(at), "context_nll"))


def test_the_main_figure_draws_t1_the_best_t_and_each_recipe_at_t1(recipe_env, runs, recipe_document):
    at = every_line(open_page())
    assert_clean(at)
    assert runs == {"sweeps": 0, "passes": 0}
    assert at.selectbox(key="context_lines").value == MAIN
    assert at.selectbox(key="context_lines").options == [MAIN, OWN, "yarn (s=2)", "yarn-rope (s=2)", "linear (s=2)"]
    figure = chart(at, "context_nll")
    assert line_names(figure) == ["T=1", "best constant T per bucket", "yarn (s=2) + T=1", "yarn-rope (s=2) + T=1",
                                  "linear (s=2) + T=1"]
    lines = traces(figure, "scatter")
    results = by_label(recipe_document)
    for trace in lines[:1] + lines[2:]:
        np.testing.assert_allclose(array(trace["y"]).astype(float), results[trace["name"]].nll)
    best = recipe_document.best
    assert [entry.bucket for entry in best] == list(recipe_document.buckets)
    np.testing.assert_allclose(array(lines[1]["y"]).astype(float), [entry.nll for entry in best])
    assert lines[1]["line"]["dash"] == "dot" and lines[1]["line"]["color"] == "#000000"
    # the best T of each bucket is the lowest of the constant temperatures on the model's own positions
    # (two computations of one mean: the best's from the per-position NLL the document stores to 5 decimals, the
    # results' from the engine's float32 values, so they agree to that rounding, 5e-6, not to float64's 1e-7)
    own = np.array([results[f"T={t:g}"].nll for t in (0.8, 1, 1.25)])
    np.testing.assert_allclose(array(lines[1]["y"]).astype(float), own.min(axis=0), rtol=0, atol=5e-6)
    # one colour per recipe, none of them a temperature's
    colours = [trace["line"]["color"] for trace in lines[2:]]
    assert len(set(colours)) == 3 and not set(colours) & {trace["line"]["color"] for trace in lines[:2]}
    assert trained_line_positions(figure) == [1024]
    assert any("chosen on the very positions it is scored on" in c.value for c in at.caption)


def test_the_lines_choice_draws_a_recipes_passes_next_to_the_plain_t1_and_stays_in_the_link(recipe_env,
                                                                                               recipe_document):
    at = every_line(open_page())
    at.selectbox(key="context_lines").set_value("yarn-rope (s=2)").run()
    assert_clean(at)
    names = line_names(chart(at, "context_nll"))
    assert names == ["T=1", "yarn-rope (s=2) + T=0.9", "yarn-rope (s=2) + T=1", "yarn-rope (s=2) + T=1.1"]
    styles = {trace["name"]: trace["line"] for trace in traces(chart(at, "context_nll"), "scatter")}
    assert styles["yarn-rope (s=2) + T=0.9"]["dash"] == "dot" and styles["yarn-rope (s=2) + T=1.1"]["dash"] == "dash"
    assert styles["yarn-rope (s=2) + T=1"]["dash"] == "solid"
    assert at.query_params["lines"] == "yarn-rope (s=2)"
    at.selectbox(key="context_lines").set_value(OWN).run()
    assert line_names(chart(at, "context_nll")) == [r.label for r in recipe_document.results if r.rope is None]

    at.toggle(key="context_every_line").set_value(False).run()  # back to the four lines: the link forgets the choice
    assert "lines" not in at.query_params

    linked = open_page({"lines": "linear (s=2)", "best_on": "nonsense"})
    assert_clean(linked)
    assert linked.toggle(key="context_every_line").value  # a link with a choice of lines opens on it
    assert line_names(chart(linked, "context_nll")) == ["T=1", "linear (s=2) + T=1"]
    assert linked.selectbox(key="context_best_on").value == OWN  # a mangled choice falls back to the default


def test_the_best_temperature_can_be_read_on_each_recipe_against_its_own_t1(recipe_env, recipe_document):
    at = open_page()
    assert at.selectbox(key="context_best_on").options == [OWN, "yarn-rope (s=2)"]  # the recipes of best_by_rope
    plain_best = traces(chart(at, "context_best"), "scatter")[0]
    np.testing.assert_array_equal(array(plain_best["y"]), [e.temperature for e in recipe_document.best])
    assert list(chart(at, "context_best")["layout"]["yaxis"]["tickvals"]) == [0.8, 1, 1.25]

    at.selectbox(key="context_best_on").set_value("yarn-rope (s=2)").run()
    assert_clean(at)
    figure = chart(at, "context_best")
    entries = recipe_document.best_by_rope[Rope("yarn-rope", 2.0)]
    points = traces(figure, "scatter")[0]
    np.testing.assert_array_equal(array(points["y"]), [entry.temperature for entry in entries])
    assert list(figure["layout"]["yaxis"]["tickvals"]) == [0.9, 1, 1.1]  # the temperatures run on that recipe
    assert figure["layout"]["title"]["text"] == "This text, on yarn-rope (s=2)"
    assert any("against yarn\\-rope \\(s=2\\) at T = 1" in c.value for c in at.caption)
    assert at.query_params["best_on"] == "yarn-rope (s=2)"


def test_the_untrained_distance_mass_is_shown_for_every_pass_and_is_a_statistic(recipe_env, recipe_document):
    at = open_page()
    assert STATISTIC_LABELS["untrained_mass"] in at.selectbox(key="context_statistic").options
    heatmap = chart(at, "context_untrained")
    (cells,) = traces(heatmap, "heatmap")
    assert list(cells["y"]) == [result.label for result in recipe_document.results]  # every pass, in order
    expected = np.array([result.heads["untrained_mass"].mean(axis=(1, 2)) for result in recipe_document.results])
    np.testing.assert_allclose(array(cells["z"]).astype(float), expected, rtol=1e-6)
    inside = [index for index, (_, stop) in enumerate(recipe_document.buckets) if stop <= 1024]
    assert np.all(expected[:, inside] == 0) and np.all(expected[:, len(inside):] > 0)  # 0 by definition inside
    assert trained_line_positions(heatmap) == [1024]
    assert any("at least 1,024 tokens back" in c.value for c in at.caption)

    at.selectbox(key="context_statistic").set_value("untrained_mass").run()
    at.selectbox(key="context_layer").set_value(2).run()
    at.selectbox(key="context_statistic_lines").set_value("yarn-rope (s=2)").run()
    assert_clean(at)
    lines = traces(chart(at, "context_statistic_chart"), "scatter")
    assert [trace["name"] for trace in lines] == ["T=1", "yarn-rope (s=2) + T=0.9", "yarn-rope (s=2) + T=1",
                                                  "yarn-rope (s=2) + T=1.1"]
    results = by_label(recipe_document)
    for trace in lines:
        layer_two = results[trace["name"]].heads["untrained_mass"][:, 2].mean(axis=1)
        np.testing.assert_allclose(array(trace["y"]).astype(float), layer_two, rtol=1e-6)
    (cells,) = traces(chart(at, "context_untrained"), "heatmap")  # the heatmap follows the layer too
    np.testing.assert_allclose(array(cells["z"]).astype(float)[0],
                               recipe_document.results[0].heads["untrained_mass"][:, 2].mean(axis=1),
                               rtol=1e-6)


def test_the_distance_heatmap_compares_t1_with_any_pass_a_recipe_first(recipe_env, recipe_document):
    at = open_page()
    compare = at.selectbox(key="context_compare")
    assert compare.value == "yarn (s=2) + T=1"
    assert compare.options == [r.label for r in recipe_document.results if r.label != "T=1"]
    compare.set_value("yarn-rope (s=2) + T=1.1").run()
    assert_clean(at)
    _, right = traces(chart(at, "context_distance"), "heatmap")
    np.testing.assert_allclose(array(right["z"]).astype(float),
                               by_label(recipe_document)["yarn-rope (s=2) + T=1.1"].distance_profile.T)


def test_a_sweep_with_remappings_offers_each_family_and_marks_the_remapped_rows(tiny_env, tiny_remap_sweep_file,
                                                                                 remap_document):
    tiny_env.setattr(settings, "CONTEXT_SWEEP", tiny_remap_sweep_file)
    at = every_line(open_page())
    assert_clean(at)
    options = at.selectbox(key="context_lines").options
    assert options[:4] == [MAIN, "T = 1 and each frequency change (interpolation) at T = 1",
                           "T = 1 and each distance remapping at T = 1", "T = 1 and each sink + window at T = 1"]
    at.selectbox(key="context_lines").set_value(options[2]).run()
    assert line_names(chart(at, "context_nll")) == ["T=1", "self-extend (G=2, W=256) + T=1"]
    rows = list(traces(chart(at, "context_untrained"), "heatmap")[0]["y"])
    assert "self-extend (G=2, W=256) + T=1 (remapped distances)" in rows and "T=1" in rows
    assert any(plain("marked (remapped distances)") in c.value for c in at.caption)
