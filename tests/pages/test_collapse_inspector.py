"""The Collapse inspector page: it opens on its answer (a cut prompt says so first, then one sentence from the data,
what the model says at each temperature, the chart of recent / fact / sink), each number the engine's; the answer
probe and the fact follow their boxes without rerunning the model; a refused answer is an error under the boxes with
the rest drawn; the distance chart draws the sink apart; and the entropy verdicts sit folded below."""

import numpy as np
import pytest

import components.serving.cache
from components.present.captions import continuation_markdown
from components.present.text import plain
from components.serving.cache import cached_answer_probe, cached_collapse_report
from model_utils import analyze
from model_utils.core.collapse import find_fact
from model_utils.engine.answer import AnswerRequest, answer_probe, collapse_limit
from model_utils.verdicts.collapse import collapse_verdict
from model_utils.verdicts.words import collapse_more_sentences, collapse_sentence, cut_sentence, said_words
from tests.support import SHORT_TEXT
from tests.support.apptest import array, assert_clean, chart, open_app, texts, traces
from tests.support.context_page import page_order
from tests.support.reference import reference_last_query_masses

VAULT = ("The code for the vault is 4817. " + "The garden grew peas and the market sold honey. " * 12
         + "What is the code for the vault?")


def sidebar_temperatures(at) -> list[float]:
    return [float(t) for t in at.text_input(key="temperatures").value.split(",")]


def engine_verdict(tiny, at, answer: str = "Marigold", fact: str = "", limit: int = 2048):
    """The verdict the page should show, from the engine's own calls on the page's text and settings."""
    text, temperatures = at.text_area(key="collapse_text").value, sidebar_temperatures(at)
    report = analyze(tiny, text, temperatures=temperatures, window=32, max_tokens=collapse_limit(tiny, limit),
                     cut="question")
    probe = answer_probe(tiny, text, AnswerRequest(temperatures=temperatures, answer=answer, max_tokens=limit))
    return report, collapse_verdict(report, find_fact(text, report.offsets, marked=fact, answer=answer), probe)


def test_the_page_opens_on_the_cut_then_its_sentence_what_the_model_says_and_the_chart(tiny_env, tiny):
    at = open_app("collapse_inspector")
    assert_clean(at)
    report, verdict = engine_verdict(tiny, at)
    order = page_order(at.main)[1:]
    assert order[:3] == ["title", "info", f"markdown:{plain(collapse_sentence(verdict))[:30]}"], order[:4]
    assert at.info[0].value == plain(cut_sentence(report.cut))  # the default prompt passes the tiny model's length
    assert report.cut.question.startswith("Question: What is the password")
    sentence = at.markdown[0].value
    assert sentence == " ".join(plain(line) for line in [collapse_sentence(verdict),
                                                         *collapse_more_sentences(verdict)])
    assert sentence.startswith("At T = 1 the last token") and "on the fact" in sentence and "\\(the sink\\)" in sentence
    for index, view in enumerate(verdict.views):  # a column per temperature: its name and verdict, then what it says
        assert at.markdown[1 + 2 * index].value == f"**{plain('T = ' + format(view.temperature, 'g'))}** " \
                                                   f"{plain(said_words(view))}"
        assert at.markdown[2 + 2 * index].value == continuation_markdown(view.said.continuation)
    where = order.index("plotly_chart:collapse_where")
    assert where < order.index("text_area") < order.index("plotly_chart:collapse_distance")
    assert order.index("expander:Entropy verdicts, and the mass per layer over all queries") > where


def test_the_chart_is_the_last_querys_masses_key_by_key_and_follows_the_fact_box(tiny_env, tiny):
    at = open_app("collapse_inspector")
    at.text_area(key="collapse_text").set_value(VAULT).run()
    at.text_input(key="collapse_answer").set_value("4817").run()
    assert_clean(at)
    report, verdict = engine_verdict(tiny, at, answer="4817")
    fact = verdict.fact.tokens
    assert verdict.fact.text == "4817" and any('The fact\\: "4817"' in c for c in texts(at, "caption"))
    figure = chart(at, "collapse_where")
    bars = {trace["legendgroup"]: array(trace["y"]) for trace in traces(figure, "bar")}
    for part in ("recent", "fact", "sink"):
        expected = [np.mean([reference_last_query_masses(row, 32, fact)[part] for row in result.last_rows.reshape(
            -1, report.n_tokens)]) for result in report.results]
        np.testing.assert_allclose(bars[part], expected, atol=1e-9)

    at.text_input(key="collapse_fact").set_value("the MARKET sold").run()  # a phrase of the prompt, marked
    assert_clean(at)
    marked = engine_verdict(tiny, at, answer="4817", fact="the market sold")[1]
    assert marked.fact.text == "the market sold" and marked.fact.tokens != fact
    assert list(array(traces(chart(at, "collapse_where"), "bar")[1]["y"])) == pytest.approx(
        [view.masses.fact for view in marked.views])

    at.text_input(key="collapse_fact").set_value("the safe's code").run()  # not in the prompt: said, then the answer
    assert_clean(at)
    assert any("is not in the prompt" in warning for warning in texts(at, "warning"))
    assert any('The fact\\: "4817"' in c for c in texts(at, "caption"))


def test_the_answer_probe_is_cached_and_never_reruns_the_report(tiny_env):
    cached_collapse_report.clear()
    cached_answer_probe.clear()
    runs, probes = [], []
    real_analyze, real_probe = components.serving.cache.analyze, components.serving.cache.answer_probe
    tiny_env.setattr(components.serving.cache, "analyze", lambda *a, **k: runs.append(1) or real_analyze(*a, **k))
    tiny_env.setattr(components.serving.cache, "answer_probe",
                     lambda *a, **k: probes.append(a[2].answer) or real_probe(*a, **k))
    at = open_app("collapse_inspector")
    assert_clean(at)
    assert (len(runs), probes) == (1, ["Marigold"])
    at.text_input(key="collapse_answer").set_value("Tulip").run()
    assert_clean(at)
    assert (len(runs), probes) == (1, ["Marigold", "Tulip"])
    at.selectbox(key="collapse_distance_layer").set_value(1).run()  # a redraw: nothing runs
    at.text_input(key="collapse_fact").set_value("archive room").run()  # the fact is found, not computed
    at.text_input(key="collapse_answer").set_value("Marigold").run()  # an answer seen before: cached
    assert_clean(at)
    assert (len(runs), probes) == (1, ["Marigold", "Tulip"])


def test_a_refused_answer_is_an_error_under_the_boxes_and_the_rest_is_drawn(tiny_env):
    at = open_app("collapse_inspector")
    at.text_input(key="collapse_answer").set_value("x" * 40).run()  # 41 tokens with its space, one per byte
    assert not at.exception
    assert [error.value for error in at.error] == [plain("the expected answer is 41 tokens; give at most 32 (a word, "
                                                         "a number or a short phrase)")]
    order = page_order(at.main)
    assert order.index("text_area") < order.index("error") < order.index("plotly_chart:collapse_distance")
    assert len(at.get("plotly_chart")) == 5
    assert "; give the expected answer to see which temperature makes the model say it\\." in at.markdown[0].value
    assert len(traces(chart(at, "collapse_outcome"), "bar")) == 1  # no answer, no log-probability panel

    at.text_input(key="collapse_answer").set_value("").run()  # no answer: nothing to refuse
    assert_clean(at)
    assert len(traces(chart(at, "collapse_outcome"), "bar")) == 1


def test_the_outcome_chart_is_the_whole_answers_log_probability_and_isolated_mode_its_t1(tiny_env, tiny):
    at = open_app("collapse_inspector")
    at.text_input(key="temperatures").set_value("0.25, 1, 4").run()
    assert_clean(at)
    _, verdict = engine_verdict(tiny, at)
    outcome = chart(at, "collapse_outcome")
    assert outcome["data"][0]["x"] == ["T=0.25", "T=1", "T=4"]
    np.testing.assert_allclose(array(outcome["data"][1]["y"]), [view.said.answer_log_prob for view in verdict.views],
                               atol=1e-9)
    at.radio(key="mode").set_value("isolated").run()
    assert_clean(at)
    outcome = chart(at, "collapse_outcome")
    assert np.ptp(array(outcome["data"][0]["y"])) < 1e-6 and np.ptp(array(outcome["data"][1]["y"])) < 1e-9
    assert any("In isolated mode the model itself runs at T = 1" in caption for caption in texts(at, "caption"))


def test_the_distance_chart_draws_the_sink_apart_from_the_farthest_bin(tiny_env, tiny):
    at = open_app("collapse_inspector")
    at.selectbox(key="collapse_distance_layer").set_value(2).run()
    assert_clean(at)
    report, _ = engine_verdict(tiny, at)
    figure = chart(at, "collapse_distance")
    lines = [trace for trace in figure["data"] if trace["mode"] == "lines+markers"]
    sinks = [trace for trace in figure["data"] if trace["mode"] == "markers"]
    assert len(lines) == len(sinks) == len(report.results)
    for line, sink, result in zip(lines, sinks, report.results, strict=True):
        row = result.last_rows[2].mean(axis=0)
        np.testing.assert_allclose(array(sink["y"]), [row[0]], rtol=1e-6)
        profile = array(line["y"])
        np.testing.assert_allclose(profile, result.last_distance_profile(report.distance_edges, 2, sink=False))
        assert profile.sum() == pytest.approx(1.0 - row[0], abs=1e-5)  # key 0 is in no bin


def test_the_page_says_why_nothing_is_distant_in_its_folded_verdicts(tiny_env):
    at = open_app("collapse_inspector")
    assert not any(info.startswith("Nothing in this text is distant") for info in texts(at, "info"))
    at.text_area(key="collapse_text").set_value(SHORT_TEXT).run()
    assert_clean(at)
    note = next(info for info in texts(at, "info") if info.startswith("Nothing in this text is distant"))
    assert "it has 28 tokens and the recent window is 32" in note
    distant = [array(trace["y"]) for trace in traces(chart(at, "collapse_masses"), "bar") if trace["name"] == "distant"]
    assert len(distant) == 4 and all(np.all(values == 0) for values in distant)
    assert not any(info.startswith("The prompt is longer") for info in texts(at, "info"))  # a short prompt: no cut
