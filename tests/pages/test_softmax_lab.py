"""The Softmax lab page (no model): it follows its inputs, and bad scores are an error line."""

import pytest

from components.present import guide
from tests.support.apptest import array, assert_clean, chart, open_app, texts, traces


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

    # no model runs here: the sidebar draws no model, mode or window
    assert not at.sidebar.selectbox and not at.sidebar.radio and not at.sidebar.number_input
    assert [box.key for box in at.sidebar.text_input] == ["temperatures"]


@pytest.mark.parametrize(("scores", "message"), [("abc", "numbers separated by commas"), ("5", "between 2 and 64"),
                                                 ("1, nan", "finite number"), ("1, 1e400", "finite number")])
def test_bad_scores_on_the_softmax_lab_are_an_error_line_and_the_last_good_charts_stay(tiny_env, scores, message):
    at = open_app("softmax_lab")
    at.text_input(key="lab_scores").set_value("3, 2, 1, 0").run()
    at.text_input(key="lab_scores").set_value(scores).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and at.error[0].value.startswith("Scores: ") and message in at.error[0].value
    assert "last scores accepted: 3, 2, 1, 0" in at.error[0].value
    assert at.text_input(key="lab_scores").value == scores  # the refused text stays in its box, to be fixed
    assert chart(at, "lab_bars")["data"][0]["x"] == ["k0", "k1", "k2", "k3"]
    assert at.query_params["scores"] == "3, 2, 1, 0"  # the link keeps the view that is drawn


def test_the_lab_leads_on_to_the_attention_maps_with_its_temperatures(tiny_env):
    at = open_app("softmax_lab")
    at.text_input(key="temperatures").set_value("0.5, 1, 3").run()
    assert_clean(at)
    links = at.get("page_link")
    assert len(links) == 1
    link = links[0].proto
    assert link.page == "maps" and link.label == "Attention maps at T = 0.5,1,3"
    assert link.query_string == "t=0.5%2C1%2C3"  # the sidebar's temperatures ride along in the link
    assert at.markdown[0].value == f"**{guide.POINT['softmax_lab']}**"  # the first screen says its point
    order = [element.type for element in at.main.children.values()]
    assert order.index("plotly_chart") < order.index("markdown", 1 + order.index("markdown"))  # then the bars


def test_a_gap_too_large_for_a_float_reads_unbounded_not_a_traceback(tiny_env):
    """exp(1000 / 0.05) overflows a float: the table says the ratio is unbounded, and the page draws."""
    at = open_app("softmax_lab")
    at.text_input(key="temperatures").set_value("0.05, 1").run()
    at.text_input(key="lab_scores").set_value("1000, 0").run()
    assert_clean(at)
    ratios = list(at.dataframe[0].value["top / runner-up (gap 1000)"])
    assert ratios[0] == "unbounded", ratios


def slider_options(at) -> list[str]:
    return list(at.select_slider(key="lab_temperature").proto.options)


def test_the_slider_lands_on_every_listed_temperature_and_adds_no_second_panel(tiny_env):
    at = open_app("softmax_lab")
    options = slider_options(at)
    assert {"0.5", "1", "1.5", "2"} <= set(options) and "0.501" not in options and "0.56" in options
    at.select_slider(key="lab_temperature").set_value(0.5).run()
    assert_clean(at)
    names = [bar["name"] for bar in traces(chart(at, "lab_bars"), "bar")]
    assert names == ["T = 0.5", "T = 1", "T = 1.5", "T = 2"]  # no grey "slider T = 0.501" beside T = 0.5
    assert at.query_params["lab_t"] == "0.5"

    at.text_input(key="temperatures").set_value("0.7, 3").run()  # the slider's 0.5 is a grid point: it stays
    assert_clean(at)
    assert {"0.7", "3"} <= set(slider_options(at)) and "0.71" not in slider_options(at)
    assert at.select_slider(key="lab_temperature").value == 0.5
    at.select_slider(key="lab_temperature").set_value(0.7).run()
    assert [bar["name"] for bar in traces(chart(at, "lab_bars"), "bar")] == ["T = 0.7", "T = 3"]

    at.text_input(key="temperatures").set_value("0.5, 3").run()  # 0.7 leaves the slider: it keeps to the nearest
    assert_clean(at)
    assert at.select_slider(key="lab_temperature").value == 0.71


@pytest.mark.parametrize(("raw", "value"), [("0.5", 0.5), ("1.5", 1.5), ("0.7", 0.71), ("abc", 1.0)])
def test_a_links_lab_t_opens_the_slider_there(tiny_env, raw, value):
    at = open_app("softmax_lab", query={"lab_t": raw})
    assert_clean(at)
    assert at.select_slider(key="lab_temperature").value == value


def test_the_ratio_chart_follows_the_typed_scores(tiny_env):
    at = open_app("softmax_lab")
    notes = [note["text"] for note in chart(at, "lab_ratio")["layout"]["annotations"]]
    assert "148x at T = 1" in notes and "12.2x at T = 2" in notes  # the default scores: gap 5
    at.text_input(key="lab_scores").set_value("3, 2, 1, 0").run()
    assert_clean(at)
    figure = chart(at, "lab_ratio")
    notes = [note["text"] for note in figure["layout"]["annotations"]]
    assert "2.72x at T = 1" in notes and "1.65x at T = 2" in notes and not any("148x" in note for note in notes)
    assert figure["layout"]["title"]["text"].endswith("(score gap 1)")
    assert list(at.dataframe[0].value.columns)[-1] == "top / runner-up (gap 1)"  # as the table says


def test_h_is_explained_and_ratios_read_as_plain_numbers(tiny_env):
    at = open_app("softmax_lab")
    at.text_input(key="temperatures").set_value("0.5, 1").run()
    assert_clean(at)
    assert list(at.dataframe[0].value["top / runner-up (gap 5)"]) == ["22,026x", "148.4x"]  # not 2.203e+04x
    bars = chart(at, "lab_bars")
    assert any(note["text"].startswith("top: the largest weight · H: the entropy") for note in bars["layout"][
        "annotations"])
    said = " ".join(texts(at, "markdown"))
    assert "**H**, the [entropy](glossary?term=entropy)" in said and "(glossary?term=softmax)" in said
    assert chart(at, "lab_ratio")["layout"]["xaxis"]["ticktext"] == ["0.1", "0.2", "0.5", "1", "2", "5", "10"]


def test_a_decimal_comma_gets_the_hint_in_the_scores_and_the_sidebar(tiny_env):
    at = open_app("softmax_lab")
    at.text_input(key="lab_scores").set_value("0,5; 2").run()
    assert not at.exception
    assert len(at.error) == 1 and "use a point for decimals: 0.5, not 0,5" in at.error[0].value.replace("\\", "")
    at.text_input(key="lab_scores").set_value("0.5, 2").run()
    assert_clean(at)

    at.text_input(key="temperatures").set_value("0,5; 2").run()
    assert not at.exception
    assert "use a point for decimals: 0.5, not 0,5" in at.sidebar.error[0].value.replace("\\", "")
    at.text_input(key="temperatures").set_value("0,5, 2").run()  # would read as 0, 5, 2: "'0' is out of range"
    assert "use a point for decimals: 0.5, not 0,5" in at.sidebar.error[0].value.replace("\\", "")
