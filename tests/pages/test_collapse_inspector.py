"""The Collapse inspector page: it follows its inputs, looks up an answer without rerunning the model, draws
the report's distance profile, and says why nothing is distant in a short text."""

import numpy as np

import components.serving.cache
from components.present import guide
from components.present.text import plain
from components.serving.cache import cached_answer_token, cached_report
from model_utils import analyze
from model_utils.engine.analyze import answer_token
from tests.support import SHORT_TEXT
from tests.support.apptest import array, assert_clean, chart, open_app, texts, traces


def test_collapse_inspector_follows_its_inputs(tiny_env):
    at = open_app("collapse_inspector")
    assert len(at.get("plotly_chart")) == 4

    at.text_input(key="temperatures").set_value("0.25, 1, 4").run()
    assert_clean(at)
    assert len(traces(chart(at, "collapse_outcome"), "bar")) == 2  # loss and the answer's probability
    assert chart(at, "collapse_outcome")["data"][0]["x"] == ["T=0.25", "T=1", "T=4"]

    at.text_area(key="collapse_text").set_value("The code is Marigold. " + "Filler text. " * 40 + "The code is").run()
    assert_clean(at)
    at.text_input(key="collapse_answer").set_value("").run()
    assert_clean(at)
    assert len(traces(chart(at, "collapse_outcome"), "bar")) == 1  # no answer, no probability panel

    at.selectbox(key="collapse_distance_layer").set_value(1).run()
    assert_clean(at)

    at.radio(key="mode").set_value("isolated").run()
    assert_clean(at)
    losses = array(chart(at, "collapse_outcome")["data"][0]["y"])
    assert np.ptp(losses) < 1e-6  # isolated mode: the model's outputs are those of T = 1
    assert len(at.get("plotly_chart")) == 4


def sidebar_temperatures(at) -> list[float]:
    return [float(t) for t in at.text_input(key="temperatures").value.split(",")]


def test_collapse_answer_lookup_is_cached_and_never_reruns_the_model(tiny_env, tiny):
    cached_report.clear()
    cached_answer_token.clear()
    runs, lookups = [], []
    real_analyze, real_answer_token = components.serving.cache.analyze, components.serving.cache.answer_token
    tiny_env.setattr(components.serving.cache, "analyze", lambda *a, **k: runs.append(1) or real_analyze(*a, **k))
    tiny_env.setattr(components.serving.cache, "answer_token",
                     lambda *a, **k: lookups.append(a[2]) or real_answer_token(*a, **k))
    at = open_app("collapse_inspector")
    assert_clean(at)
    assert (len(runs), lookups) == (1, ["Marigold"])

    at.text_input(key="collapse_answer").set_value("Tulip").run()
    assert_clean(at)
    assert (len(runs), lookups) == (1, ["Marigold", "Tulip"])
    text = at.text_area(key="collapse_text").value
    report = analyze(tiny, text, temperatures=sidebar_temperatures(at), window=32, max_tokens=1024)
    expected = report.answer_probabilities(answer_token(tiny, text, "Tulip")[0])
    np.testing.assert_allclose(array(chart(at, "collapse_outcome")["data"][1]["y"]), expected, rtol=1e-4)

    at.selectbox(key="collapse_distance_layer").set_value(1).run()  # a re-draw: no lookup, no run
    at.text_input(key="collapse_answer").set_value("Marigold").run()  # an answer seen before: cached
    assert_clean(at)
    assert (len(runs), lookups) == (1, ["Marigold", "Tulip"])


def test_collapse_distance_profile_is_the_reports(tiny_env, tiny):
    at = open_app("collapse_inspector")
    at.selectbox(key="collapse_distance_layer").set_value(2).run()
    assert_clean(at)
    text = at.text_area(key="collapse_text").value
    report = analyze(tiny, text, temperatures=sidebar_temperatures(at), window=32, max_tokens=1024)
    for trace, result in zip(chart(at, "collapse_distance")["data"], report.results, strict=True):
        np.testing.assert_allclose(array(trace["y"]), result.last_distance_profile(report.distance_edges, 2),
                                   rtol=1e-4, atol=1e-7)


def test_the_collapse_page_says_why_nothing_is_distant(tiny_env):
    at = open_app("collapse_inspector")
    assert_clean(at)
    assert not any(info.startswith("Nothing in this text is distant") for info in texts(at, "info"))  # the long default
    at.text_area(key="collapse_text").set_value(SHORT_TEXT).run()
    assert_clean(at)
    note = next(info for info in texts(at, "info") if info.startswith("Nothing in this text is distant"))
    assert "it has 28 tokens and the recent window is 32" in note
    assert "more than 33 tokens or a recent window of at most 26 tokens" in note
    distant = [array(trace["y"]) for trace in traces(chart(at, "collapse_masses"), "bar") if trace["name"] == "distant"]
    assert len(distant) == 4 and all(np.all(values == 0) for values in distant)

    at.number_input(key="window").set_value(8).run()  # a shorter window makes part of the text distant
    assert_clean(at)
    assert not any(info.startswith("Nothing in this text is distant") for info in texts(at, "info"))


def test_a_continuation_past_the_trained_length_is_an_error_line_kept_without_asking_again(tiny_env):
    """The default prompt fills the tiny model's 1,024 trained positions: 32 more tokens would run past them."""
    from components.serving.cache import cached_generation

    cached_generation.clear()
    calls, real = [], components.serving.cache.generate_continuations
    tiny_env.setattr(components.serving.cache, "generate_continuations",
                     lambda *a, **k: calls.append(1) or real(*a, **k))
    at = open_app("collapse_inspector")
    assert_clean(at)
    assert guide.POINT["collapse_inspector"] in at.markdown[0].value  # the first screen says its point
    at.button(key="collapse_said_button").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == [
        "the text \\(1,024 tokens\\) and 32 new tokens run past the model's trained length of 1,024; shorten the text "
        "or ask for fewer new tokens \\(a continuation is generated only within the trained length\\)"]
    assert not at.get("code") and len(calls) == 1
    at.selectbox(key="collapse_distance_layer").set_value(1).run()  # a redraw: the refusal stays, no new request
    assert len(at.error) == 1 and len(calls) == 1
    assert len(at.get("plotly_chart")) == 4  # the rest of the page is drawn

    at.text_area(key="collapse_text").set_value("The code is Marigold. " + "Filler text. " * 20 + "The code is").run()
    assert_clean(at)  # another request: no refusal until asked
    at.button(key="collapse_said_button").click().run()
    assert_clean(at)
    assert len(at.get("code")) == 4 and len(calls) == 2


def test_the_first_screen_says_its_point_its_limit_and_its_verdicts_in_temperatures_before_the_prompt(tiny_env):
    """The point, one line on the token limit against the trained length (with the pages that go past it), the
    verdicts in temperatures only, then the mass chart; the prompt and its settings under them."""
    from tests.support.context_page import page_order

    at = open_app("collapse_inspector")
    at.text_input(key="temperatures").set_value("0.05, 1, 20").run()  # far enough to be judged
    assert_clean(at)
    order = page_order(at.main)[1:]  # after the main block itself
    assert order[:2] == ["title", f"markdown:**{guide.POINT['collapse_inspector'][:28]}"], order[:3]
    limit = next(c.value for c in at.caption if c.value.startswith("This page reads a prompt of up to 4,096 tokens"))
    assert "trained length is 1,024" in limit  # the tiny model's: 4,096 is past it
    assert "[Context length](context)" in limit and "[Retrieval](retrieval)" in limit
    said = " ".join(box.value for box in [*at.warning, *at.info])
    assert plain("T=20 softens attention") in said and plain("T=0.05 sharpens attention") in said
    assert "m = " not in said and "m from" not in said  # temperatures only
    assert order.index("plotly_chart:collapse_masses") < order.index("text_area")
    assert order.index(next(entry for entry in order if entry.startswith("warning"))) < order.index(
        "plotly_chart:collapse_masses")
