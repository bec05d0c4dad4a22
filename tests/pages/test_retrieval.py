"""The Retrieval page on the tiny model's probe: it opens on the verdict and the reach chart (one line per chosen
view, its points the curve's), draws one passage token by token, and runs a probe of a typed passage, with a clear
message for a mistake."""

import json

import numpy as np
import pytest

from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.core.views import View
from tests.support.apptest import array, assert_clean, chart, open_app, traces


@pytest.fixture(scope="module")
def probe(tiny_retrieval_file) -> RetrievalDocument:
    return RetrievalDocument.from_dict(json.loads(tiny_retrieval_file.read_text()))


def lines(figure: dict) -> dict[str, dict]:
    return {trace["name"]: trace for trace in traces(figure, "scatter") if trace.get("name")}


def test_the_page_opens_on_the_reach_chart_of_the_committed_probe(tiny_env, probe):
    at = open_app("retrieval")
    assert_clean(at)
    drawn = lines(chart(at, "retrieval_reach"))
    assert set(drawn) == {"T=0.8", "T=1", "T=1.25", "yarn-rope (s=2) + T=1"}  # the schedule is one click away
    assert array(drawn["T=1"]["y"]) == pytest.approx(probe.curve(View(1.0)).gain)
    assert array(drawn["T=1"]["x"]).tolist() == [48, 96, 192]
    # the trained length on the log axis: plotly draws a shape at the value itself, an annotation at its log10 (a
    # shape at log10 drew the line at the axis's far left and stretched the axis to it: the browser's screenshot)
    layout = chart(at, "retrieval_reach")["layout"]
    (line,) = layout["shapes"]
    assert line["x0"] == line["x1"] == probe.trained_length
    (label,) = [note for note in layout["annotations"] if note["text"].startswith("trained length")]
    assert label["x"] == pytest.approx(np.log10(probe.trained_length))
    assert probe.trained_length not in layout["xaxis"]["tickvals"]  # its label says it; a tick would crowd 7,900
    assert next(m.label for m in at.metric) == "reach at T=1"
    at.multiselect(key="retrieval_lines").set_value(["T=1", "qwen-logn (train_length=256)"]).run()
    assert_clean(at)
    assert set(lines(chart(at, "retrieval_reach"))) == {"T=1", "qwen-logn (train_length=256)"}


def test_one_passage_is_drawn_token_by_token_at_each_view(tiny_env, probe):
    at = open_app("retrieval")
    at.selectbox(key="retrieval_passage").set_value("source-code").run()
    at.selectbox(key="retrieval_distance").set_value(192).run()
    at.multiselect(key="retrieval_views").set_value(["T=1", "T=1.25"]).run()
    assert_clean(at)
    layers = lines(chart(at, "retrieval_layers"))
    point = probe.point("source-code", 192, View(1.25))
    assert array(layers["T=1.25, planted"]["y"]) == pytest.approx(point.planted.target_mass_top)
    assert array(layers["T=1.25, nothing planted"]["y"]) == pytest.approx(point.unplanted.target_mass_top)


def test_your_passage_runs_at_the_sidebars_temperatures(tiny_env):
    at = open_app("retrieval")
    at.text_input(key="temperatures").set_value("1, 2").run()
    at.text_area(key="retrieval_text").set_value("The lighthouse keeper wrote the number 4172 in the log. " * 6)
    at.selectbox(key="retrieval_own_distance").set_value(256)
    at.button[0].click().run()  # the form's submit button
    assert_clean(at)
    assert [m.label for m in at.metric][-2:] == ["T=1", "T=2"]


def test_a_probe_without_t1_says_so(tiny_env):
    at = open_app("retrieval")
    at.text_input(key="temperatures").set_value("0.5, 2").run()
    at.button[0].click().run()
    assert not at.exception
    assert any("include 1" in error.value for error in at.error)


def test_an_empty_passage_is_an_error_line(tiny_env):
    at = open_app("retrieval")
    at.text_area(key="retrieval_text").set_value("   ")
    at.button[0].click().run()
    assert not at.exception
    assert any("is empty" in error.value for error in at.error)


def test_a_view_not_measured_at_a_distance_is_said_and_the_others_drawn(tiny_env, probe, tmp_path):
    """A probe run with --recipes-past-trained measures the temperatures only inside the trained length: the passage
    view draws the views that have the distance and names the one that has not (no traceback)."""
    from dataclasses import replace

    from components.serving import settings
    from model_utils.verdicts.retrieval import curve

    points = tuple(p for p in probe.points if not (p.view == View(1.25) and p.distance == 192))
    names = [p.name for p in probe.passages]
    curves = tuple(curve(points, c.view, names) for c in probe.curves)
    short = tmp_path / "short.json"
    short.write_text(json.dumps(replace(probe, points=points, curves=curves).to_dict()))
    tiny_env.setattr(settings, "RETRIEVAL_DEFAULT", short)
    tiny_env.setattr(settings, "RETRIEVAL_DIR", tmp_path)
    at = open_app("retrieval")
    assert_clean(at)
    assert array(lines(chart(at, "retrieval_reach"))["T=1.25"]["x"]).tolist() == [48, 96]
    at.selectbox(key="retrieval_distance").set_value(192).run()
    at.multiselect(key="retrieval_views").set_value(["T=1", "T=1.25"]).run()
    assert_clean(at)
    assert any(info.value.startswith(r"Not measured at 192 tokens: T=1\.25.") for info in at.info)  # markdown
    assert set(lines(chart(at, "retrieval_layers"))) == {"T=1, planted", "T=1, nothing planted"}


def test_the_page_answers_in_one_sentence_and_keeps_the_views_one_click_away(tiny_env, probe):
    from model_utils.verdicts.words import reach_headline, reach_sentence

    at = open_app("retrieval")
    assert_clean(at)
    first = at.markdown[0].value
    assert first.startswith("**") and first.endswith("**") and "Against T = 1" not in first
    assert first.replace("\\", "") == f"**{reach_headline(probe.model, probe.verdict)}**"  # markdown escapes
    (views,) = [e for e in at.expander if e.label == "What each temperature and recipe does to the reach"]
    assert views.markdown[0].value.replace("\\", "") == reach_sentence(probe.model, probe.verdict)  # in full
    assert any("Against T = 1" in m.value or "cannot tell" in m.value for m in views.markdown)
