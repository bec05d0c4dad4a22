"""The app end to end in-process with streamlit's AppTest, on the tiny random model (ATTN_MODEL=tiny-random).

Each test opens the app, switches to a page, changes widgets by key and checks that the page neither raises nor shows
an error, and that its charts reflect the input. User mistakes must become an error line, never an exception.
"""

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import components.cache
from components.cache import cached_report, cached_report_with_maps

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGES = ("softmax_lab", "attention_maps", "collapse_inspector", "length_schedules")


def open_app(page: str | None = None, query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(f"components/pages/{page}.py")
        at.run()
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def charts(at: AppTest) -> dict[str, dict]:
    """The page's plotly figures as plotly JSON, by element key (the chart's `key` is part of its id)."""
    found = {}
    for element in at.get("plotly_chart"):
        figure = json.loads(element.proto.spec)
        found[element.proto.id] = figure
    return found


def chart(at: AppTest, key: str) -> dict:
    matches = [figure for element_id, figure in charts(at).items() if key in element_id]
    assert len(matches) == 1, f"expected one chart keyed {key!r}, found {len(matches)} in {list(charts(at))}"
    return matches[0]


def array(value) -> np.ndarray:
    """A plotly JSON array: a plain list, or plotly's base64 typed array {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        return flat.reshape([int(n) for n in str(shape).split(",")]) if shape else flat
    return np.asarray(value)


def traces(figure: dict, kind: str) -> list[dict]:
    return [trace for trace in figure["data"] if trace.get("type", "scatter") == kind]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_without_error_and_draws_charts(tiny_env, page):
    at = open_app(page)
    assert_clean(at)
    assert at.get("plotly_chart"), f"{page} drew no chart"
    assert at.title and at.title[0].value
    assert at.selectbox(key="model").value == "tiny-random"


def test_softmax_lab_follows_its_inputs(tiny_env):
    at = open_app("softmax_lab")
    assert len(traces(chart(at, "lab_bars"), "bar")) == 4  # the slider's T = 1 is one of the default temperatures

    at.text_input(key="temperatures").set_value("0.25, 1, 4").run()
    assert_clean(at)
    bars = traces(chart(at, "lab_bars"), "bar")
    assert sorted(bar["name"] for bar in bars) == ["T = 0.25", "T = 1", "T = 4"]  # slider T = 1 is among them

    at.text_input(key="lab_scores").set_value("3, 1, 0").run()
    assert_clean(at)
    bars = traces(chart(at, "lab_bars"), "bar")
    assert all(bar["x"] == ["k0", "k1", "k2"] for bar in bars)
    assert all(array(bar["y"]).sum() == pytest.approx(1.0) for bar in bars)

    at.select_slider(key="lab_temperature").set_value(2.0).run()
    assert_clean(at)
    names = [bar["name"] for bar in traces(chart(at, "lab_bars"), "bar")]
    assert len(names) == 4 and sum(name.endswith("T = 2") for name in names) == 1  # the slider's T joins them
    assert chart(at, "lab_ratio")["layout"]["shapes"][0]["x0"] == 2.0

    at.radio(key="mode").set_value("isolated").run()
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 3


def test_attention_maps_follow_layer_head_text_and_mode(tiny_env):
    at = open_app("attention_maps")
    assert at.selectbox(key="maps_layer").options == ["0", "1", "2"]
    assert at.selectbox(key="maps_head").options == ["mean of heads", "0", "1", "2", "3"]
    assert len(traces(chart(at, "maps_heatmaps"), "heatmap")) == 4

    at.text_input(key="temperatures").set_value("0.25, 1, 4").run()
    assert_clean(at)
    maps = chart(at, "maps_heatmaps")
    assert len(traces(maps, "heatmap")) == 3
    assert len(traces(chart(at, "maps_grid"), "heatmap")) == 3

    at.text_area(key="maps_text").set_value("Cold tea, warm <b>tea</b>.").run()
    assert_clean(at)
    maps = chart(at, "maps_heatmaps")
    ticks = maps["layout"]["xaxis"]["ticktext"]
    assert "&lt;" in ticks and "<" not in "".join(ticks)
    assert array(maps["data"][0]["z"]).shape == (len(ticks), len(ticks))  # a short text: every token labelled

    def first_panel() -> np.ndarray:
        return array(chart(at, "maps_heatmaps")["data"][0]["z"]).astype(np.float64)

    at.selectbox(key="maps_layer").set_value(1).run()
    assert_clean(at)
    layer_1 = first_panel()
    at.selectbox(key="maps_layer").set_value(2).run()
    assert_clean(at)
    mean_of_heads = first_panel()
    assert not np.array_equal(mean_of_heads, layer_1, equal_nan=True)  # another layer, another map
    heads = []
    for head in range(4):
        at.selectbox(key="maps_head").set_value(head).run()
        assert_clean(at)
        heads.append(first_panel())
    assert not np.array_equal(heads[0], heads[3], equal_nan=True)
    # "mean of heads" is the mean of the four heads' maps; every drawn row sums to 1
    np.testing.assert_allclose(mean_of_heads, np.mean(heads, axis=0), atol=1e-6)
    np.testing.assert_allclose(np.nansum(mean_of_heads, axis=1), 1.0, atol=1e-5)

    at.selectbox(key="maps_head").set_value("mean of heads").run()
    assert_clean(at)
    np.testing.assert_allclose(first_panel(), mean_of_heads)

    at.toggle(key="maps_log").set_value(True).run()
    assert_clean(at)
    assert chart(at, "maps_heatmaps")["layout"]["coloraxis"]["cmin"] == pytest.approx(-6.0)

    at.radio(key="mode").set_value("isolated").run()
    assert_clean(at)
    assert len(traces(chart(at, "maps_heatmaps"), "heatmap")) == 3


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


def test_length_schedules_follow_their_inputs(tiny_env):
    at = open_app("length_schedules")
    assert len(at.get("plotly_chart")) == 4

    at.text_input(key="temperatures").set_value("0.25, 1, 4").run()
    assert_clean(at)
    names = chart(at, "schedule_loss")["data"][0]["x"]
    # the constant temperatures first (they keep their colours across pages), the schedule last
    assert len(names) == 4 and names[:3] == ["T=0.25", "T=1", "T=4"] and names[3].startswith("qwen-logn")

    at.text_area(key="schedule_text").set_value("A short prompt about tea and the temperature of tea.").run()
    assert_clean(at)

    at.selectbox(key="schedule_choice").set_value("yarn").run()
    assert_clean(at)
    assert chart(at, "schedule_loss")["data"][0]["x"][-1].startswith("yarn")

    multipliers = [array(trace["y"]) for trace in chart(at, "schedule_curves")["data"]]
    at.toggle(key="schedule_as_t").set_value(True).run()
    assert_clean(at)
    shown = [array(trace["y"]) for trace in chart(at, "schedule_curves")["data"]]
    assert len(shown) == len(multipliers) == 5
    for m, t in zip(multipliers, shown, strict=True):
        assert m[-1] > 1.0 and t[-1] < 1.0  # at 128k tokens every schedule sharpens: m > 1, T = 1 / m < 1
        np.testing.assert_allclose(t[m > 0], 1.0 / m[m > 0])

    at.radio(key="mode").set_value("isolated").run()
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 4


@pytest.mark.parametrize("bad", ["0", "abc", "1, 1", "nan", "-2", "0.5, 1, 1.5, 2, 2.5, 3, 3.5", ""])
def test_bad_temperatures_show_an_error_line_not_an_exception(tiny_env, bad):
    at = open_app("softmax_lab")
    at.text_input(key="temperatures").set_value(bad).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.error and at.sidebar.error[0].value.startswith("Temperatures: ")
    assert any(e.value.startswith("Fix the temperatures in the sidebar") for e in at.error)
    assert not at.get("plotly_chart")
    if bad.startswith("0.5"):
        assert "at most 6 temperatures" in at.sidebar.error[0].value

    at.text_input(key="temperatures").set_value("1, 2").run()  # fixing it brings the page back
    assert_clean(at)
    assert len(traces(chart(at, "lab_bars"), "bar")) == 2


def test_bad_temperatures_stop_a_model_page_before_the_model_runs(tiny_env):
    at = open_app("attention_maps")
    at.text_input(key="temperatures").set_value("1, 1").run()
    assert not at.exception
    assert any("listed twice" in e.value for e in at.error)
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_text_on_the_maps_page_is_an_error_line(tiny_env, text):
    at = open_app("attention_maps")
    at.text_area(key="maps_text").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == ["the text is empty; type or paste some text to analyse"]
    assert not at.get("plotly_chart")


@pytest.mark.parametrize(("scores", "message"), [("abc", "numbers separated by commas"), ("5", "between 2 and 64"),
                                                 ("1, nan", "finite number"), ("1, 1e400", "finite number")])
def test_bad_scores_on_the_softmax_lab_are_an_error_line(tiny_env, scores, message):
    at = open_app("softmax_lab")
    at.text_input(key="lab_scores").set_value(scores).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and at.error[0].value.startswith("Scores: ") and message in at.error[0].value
    assert not at.get("plotly_chart")


def test_model_choice_is_only_the_operators_single_model(tiny_env):
    at = open_app(query={"model": "/etc/passwd"})  # a link cannot name a model the operator did not list
    assert_clean(at)
    assert at.selectbox(key="model").options == ["tiny-random"]
    assert at.selectbox(key="model").value == "tiny-random"


def test_model_choice_is_exactly_the_operators_list(tiny_env):
    tiny_env.setenv("ATTN_MODELS", "tiny-random,bundled")
    at = open_app(query={"model": "../../some/local/dir"})
    assert_clean(at)
    assert at.selectbox(key="model").options == ["tiny-random", "bundled"]
    assert at.selectbox(key="model").value == "tiny-random"
    assert at.query_params["model"] == "tiny-random"  # the link names the model only when there is a choice


def test_maps_redraw_for_another_layer_or_head_does_not_rerun_the_model(tiny_env):
    cached_report.clear()
    cached_report_with_maps.clear()
    calls = []
    real_analyze = components.cache.analyze

    def counting_analyze(*args, **kwargs):
        calls.append(kwargs.get("temperatures"))
        return real_analyze(*args, **kwargs)

    tiny_env.setattr(components.cache, "analyze", counting_analyze)
    at = open_app("attention_maps")
    assert_clean(at)
    assert len(calls) == 1
    first = array(chart(at, "maps_heatmaps")["data"][0]["z"])

    at.selectbox(key="maps_layer").set_value(0).run()
    at.selectbox(key="maps_head").set_value(1).run()
    at.toggle(key="maps_log").set_value(True).run()
    assert_clean(at)
    assert len(calls) == 1, "a re-draw of the kept maps must not run the model again"
    assert not np.array_equal(array(chart(at, "maps_heatmaps")["data"][0]["z"]), first, equal_nan=True)  # it changed

    at.text_input(key="temperatures").set_value("0.5, 3").run()  # a new request does run it: the counter works
    assert_clean(at)
    assert len(calls) == 2
