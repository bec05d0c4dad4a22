"""The app end to end in-process with streamlit's AppTest, on the tiny random model (ATTN_MODEL=tiny-random).

Each test opens the app, switches to a page, changes widgets by key and checks that the page neither raises nor shows
an error, and that its charts reflect the input. User mistakes must become an error line, never an exception.
"""

import numpy as np
import pytest

import components.cache
from components.cache import cached_answer_token, cached_report, cached_report_with_maps
from model_utils import Schedule, analyze
from model_utils.analysis import answer_token
from tests.apptest import PAGES, TITLES, array, assert_clean, chart, open_app, panel_titles, traces


@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_without_error_and_draws_charts(tiny_env, page):
    at = open_app(page)
    assert_clean(at)
    assert at.get("plotly_chart"), f"{page} drew no chart"
    assert [title.value for title in at.title] == [TITLES[page]]
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


# --- what the pages say is what the report measured ---------------------------------------------------------------


def sidebar_temperatures(at) -> list[float]:
    return [float(t) for t in at.text_input(key="temperatures").value.split(",")]


def test_maps_numbers_average_every_row_of_the_map_but_the_first(tiny_env, tiny):
    """The maps page asks for q_start = 1: its titles, grid and captions describe the n - 1 rows drawn below row 0
    (the engine's default would start at the recent window, q = 32, leaving 32 rows of the map out)."""
    at = open_app("attention_maps")
    assert_clean(at)
    text = at.text_area(key="maps_text").value
    expected = analyze(tiny, text, temperatures=sidebar_temperatures(at), window=32, q_start=1, max_tokens=256)
    n = expected.n_tokens
    assert n > 32
    captions = [caption.value for caption in at.caption]
    averaged = f"the {n - 1:,} queries at positions 1 to {n - 1:,}"
    assert any(f"Every statistic averages {averaged}" in caption for caption in captions), captions
    maps_caption = next(caption for caption in captions if caption.startswith("Mode: "))
    assert ("The number in each title is the mean of the 4 heads' normalized entropies H / ln(visible keys), each "
            f"averaged over {averaged} (every row of the map but row 0, which sees only itself); it is not the "
            "entropy of the averaged map drawn.") in maps_caption
    assert "Blank cells are keys the query cannot see (later keys)." in maps_caption
    grids = traces(chart(at, "maps_grid"), "heatmap")
    for grid, result in zip(grids, expected.results, strict=True):
        np.testing.assert_allclose(array(grid["z"]), result.heads["normalized_entropy"], rtol=1e-5, atol=1e-6)
    titles = panel_titles(chart(at, "maps_heatmaps"))
    for title, result in zip(titles, expected.results, strict=True):
        assert title == f"{result.label} · mean of heads' H / ln(visible keys) " \
                        f"{result.layer_mean('normalized_entropy')[1]:.2f}"

    at.selectbox(key="maps_head").set_value(2).run()
    assert_clean(at)
    maps_caption = next(caption.value for caption in at.caption if caption.value.startswith("Mode: "))
    assert maps_caption.endswith(f"head 2's normalized entropy H / ln(visible keys), averaged over {averaged} "
                                 "(every row of the map but row 0, which sees only itself).")
    titles = panel_titles(chart(at, "maps_heatmaps"))
    for title, result in zip(titles, expected.results, strict=True):
        assert title.endswith(f"H / ln(visible keys) {result.heads['normalized_entropy'][1, 2]:.2f}")


def test_maps_grid_shows_any_statistic_with_its_label(tiny_env):
    at = open_app("attention_maps")
    at.selectbox(key="maps_statistic").set_value("top_ratio").run()
    assert_clean(at)
    grid = chart(at, "maps_grid")
    assert "geometric mean" in grid["layout"]["coloraxis"]["colorbar"]["title"]["text"]
    assert all(array(trace["customdata"]).min() >= 1.0 for trace in traces(grid, "heatmap"))  # ratios, drawn in log10
    assert any("the geometric mean over the" in caption.value for caption in at.caption)


def test_downloads_explain_the_csv_columns(tiny_env):
    at = open_app("collapse_inspector")
    assert_clean(at)
    columns = next(caption.value for caption in at.caption if caption.value.startswith("JSON: "))
    assert "`top_ratio`: top / runner-up weight ratio (geometric mean over queries)" in columns
    assert "queries at positions 32 to 1,023" in columns  # the tiny model's 1,024 tokens, from the recent window on


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


def test_a_sliding_window_model_shows_its_band_and_says_what_the_masses_mean(tiny_env, architecture_folder):
    """gemma3_text: layers 0 and 2 see their last 8 keys, layer 1 every earlier key."""
    tiny_env.setenv("ATTN_MODEL", str(architecture_folder("gemma3_text")))
    at = open_app("attention_maps")
    assert_clean(at)
    facts = next(m.value for m in at.sidebar.markdown if "The model the pages describe" in m.value)
    assert "sliding window: 8 keys in 2 of 3 layers" in facts
    note = next(info.value for info in at.info if "sliding-window layers" in info.value)
    assert "In layers 0 and 2 a query sees only its last 8 keys" in note
    assert "its sink mass is 0" in note and "min(q + 1, 8)" in note
    assert "recent is every key it sees" in note  # the recent window (32) covers the layer's 8 keys
    assert "(later keys)." in next(caption.value for caption in at.caption if caption.value.startswith("Mode: "))

    def first_panel() -> np.ndarray:
        return array(chart(at, "maps_heatmaps")["data"][0]["z"]).astype(np.float64)

    n = first_panel().shape[0]
    queries, keys = np.arange(n)[:, None], np.arange(n)[None, :]
    full = first_panel()  # layer 1: causal only
    assert np.all(np.isnan(full[keys > queries])) and np.all(np.isfinite(full[keys <= queries]))
    at.selectbox(key="maps_layer").set_value(0).run()
    assert_clean(at)
    banded = first_panel()
    assert "(later keys and keys before this layer's window of 8)." in next(
        caption.value for caption in at.caption if caption.value.startswith("Mode: "))
    outside = (keys > queries) | (keys <= queries - 8)
    assert np.all(np.isnan(banded[outside])), "keys outside the window must be blank, as later keys are"
    assert np.all(np.isfinite(banded[~outside]))
    np.testing.assert_allclose(np.nansum(banded, axis=1), 1.0, atol=1e-5)


def test_collapse_answer_lookup_is_cached_and_never_reruns_the_model(tiny_env, tiny):
    cached_report.clear()
    cached_answer_token.clear()
    runs, lookups = [], []
    real_analyze, real_answer_token = components.cache.analyze, components.cache.answer_token
    tiny_env.setattr(components.cache, "analyze", lambda *a, **k: runs.append(1) or real_analyze(*a, **k))
    tiny_env.setattr(components.cache, "answer_token",
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


def schedule_caption(at, start: str) -> str:
    return next(caption.value for caption in at.caption if start in caption.value)


def schedule_table(at) -> dict[str, dict[str, str]]:
    frame = at.table[0].value
    return {row["schedule"]: row for row in frame.to_dict("records")}


def test_schedule_texts_follow_the_knobs(tiny_env):
    at = open_app("length_schedules")
    assert_clean(at)
    assert "Three curves coincide past 512 tokens" in schedule_caption(at, "coincide")
    assert schedule_table(at)["logn"]["multiplier m"].startswith("ln n / ln 512 ")

    for name in ("qwen-logn", "ssmax", "logn"):
        at.number_input(key=f"schedule_knob_{name}").set_value(1024.0)
    at.number_input(key="schedule_knob_llama4").set_value(4096.0)
    at.number_input(key="schedule_knob_yarn").set_value(16.0)
    at.run()
    assert_clean(at)
    caption = schedule_caption(at, "coincide")
    assert "Three curves coincide past 1,024 tokens" in caption and "s = 1 / ln 1024" in caption
    assert "shorter than its base, 1,024 tokens" in caption and "Llama 4's steps start at 4,096 tokens" in caption
    assert f"m = {(0.1 * np.log(16) + 1) ** 2:.3f} for s = 16" in caption
    assert "512" not in caption and "8,192" not in caption
    table = schedule_table(at)
    assert table["logn"]["multiplier m"].startswith("ln n / ln 1024 ")
    assert "log_1024(p + 1)" in table["qwen-logn"]["multiplier m"] and "1 / ln 1024" in table["ssmax"]["multiplier m"]
    assert "/ 4096)" in table["llama4"]["multiplier m"] and "s = 16" in table["yarn"]["multiplier m"]
    assert not any("512" in row["multiplier m"] or "8192" in row["multiplier m"] for row in table.values())

    at.number_input(key="schedule_knob_logn").set_value(2048.0).run()  # log-n leaves the other two
    assert_clean(at)
    caption = schedule_caption(at, "coincide")
    assert "Three curves" not in caption
    assert "Qwen's log-n and SSMax coincide past 1,024 tokens" in caption

    at.number_input(key="schedule_knob_ssmax").set_value(4096.0).run()  # now no two are equal
    assert "no two of Qwen's log-n (L = 1024), SSMax (L = 4096) and log-n (base 2048) coincide" in \
        schedule_caption(at, "coincide")


def test_schedule_table_and_caption_say_what_is_applied(tiny_env):
    at = open_app("length_schedules")
    table = schedule_table(at)
    assert set(table) == {"yarn", "qwen-logn", "llama4", "ssmax", "logn"}
    assert "RoPE interpolation" in table["yarn"]["applied here"] and "is not" in table["yarn"]["applied here"]
    assert "NoPE layers" in table["llama4"]["applied here"] and "every layer" in table["llama4"]["applied here"]
    at.selectbox(key="schedule_choice").set_value("yarn").run()
    assert_clean(at)
    assert "RoPE interpolation" in schedule_caption(at, "On this ")


def test_applied_schedule_caption_states_the_share_of_softer_queries(tiny_env):
    """log-n with base 512 runs softer than T = 1 for every query that sees fewer than 512 keys."""
    at = open_app("length_schedules")
    at.selectbox(key="schedule_choice").set_value("logn").run()
    assert_clean(at)
    measured = Schedule("logn", 512).multipliers(1024)[32:]  # the tiny model's 1,024 tokens, q_start = 32
    softer, sharper = np.mean(measured < 1), np.mean(measured > 1)
    assert 0.4 < softer < 0.6
    caption = schedule_caption(at, "On this ")
    assert caption.startswith("On this 1,024-token prompt, logn (base=512) is softer than T = 1 on "
                              f"{softer:.0%} of the measured queries and sharper on {sharper:.0%}")
    assert "over the 992 queries at positions 32 to 1,023" in caption
