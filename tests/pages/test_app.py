"""The router and the shared sidebar, across every page: each page opens and draws, bad temperatures and a
mangled link are error lines or a sane view, user text is data everywhere, the operator's model list, budgets and
bounded caches."""

import pytest
from streamlit.runtime.caching.cache_data_api import get_data_cache_stats_provider

from components.present.text import plain
from components.serving.cache import cached_report, cached_report_with_maps
from components.widgets.controls import SIDEBAR_CONTROLS
from tests.support.apptest import PAGE_SCRIPTS, SPECS, TITLES, assert_clean, chart, open_app, traces


@pytest.mark.parametrize("page", PAGE_SCRIPTS)
def test_every_page_opens_without_error_and_draws_charts(tiny_env, page):
    at = open_app(page)
    assert_clean(at)
    assert at.get("plotly_chart") or page in ("glossary", "lesson"), f"{page} drew no chart"
    assert [title.value for title in at.title] == [TITLES[page]]
    if "model" in SPECS[page].controls:
        assert at.selectbox(key="model").value == "tiny-random"


def sidebar_controls(at) -> list[str]:
    """The keys of the shared controls the sidebar draws, in their order."""
    drawn = {element.key for kind in ("selectbox", "text_input", "radio", "number_input")
             for element in getattr(at.sidebar, kind)}
    return [key for key in SIDEBAR_CONTROLS if key in drawn]


@pytest.mark.parametrize("page", PAGE_SCRIPTS)
def test_the_sidebar_draws_only_the_controls_that_act_on_the_page(tiny_env, page):
    at = open_app(page)
    assert_clean(at)
    spec = SPECS[page]
    assert sidebar_controls(at) == list(spec.controls)
    notes = [caption.value for caption in at.sidebar.caption]
    assert (spec.controls_note in notes) if spec.controls_note else not notes


def test_the_lab_runs_no_model_so_shows_only_the_temperatures():
    lab = SPECS["softmax_lab"]
    assert lab.controls == ("temperatures",) and "runs no model" in lab.controls_note
    context = SPECS["context_length"]
    assert "mode" not in context.controls and "only on the form" in context.controls_note
    assert SPECS["retrieval"].controls == ("model", "temperatures") and SPECS["glossary"].controls == ()
    assert SPECS["lesson"].controls == ()
    assert all(spec.controls == SIDEBAR_CONTROLS for name, spec in SPECS.items()
               if name not in ("softmax_lab", "context_length", "retrieval", "glossary", "lesson"))


def test_a_control_hidden_on_one_page_keeps_its_value_for_the_next(tiny_env):
    at = open_app("attention_maps")
    at.radio(key="mode").set_value("isolated").run()
    at.number_input(key="window").set_value(8).run()
    at.text_input(key="temperatures").set_value("0.5, 1").run()
    at.switch_page("components/pages/softmax_lab.py").run()  # mode, window and model are not drawn there
    assert_clean(at)
    assert sidebar_controls(at) == ["temperatures"]
    at.switch_page("components/pages/collapse_inspector.py").run()
    assert_clean(at)
    assert at.radio(key="mode").value == "isolated" and at.number_input(key="window").value == 8
    assert at.text_input(key="temperatures").value == "0.5, 1"
    assert any("isolated mode" in caption.value for caption in at.caption)  # the page ran with the kept mode


@pytest.mark.parametrize("bad", ["0", "abc", "1, 1", "nan", "-2", "0.5, 1, 1.5, 2, 2.5, 3, 3.5", ""])
def test_bad_temperatures_show_an_error_line_beside_the_box_and_keep_the_page(tiny_env, bad):
    at = open_app("softmax_lab")
    at.text_input(key="temperatures").set_value(bad).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.error and at.sidebar.error[0].value.startswith("Temperatures: ")
    assert at.text_input(key="temperatures").value == bad  # the refused text stays in its box, to be fixed
    # the page keeps the last temperatures that were accepted, and says so
    assert any("T = 0.5, 1, 1.5, 2, the last that were accepted" in w.value for w in at.warning)
    assert len(traces(chart(at, "lab_bars"), "bar")) == 4
    if bad.startswith("0.5"):
        assert "at most 6 temperatures" in at.sidebar.error[0].value

    at.text_input(key="temperatures").set_value("1, 2").run()  # fixing it moves the page on from there
    assert_clean(at)
    assert not at.warning
    assert len(traces(chart(at, "lab_bars"), "bar")) == 2


def test_bad_temperatures_keep_a_model_page_and_its_text(tiny_env):
    at = open_app("attention_maps")
    at.text_area(key="maps_text").set_value("A text the visitor typed, which must not be lost.").run()
    at.text_input(key="temperatures").set_value("1, 1").run()
    assert not at.exception
    assert any("listed twice" in e.value for e in at.sidebar.error)
    assert at.text_area(key="maps_text").value == "A text the visitor typed, which must not be lost."
    assert at.get("plotly_chart")  # the last good result stays drawn
    at.text_input(key="temperatures").set_value("0.5, 2").run()
    assert_clean(at)
    assert at.text_area(key="maps_text").value == "A text the visitor typed, which must not be lost."
    assert at.query_params["t"] == "0.5,2"


def test_temperatures_that_never_parsed_stop_a_model_page_before_the_model_runs(tiny_env):
    at = open_app("attention_maps", query={"t": "1,1"})  # a link's bad temperatures fall back to the defaults
    assert_clean(at)
    at.session_state["_last_good_temperatures"] = None
    at.text_input(key="temperatures").set_value("1, 1").run()
    assert any("Fix the temperatures in the sidebar" in e.value for e in at.error)
    assert not at.get("plotly_chart")


def test_model_choice_is_only_the_operators_single_model(tiny_env):
    # a link cannot name a model the operator did not list
    at = open_app("attention_maps", query={"model": "/etc/passwd"})
    assert_clean(at)
    assert at.selectbox(key="model").options == ["tiny-random"]
    assert at.selectbox(key="model").value == "tiny-random"


def test_model_choice_is_exactly_the_operators_list(tiny_env):
    tiny_env.setenv("ATTN_MODELS", "tiny-random,bundled")
    at = open_app("attention_maps", query={"model": "../../some/local/dir"})
    assert_clean(at)
    assert at.selectbox(key="model").options == ["tiny-random", "SmolLM2-135M"]  # shown by name, not by key
    assert at.selectbox(key="model").value == "tiny-random"
    assert at.query_params["model"] == "tiny-random"  # the link names the model only when there is a choice
    at.selectbox(key="model").set_value("bundled")
    assert at.selectbox(key="model").value == "bundled"  # the key the engine and the link use


def test_model_pages_show_the_models_facts_in_the_sidebar(tiny_env):
    lab = open_app("softmax_lab")
    assert not any("The model the pages describe" in m.value for m in lab.sidebar.markdown)  # no model runs there
    at = open_app("collapse_inspector")
    assert_clean(at)
    facts = next(m.value for m in at.sidebar.markdown if "The model the pages describe" in m.value)
    for line in ("architecture: llama", "layers: 3", "heads: 4", "kv heads: 2", "trained length: 1,024"):
        assert f"- {line}\n" in facts + "\n", (line, facts)
    assert "sliding window" not in facts
    assert not any("sliding-window layers" in info.value for info in at.info)


SCRIPT = "<script>alert(1)</script><img src=x onerror=alert(2)>"


@pytest.mark.parametrize(
    "query",
    [
        {"window": "0"}, {"window": "-5"}, {"window": "abc"}, {"window": "99999999"},
        {"layer": "99", "head": "-1"}, {"layer": "abc", "head": "9"},
        {"t": "abc"}, {"t": "0,-1,nan"}, {"t": "1,1"}, {"mode": "bogus"},
        {"model": "/etc/passwd"}, {"model": "../../../tmp/evil"},
        {"text": SCRIPT}, {"text": "x" * 300_000},
    ],
)
def test_a_mangled_link_opens_a_sane_view(tiny_env, query):
    at = open_app("attention_maps", query=query)
    assert_clean(at)
    # nothing in these links is valid, so every widget keeps its default: never a model from the link
    assert at.selectbox(key="model").value == "tiny-random"
    assert at.number_input(key="window").value == 32
    if "layer" in query:  # the page's own default view, the head whose weights move most with T (most_moved_head)
        plain_view = open_app("attention_maps")
        for key in ("maps_layer", "maps_head"):
            assert at.selectbox(key=key).value == plain_view.selectbox(key=key).value, key
    assert at.text_input(key="temperatures").value == "0.5, 1, 1.5, 2"
    assert at.radio(key="mode").value == "in-model"


@pytest.mark.parametrize(("query", "widget", "key", "value"), [
    ({"window": "8"}, "number_input", "window", 8), ({"layer": "2", "head": "1"}, "selectbox", "maps_head", 1),
    ({"layer": "2"}, "selectbox", "maps_layer", 2), ({"t": "0.3,3"}, "text_input", "temperatures", "0.3, 3"),
    ({"mode": "isolated"}, "radio", "mode", "isolated"), ({"log": "1"}, "toggle", "maps_log", True),
    ({"statistic": "top_ratio"}, "selectbox", "maps_statistic", "top_ratio"),
])
def test_a_valid_link_seeds_its_widget_and_stays_in_the_url(tiny_env, query, widget, key, value):
    at = open_app("attention_maps", query=query)
    assert_clean(at)
    assert getattr(at, widget)(key=key).value == value
    for name, raw in query.items():
        assert at.query_params[name] == raw, (name, at.query_params[name])


def test_script_text_is_data_everywhere(tiny_env):
    at = open_app("attention_maps")
    at.text_area(key="maps_text").set_value(SCRIPT).run()
    assert_clean(at)
    figure = chart(at, "maps_heatmaps")
    ticks = figure["layout"]["xaxis"]["ticktext"]
    assert "".join(ticks).count("&lt;") >= 2 and "<script" not in str(figure) and "<img" not in str(figure)


def test_markup_in_an_error_message_is_escaped(tiny_env):
    at = open_app("softmax_lab")
    at.text_input(key="temperatures").set_value("**bold**[x](javascript:alert(1)):red[hi]").run()
    assert not at.exception
    message = at.sidebar.error[0].value  # the first bad entry is quoted back, every markup character escaped
    assert "\\*\\*bold\\*\\*\\[x\\]\\(javascript\\:alert\\(1\\)\\)\\:red\\[hi\\]" in message


def test_plain_escapes_every_markdown_and_html_character():
    assert plain("<b>*a*</b> [l](u) `c` :red[x] $y$ #h") == (
        "\\<b\\>\\*a\\*\\</b\\> \\[l\\]\\(u\\) \\`c\\` \\:red\\[x\\] \\$y\\$ \\#h")


def test_huge_text_is_cut_with_a_note(tiny_env):
    at = open_app("attention_maps")
    at.text_area(key="maps_text").set_value("All work and no play. " * 50_000).run()  # 1.1 MB
    assert_clean(at)
    assert any("cut to its first 256 tokens" in info.value for info in at.info)


def test_odd_scripts_and_controls_draw(tiny_env):
    at = open_app("collapse_inspector")
    at.text_area(key="collapse_text").set_value("emoji 🙂🚀 CJK 注意力温度 RTL שלום مرحبا \x00\x07\x1b[31m end").run()
    assert_clean(at)
    at.text_input(key="collapse_answer").set_value("**[x](javascript:alert(1))**").run()
    assert_clean(at)


def test_a_broken_model_in_the_operators_list_is_an_error_line(tiny_env):
    tiny_env.setenv("ATTN_MODELS", "tiny-random,/no/such/model")
    at = open_app("attention_maps")
    assert_clean(at)
    at.selectbox(key="model").set_value("/no/such/model").run()
    assert not at.exception
    assert any("does not exist" in error.value for error in at.error)


def test_work_budget_cuts_a_request_before_it_runs(tiny_env, monkeypatch):
    monkeypatch.setattr("components.serving.settings.MAX_WORK", 600)
    at = open_app("collapse_inspector")
    assert_clean(at)
    assert any("at most 600 tokens x temperatures" in info.value and "cut to 150 tokens" in info.value
               for info in at.info)


def cached_bytes() -> dict[str, int]:
    stats = get_data_cache_stats_provider().get_stats()
    return {stat.cache_name: stat.byte_length for family in stats.values() for stat in family}


def test_report_caches_keep_a_bounded_number_of_entries(tiny_env):
    at = open_app("attention_maps")
    cached_report_with_maps.clear()
    sizes = []
    for index in range(8):  # eight different requests of the same size
        at.text_input(key="temperatures").set_value(f"{0.5 + index / 10:g}, 2").run()
        assert_clean(at)
        sizes.append(sum(size for name, size in cached_bytes().items() if "cached_report_with_maps" in name))
    one_entry = sizes[0]
    assert one_entry > 0
    assert sizes[3] == pytest.approx(4 * one_entry, rel=0.1), sizes  # four kept ...
    assert max(sizes) <= 4.4 * one_entry, sizes  # ... and never more (max_entries=4), whatever comes next
    cached_report.clear()
