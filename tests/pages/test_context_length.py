"""The Context length page opening on the committed results: without running the model, on the answer (each
verdict's sentence and decomposition chart, then its headline numbers), the charts' defaults kept in the link; the
decomposition table; no page passes a long tuple. The form's runs: test_context_length_runs.py; the charts of a
sweep with recipes: test_context_length_recipes.py; the corpus, the fits and other models:
test_context_length_corpus.py."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from components.pages import PAGES
from components.present.sweep_data import CUT_LABEL
from components.present.text import plain
from components.serving import settings
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.verdict import Dominant
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.verdicts import words
from tests.support.apptest import array, assert_clean, chart, traces
from tests.support.context_page import (
    COMMITTED,
    POSITION_CHARTS,
    answer_line,
    bars,
    every_line,
    full_answer_line,
    open_page,
    opening,
    page_order,
    trained_line_positions,
    verdict_lines,
)
from tests.verdicts import synthetic


def test_the_page_opens_on_the_committed_sweep_without_running_the_model(runs, document):
    at = open_page()
    assert_clean(at)
    assert runs == {"sweeps": 0, "passes": 0}, "opening the page must not run the model"
    assert [title.value for title in at.title] == ["Context length"]
    # every chart is there and every position chart draws the trained length
    for key in POSITION_CHARTS:
        assert trained_line_positions(chart(at, key)) == [1024] * (2 if key == "context_distance" else 1), key
    assert "context_view" not in [radio.key for radio in at.radio]  # nothing to choose between before a run
    # the verdict is the document's own, in verdicts/words's words (escaped for markdown)
    assert verdict_lines(at) == [plain(sentence) for sentence in words.sentences(document.verdict)]
    # the loss by position opens on T = 1, the best T per bucket and the cut-context reference (no recipe ran)
    assert document.cut_context is not None
    assert [trace["name"] for trace in traces(chart(at, "context_nll"), "scatter")] == [
        "T=1", "best constant T per bucket", CUT_LABEL]
    # the charts draw the document's numbers: every line, once asked for
    nll = traces(chart(every_line(at), "context_nll"), "scatter")
    assert [trace["name"] for trace in nll] == [result.label for result in document.results]
    for trace, result in zip(nll, document.results, strict=True):
        np.testing.assert_allclose(array(trace["y"]).astype(float), result.nll)
    best = traces(chart(at, "context_best"), "scatter")[0]
    np.testing.assert_array_equal(array(best["y"]), [entry.temperature for entry in document.best])
    caption = next(c.value for c in at.caption if c.value.startswith("tiny\\-random on 2,048 tokens"))
    assert "trained length 1,024" in caption and "8 buckets" in caption

    at.selectbox(key="context_layer").set_value(2).run()  # a re-draw never runs the model either
    at.selectbox(key="context_statistic").set_value("sink_mass").run()
    assert_clean(at)
    assert runs == {"sweeps": 0, "passes": 0}


def test_the_view_is_in_the_link(tiny_env, document):
    at = open_page({"layer": "1", "statistic": "distant_mass", "compare": "T=0.8"})
    assert_clean(at)
    assert at.selectbox(key="context_layer").value == 1
    assert at.selectbox(key="context_statistic").value == "distant_mass"
    assert at.selectbox(key="context_compare").value == "T=0.8"
    drawn = [array(trace["y"]).astype(float) for trace in traces(chart(at, "context_statistic_chart"), "scatter")]
    for series, result in zip(drawn, document.results, strict=True):
        expected = result.heads["distant_mass"][:, 1].mean(axis=1)  # layer 1, mean of its heads
        np.testing.assert_allclose(series, expected, rtol=1e-6)
    titles = [a["text"] for a in chart(at, "context_distance")["layout"]["annotations"]]
    assert titles[:2] == ["T=1", "T=0.8"]

    at.selectbox(key="context_layer").set_value("mean of layers").run()
    at.selectbox(key="context_compare").set_value("logn (base=1024)").run()
    assert_clean(at)
    assert "layer" not in at.query_params  # the default view leaves the link
    assert at.query_params["compare"] == "logn (base=1024)"
    assert at.query_params["statistic"] == "distant_mass"


def test_a_mangled_link_falls_back_to_the_default_view(tiny_env):
    at = open_page({"layer": "99", "statistic": "nonsense", "compare": "T=7"})
    assert_clean(at)
    assert at.selectbox(key="context_layer").value == "mean of layers"
    assert at.selectbox(key="context_statistic").value == "normalized_entropy"
    assert at.selectbox(key="context_compare").value == "T=1.25"  # the best T of the last bucket


def test_without_a_committed_sweep_the_page_says_where_it_would_be(tiny_env, tmp_path, runs):
    tiny_env.setattr(settings, "CONTEXT_SWEEP", tmp_path / "missing.json")
    at = open_page()
    assert_clean(at)
    assert any("There is no committed sweep at" in info.value and "make sweep" in info.value for info in at.info)
    assert not at.get("plotly_chart") and runs["passes"] == 0


@pytest.mark.skipif(not COMMITTED.is_file(), reason=f"{COMMITTED} is not committed yet (make sweep writes it)")
def test_the_committed_bundled_sweep_loads_and_renders(tiny_env, runs):
    tiny_env.setattr(settings, "CONTEXT_SWEEP", COMMITTED)
    document = SweepDocument.from_dict(json.loads(COMMITTED.read_text()))
    at = open_page()
    assert_clean(at)
    assert runs == {"sweeps": 0, "passes": 0}
    for key in POSITION_CHARTS:
        assert set(trained_line_positions(chart(at, key))) == {document.trained_length}, key
    if document.verdict is not None:
        assert verdict_lines(at) == [plain(sentence) for sentence in words.sentences(document.verdict)]
    recipes = list(dict.fromkeys(label.split(" + ")[0] for label in (r.label for r in document.results)
                                 if " + " in label))
    if recipes:  # four lines: T = 1, the best T per bucket, the verdict's recipe and the cut context where it ran
        lines = [trace["name"] for trace in traces(chart(at, "context_nll"), "scatter")]
        lead = document.verdict.decomposition.lever(Dominant.RECIPE).view.label
        cut = ["T=1, context cut to the trained length"] if document.cut_context is not None else []
        assert lines == ["T=1", "best constant T per bucket", lead, *cut]
        # every line: T = 1, the best T per bucket and each recipe at T = 1
        lines = [trace["name"] for trace in traces(chart(every_line(at), "context_nll"), "scatter")]
        assert lines == ["T=1", "best constant T per bucket", *(f"{recipe} + T=1" for recipe in recipes)]


def test_the_page_opens_with_the_answer_and_the_loss_chart_before_the_words(recipe_env):
    """Title, the answer (one sentence) and its chart, the headline numbers, then the loss by position; everything
    else folded in expanders under it, the form last."""
    at = open_page()
    order = page_order(at.main)

    def where(prefix: str) -> int:
        return next(index for index, entry in enumerate(order) if entry.startswith(prefix))

    chart_at = where("plotly_chart:context_nll")
    before = [entry for entry in order[:chart_at] if entry.startswith("markdown:")]
    assert len(before) == 1 and before[0].startswith("markdown:**One text, the committed"), before  # no more words
    expanders = [entry for entry in order if entry.startswith("expander:")]
    assert where("expander:") > chart_at and expanders[-1] == "expander:Run the sweep on your own text and model"
    assert chart_at < where("expander:What this sweep measured, and how") < where("markdown:**What this sweep") \
        < where("markdown:How it was measured")


def test_the_page_opens_on_the_answer_sentence_then_its_decomposition_chart(recipe_env, recipe_document):
    """Right after the title: the verdict's answer in one sentence, then the decomposition chart of the same
    verdict, then the headline numbers, then the loss by position; the answer in full is folded."""
    at = open_page()
    assert_clean(at)
    order = opening(at)
    assert order[0] == "title" and order[1].startswith("markdown:**One text, the committed"), order[:2]
    assert order[2] == "plotly_chart:context_decomposition"
    assert order.index("plotly_chart:context_decomposition") < min(
        i for i, entry in enumerate(order) if entry.startswith("metric:")) < order.index("plotly_chart:context_nll")
    assert order[-1] == "expander:Run the sweep on your own text and model"  # folded, at the foot
    verdict = recipe_document.verdict
    title = "One text, the committed sweep (cross-fit on one text)"
    assert answer_line(at, title) == plain(words.answer_point(verdict))
    assert full_answer_line(at, title) == plain(words.answer(verdict))
    decomposition = verdict.decomposition
    figure = chart(at, "context_decomposition")
    assert bars(figure) == pytest.approx({words.chart_label(lever): lever.saved for lever in decomposition.levers
                                          if lever.saved is not None})
    rise = [shape["x0"] for shape in figure["layout"]["shapes"] if shape.get("line", {}).get("dash") == "dash"]
    assert rise == ([pytest.approx(decomposition.rise)] if decomposition.rise > 0 else [])
    assert figure["layout"]["title"]["text"] == words.chart_title(recipe_document.model, verdict,
                                                                  recipe_document.text_name)  # the model and text


# a rise of 1.2 nats per token past the trained length (3.7 against 2.5 in the second half of the trained context)
RECIPE_WINS = [(1.0, synthetic.plain([3.4, 3.6, 3.8, 4.0])), (0.8, synthetic.plain([3.5, 3.7, 3.9, 4.1])),
               (1.25, synthetic.plain([3.35, 3.55, 3.75, 3.95])), (synthetic.yarn_rope(), synthetic.plain([2.5] * 4))]
TEMPERATURE_WINS = [(1.0, synthetic.plain([3.4, 3.6, 3.8, 4.0])), (0.8, synthetic.plain([3.5, 3.7, 3.9, 4.1])),
                    (1.25, synthetic.plain([2.6, 2.6, 2.7, 2.7])),
                    (synthetic.yarn_rope(), synthetic.plain([3.3, 3.5, 3.7, 3.9]))]


def open_on_synthetic(tiny_env, tmp_path: Path, views: list) -> tuple[AppTest, SweepDocument]:
    """The page opened clean on a synthetic sweep (tests/verdicts/synthetic.document of `views`) as its committed
    one, and that sweep."""
    written, _ = synthetic.document(views)
    (tmp_path / "synthetic.json").write_text(json.dumps(written.to_dict(), allow_nan=False))
    tiny_env.setattr(settings, "CONTEXT_SWEEP", tmp_path / "synthetic.json")
    at = open_page()
    assert_clean(at)
    return at, written


@pytest.mark.parametrize(("views", "dominant"), [(RECIPE_WINS, Dominant.RECIPE),
                                                 (TEMPERATURE_WINS, Dominant.TEMPERATURE)])
def test_the_headline_leads_with_the_dominant_lever(tiny_env, tmp_path, views, dominant):
    at, written = open_on_synthetic(tiny_env, tmp_path, views)
    verdict = written.verdict
    decomposition = verdict.decomposition
    assert decomposition.dominant == dominant
    lever = decomposition.lever(decomposition.dominant)
    assert answer_line(at, "One text, the committed sweep (cross-fit on one text)") == plain(
        words.answer_point(verdict))
    shown = at.get("metric")
    assert shown[0].value == plain(f"{lever.saved:+.3f} nats/token")  # the lead's number, big
    assert shown[0].label.endswith(plain(words.row_label(lever)))
    assert [m.label for m in shown] == [plain(h.label) for h in words.headlines(verdict)]


SELF_EXTEND = View(1.0, Rope("self-extend", group=2, window=512))
SINKS = View(1.0, Rope("sink-window", sinks=4, window=1024))
FAR = {"untrained_mass": [0] * 4 + [0.5] * 4}  # as far back in the text as T = 1's, whatever the remapping does
FAR_PLAIN = [(spec, means, FAR) for spec, means in RECIPE_WINS]
NEAR = FAR | {"effective_untrained_mass": [0.0] * 8}  # once remapped, no key at an untrained distance
REMAP_WINS = [*FAR_PLAIN[:3], (synthetic.yarn_rope(), synthetic.plain([3.0, 3.2, 3.3, 3.4])),
              (SELF_EXTEND, synthetic.plain([2.5] * 4), NEAR),
              (SINKS, synthetic.plain([2.9] * 4), {"untrained_mass": [0] * 4 + [0.01] * 4,
                                                   "effective_untrained_mass": [0.0] * 8})]
REMAP_LOSES = [*FAR_PLAIN, (SELF_EXTEND, synthetic.plain([3.3, 3.5, 3.6, 3.7]), NEAR)]


@pytest.mark.parametrize(("views", "lead"), [(REMAP_WINS, "self-extend (G=2, W=512) + T=1"),
                                             (REMAP_LOSES, "yarn-rope (s=2) + T=1")])
def test_the_answer_names_the_recipe_family_that_recovers_the_most(tiny_env, tmp_path, views, lead):
    """A sweep with a distance remapping besides the interpolation: the answer names the family the numbers pick,
    the chart colours each family, the table gives a remapping's untrained mass on both distances."""
    at, written = open_on_synthetic(tiny_env, tmp_path, views)
    verdict = written.verdict
    answer = full_answer_line(at, "One text, the committed sweep (cross-fit on one text)")
    assert answer == plain(words.answer(verdict)) and verdict.decomposition.lever(Dominant.RECIPE).view.label == lead
    assert plain(lead) in answer_line(at, "One text, the committed sweep (cross-fit on one text)")
    names = {trace["name"] for trace in traces(chart(at, "context_decomposition"), "bar")}
    assert {"frequency change, T = 1", "distance remapping, T = 1"} <= names
    table = next(t.value for t in at.table if "view" in t.value.columns)
    cells = dict(zip(table["view"], table["untrained-distance mass past it"], strict=True))
    assert cells["self-extend (G=2, W=512) + T=1"] == "0.000 (goes away) on the remapped distances; 0.500 in the text"
    assert any(plain("on the remapped distances (what the model meets") in c.value for c in at.caption)


def test_the_headline_numbers_are_the_verdicts_and_come_before_the_loss_chart(recipe_env, recipe_document):
    at = open_page()
    assert_clean(at)
    expected = words.headlines(recipe_document.verdict)
    assert 1 <= len(expected) <= 4
    shown = at.get("metric")
    assert [m.label for m in shown] == [plain(h.label) for h in expected]
    # the number big, its interval or ratio under it, each formatted from the headline's numbers, never parsed
    assert [m.value for m in shown] == [plain(words.headline_number(h)) for h in expected]
    assert [m.delta or None for m in shown] == [None if words.headline_note(h) is None else
                                               plain(words.headline_note(h)) for h in expected]
    assert [m.proto.help for m in shown] == [plain(h.help) for h in expected]
    recipe = recipe_document.verdict.decomposition.lever(Dominant.RECIPE)
    assert recipe.saved in [h.value for h in expected]  # the recipes' part of the answer
    order = page_order(at.main)
    assert max(i for i, entry in enumerate(order) if entry.startswith("metric:")) < order.index(
        "plotly_chart:context_nll")


def test_the_decomposition_is_a_table_of_the_verdicts_rows_and_absent_without_a_recipe(recipe_env, recipe_document,
                                                                                      tiny_sweep_file):
    heading = "**What brings the loss back past the trained length**"
    at = open_page()
    assert_clean(at)
    table = next(t.value for t in at.table if "view" in t.value.columns)
    rows = words.decomposition_table(recipe_document.verdict)
    assert any(m.value.startswith(heading) for m in at.markdown) and rows
    assert list(table["view"]) == [row["view"] for row in rows]
    assert any(view.startswith("yarn-rope") for view in table["view"])
    recipe_env.setattr(settings, "CONTEXT_SWEEP", tiny_sweep_file)
    at = open_page()
    assert not any(m.value.startswith(heading) for m in at.markdown)


def test_no_page_passes_a_long_tuple_or_splats_one():
    """A request travels as a record: no page splats a sequence into a call or passes a tuple of more than 3 items
    to one or keeps one in the session."""
    for spec in PAGES:
        tree = ast.parse(Path(spec.path).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                assert not any(isinstance(arg, ast.Starred) for arg in node.args), (spec.script, ast.unparse(node))
                values = [*node.args, *(keyword.value for keyword in node.keywords)]
                assert not any(isinstance(v, ast.Tuple) and len(v.elts) > 3 for v in values), ast.unparse(node)
            if isinstance(node, ast.Assign) and "session_state" in ast.unparse(node.targets[0]):
                assert not (isinstance(node.value, ast.Tuple) and len(node.value.elts) > 3), ast.unparse(node)
