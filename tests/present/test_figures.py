"""Unit tests of the pure figure functions: small numpy inputs in, assertions on `fig.data` and `fig.layout` out.

No model, no streamlit. Text checks go through `plotly_rendered`, which decodes a label the way plotly.js does before
it puts the label into the SVG, so "what the user sees" can be asserted without a browser.
"""

import json
import math
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from components.present.figures.base import (
    LOG_DECADES,
    MASS_COLOURS,
    PALETTE,
    SLIDER_COLOUR,
    colour,
    display_token,
    log_ticks,
)
from components.present.figures.context import (
    RECIPE_COLOURS,
    SCHEDULE_COLOURS,
    best_temperatures,
    distance_heatmaps,
    pass_heatmap,
    position_lines,
    recipe_style,
    sweep_styles,
)
from components.present.figures.maps import (
    attention_heatmaps,
    distance_bin_names,
    distance_profile,
    head_grids,
    hidden_keys,
    last_query_bars,
    layer_lines,
    mass_bars,
    outcome_bars,
)
from components.present.figures.schedules import schedule_curves, schedule_figure
from components.present.figures.softmax import entropy_curve_figure, ratio_curves, weight_bars
from components.present.margins import CHAR_EM, FULL_WIDTH, HALF_WIDTH, NARROWEST, text_px
from components.present.text import ratio_text
from model_utils.core.records.sweep import BestEntry
from model_utils.core.schedules import Schedule
from model_utils.core.softmax import entropy, softmax_with_temperature, top_gap
from model_utils.core.statistics import STATISTIC_LABELS, distance_bins, mass_by_distance

HOSTILE_TOKENS = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>"]

# plotly.js's `convertEntities` (its SVG text utilities) decodes only these named entities plus numeric ones;
# anything else, e.g. "&quot;", is drawn literally.
_PLOTLY_ENTITIES = {"mu": "μ", "amp": "&", "lt": "<", "gt": ">", "nbsp": "\xa0", "times": "×", "plusmn": "±",
                    "deg": "°"}
_ENTITY = re.compile(r"&(#\d+|#x[\da-fA-F]+|[a-z]+);")


def plotly_rendered(text: str) -> str:
    """The characters plotly.js draws for a text label (tags aside): its entity decoding, in one pass."""

    def decode(match: re.Match) -> str:
        inner = match.group(1)
        if inner.startswith("#x"):
            return chr(int(inner[2:], 16))
        if inner.startswith("#"):
            return chr(int(inner[1:]))
        return _PLOTLY_ENTITIES.get(inner, match.group(0))

    return _ENTITY.sub(decode, text)


def causal_maps(n: int, temperatures=(0.5, 1.0, 2.0), seed: int = 0) -> list[np.ndarray]:
    """Row-stochastic lower-triangular attention maps (zero above the diagonal), one per temperature."""
    scores = np.random.default_rng(seed).normal(scale=2.0, size=(n, n))
    maps = []
    for t in temperatures:
        masked = np.where(np.tril(np.ones((n, n), dtype=bool)), scores / t, -np.inf)
        weights = np.exp(masked - masked.max(axis=1, keepdims=True))
        maps.append(weights / weights.sum(axis=1, keepdims=True))
    return maps


def annotation_texts(fig: go.Figure) -> list[str]:
    return [annotation.text for annotation in fig.layout.annotations]


# --- weight_bars ------------------------------------------------------------------------------------------------


def test_weight_bars_one_bar_trace_per_temperature_on_a_shared_unit_axis():
    scores = [5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    temperatures = [0.5, 1.0, 2.0]
    fig = weight_bars(scores, temperatures)

    assert [trace.type for trace in fig.data] == ["bar"] * 3
    assert [trace.xaxis for trace in fig.data] == ["x", "x2", "x3"]
    assert [trace.name for trace in fig.data] == ["T = 0.5", "T = 1", "T = 2"]
    assert [trace.marker.color for trace in fig.data] == list(PALETTE[:3])
    for trace, t in zip(fig.data, temperatures, strict=True):
        weights = np.asarray(trace.y)
        assert list(trace.x) == [f"k{i}" for i in range(8)]
        assert weights.sum() == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(weights, softmax_with_temperature(scores, t), rtol=1e-12)
        assert weights[0] / weights[1] == pytest.approx(math.exp(5.0 / t))
        np.testing.assert_array_equal(trace.customdata, scores)
    # one 0..1 weight axis shared by every panel, so panels compare by eye
    assert tuple(fig.layout.yaxis.range) == (0, 1)
    assert fig.layout.yaxis2.matches == "y" and fig.layout.yaxis3.matches == "y"
    assert fig.layout.showlegend is False
    # each panel is titled with its temperature, then its top weight and entropy H (gap 5 at T = 2: top 0.64)
    titles, (note,) = annotation_texts(fig)[:3], annotation_texts(fig)[3:]
    for title, t in zip(titles, temperatures, strict=True):
        weights = softmax_with_temperature(scores, t)
        assert title == f"T = {t:g}<br>top {weights.max():.2f} · H {entropy(weights):.2f}"
    # and H is said once, above the panels, with its bounds for these 8 keys
    assert "H: the entropy, how spread the weights are" in note and "ln 8 = 2.08" in note


def test_weight_bars_titles_fit_their_panels_with_six_temperatures_and_the_slider():
    fig = weight_bars([5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.25, 0.5, 1, 1.5, 2, 4], slider=0.35)
    plot = NARROWEST * FULL_WIDTH - fig.layout.margin.l - fig.layout.margin.r
    pitch = plot * (1 - 6 * 0.03) / 7 + plot * 0.03  # seven panels, 3% of the plot between two: centre to centre
    titles = [note for note in fig.layout.annotations if note.xanchor == "center"]
    assert len(titles) == 7
    widest = max(text_px(line, 12, CHAR_EM) for note in titles for line in note.text.split("<br>"))
    assert widest < pitch  # two neighbouring titles, each centred on its panel, do not meet


def test_weight_bars_slider_temperature_gets_its_own_grey_panel_only_when_new():
    scores = [2.0, 1.0, 0.0]
    fig = weight_bars(scores, [0.5, 2.0], slider=3.0)
    assert [trace.name for trace in fig.data] == ["slider T = 3", "T = 0.5", "T = 2"]
    assert [trace.marker.color for trace in fig.data] == [SLIDER_COLOUR, PALETTE[0], PALETTE[1]]
    np.testing.assert_allclose(fig.data[0].y, softmax_with_temperature(scores, 3.0))
    # the compared temperatures keep their colours whether or not the slider adds a panel
    same = weight_bars(scores, [0.5, 2.0], slider=2.0)
    assert [trace.name for trace in same.data] == ["T = 0.5", "T = 2"]
    assert [trace.marker.color for trace in same.data] == [PALETTE[0], PALETTE[1]]


# --- ratio_curves -----------------------------------------------------------------------------------------------


def marker_notes(fig: go.Figure) -> dict[str, go.layout.Annotation]:
    return {note.text: note for note in fig.layout.annotations if " at T = " in note.text}


def test_ratio_curves_are_exp_gap_over_t_and_mark_the_seed_example():
    fig = ratio_curves([5.0, 0.0, 0.0, 0.0])  # the default: gap 5, 148x at T = 1 and 12.2x at T = 2
    (line,) = [trace for trace in fig.data if trace.mode == "lines"]
    assert line.name == "score gap 5" and fig.layout.title.text == "Top key over runner-up (score gap 5)"
    t = np.asarray(line.x)
    assert t.max() == pytest.approx(10.0) and list(fig.layout.xaxis.range) == pytest.approx([-1.0, 1.0])
    np.testing.assert_allclose(line.y, np.exp(5.0 / t), rtol=1e-9)
    assert np.log10(np.asarray(line.y)).max() <= 7  # cut where the curve has left the chart, never inf
    assert list(line.customdata[:1]) == [ratio_text(float(line.y[0]))]  # the hover says the ratio as a class would

    markers = [trace for trace in fig.data if trace.mode == "markers"]
    assert [(trace.x[0], trace.y[0]) for trace in markers] == [
        (1.0, pytest.approx(math.exp(5.0))), (2.0, pytest.approx(math.exp(2.5)))]
    notes = marker_notes(fig)
    assert list(notes) == ["148x at T = 1", "12.2x at T = 2"]
    # annotations on log axes take log10 coordinates: the arrow must point at the marker
    assert (notes["148x at T = 1"].x, notes["148x at T = 1"].y) == (0.0, pytest.approx(5.0 * math.log10(math.e)))
    assert notes["12.2x at T = 2"].x == pytest.approx(math.log10(2.0))
    assert notes["12.2x at T = 2"].y == pytest.approx(2.5 * math.log10(math.e))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert not fig.layout.shapes  # no slider line unless asked for


def test_ratio_curves_follow_the_users_top_gap_not_a_fixed_one():
    fig = ratio_curves([3.0, 2.0, 1.0, 0.0])  # the top key over the runner-up: gap 1
    (line,) = [trace for trace in fig.data if trace.mode == "lines"]
    np.testing.assert_allclose(line.y, np.exp(1.0 / np.asarray(line.x)), rtol=1e-9)
    assert list(marker_notes(fig)) == ["2.72x at T = 1", "1.65x at T = 2"]
    assert "gap 5" not in str(fig.layout) and not any("148x" in text for text in annotation_texts(fig))


def label_boxes(fig: go.Figure, width: int) -> list[tuple[float, float, float, float]]:
    """Each marker label's box (left, right, bottom, top) in log10 units, as wide as the narrowest window draws it
    (text_px at 12 px) and one text line high, around the label's centre (its arrow's tail, or its own x, y)."""
    margin = fig.layout.margin
    (x_low, x_high), (y_low, y_high) = fig.layout.xaxis.range, fig.layout.yaxis.range
    x_per_px = (x_high - x_low) / (NARROWEST * width - margin.l - margin.r)
    y_per_px = (y_high - y_low) / (fig.layout.height - margin.t - margin.b)
    boxes = []
    for note in marker_notes(fig).values():
        x, y = (note.ax, note.ay) if note.showarrow else (note.x, note.y)
        half_width, half_height = text_px(note.text, 12) / 2 * x_per_px, 9 * y_per_px
        boxes.append((x - half_width, x + half_width, y - half_height, y + half_height))
    return boxes


@pytest.mark.parametrize("scores", [[5, 0, 0, 0], [3, 2, 1, 0], [1, 1, 0], [0.2, 0], [8, 0], [13, 0], [20, 0],
                                    [40, 0], [1000, 0]])
@pytest.mark.parametrize("width", [HALF_WIDTH, FULL_WIDTH])
def test_ratio_labels_stay_apart_and_off_the_curve_inside_the_plot(scores, width):
    """The labels of the marked temperatures never overlap each other or the curve, whatever the gap (the "148x at
    T = 1" label used to sit on another gap's curve); a marker off the top of the chart gets a label, no arrow.
    Gap 40 at half width: the labels ("2.35 × 10¹⁷x at T = 1") are too wide for a row and are stacked."""
    fig = ratio_curves(scores, current=1.0, width=width)
    boxes = label_boxes(fig, width)
    assert len(boxes) == 2
    (x_low, x_high), (y_low, y_high) = fig.layout.xaxis.range, fig.layout.yaxis.range
    for left, right, bottom, top in boxes:
        assert x_low <= left and right <= x_high and y_low <= bottom and top <= y_high
    first, second = boxes
    assert first[1] < second[0] or second[3] < first[2]  # side by side, or the second below the first
    curve = fig.data[0]
    u, v = np.log10(np.asarray(curve.x, dtype=float)), np.log10(np.asarray(curve.y, dtype=float))
    for left, right, bottom, top in boxes:
        inside = (u >= left) & (u <= right)
        assert not np.any(inside & (v >= bottom) & (v <= top)), (scores, left, right)
    for note, t in zip(marker_notes(fig).values(), (1.0, 2.0), strict=True):
        on_chart = top_gap(scores) / t * math.log10(math.e) <= y_high
        assert note.showarrow == on_chart


def test_the_lab_axes_read_plain_numbers():
    """Plain ticks, not plotly's '5 0.1 2 5 1 2 5 10', and ratios as a class says them, not 10^6 or 2.2e+04."""
    fig = ratio_curves([5.0, 0.0])
    assert list(fig.layout.xaxis.tickvals) == [0.1, 0.2, 0.5, 1, 2, 5, 10]
    assert list(fig.layout.xaxis.ticktext) == ["0.1", "0.2", "0.5", "1", "2", "5", "10"]
    assert list(fig.layout.yaxis.ticktext) == ["1x", "10x", "100x", "1,000x", "10,000x", "100,000x", "1,000,000x"]
    assert fig.layout.margin.r >= text_px("10", 12) / 2  # the last tick sits on the plot's edge: not cut in half
    entropy_ticks = entropy_curve_figure([5.0, 0.0]).layout.xaxis
    assert list(entropy_ticks.ticktext) == ["0.1", "0.3", "1", "3", "10", "30", "100"]


@pytest.mark.parametrize(("low", "high", "ticks"), [(0.1, 10, [0.1, 0.2, 0.5, 1, 2, 5, 10]),
                                                   (0.05, 100, [0.1, 0.3, 1, 3, 10, 30, 100]),
                                                   (0.001, 100, [0.001, 0.01, 0.1, 1, 10, 100]),
                                                   (0.3, 4, [0.5, 1, 2])])
def test_log_ticks_are_round_numbers_within_the_range(low, high, ticks):
    assert log_ticks(low, high) == ticks


@pytest.mark.parametrize("current", [0.5, 2.0, 5.0])
def test_ratio_curves_slider_line_and_its_label_sit_at_the_same_temperature(current):
    fig = ratio_curves(current=current)
    (line,) = fig.layout.shapes
    assert line.xref == "x" and line.x0 == line.x1 == pytest.approx(current)  # shapes: data units, even on log axes
    label = next(a for a in fig.layout.annotations if a.text == f"slider T = {current:g}")
    # annotations on a log axis are placed in log10 units (plotly.js), so the label must say log10(current),
    # otherwise it is drawn at T = 10**current (off the 0.1..10 plot for current > 1)
    assert label.xref == "x"
    assert label.x == pytest.approx(math.log10(current))


@pytest.mark.parametrize(("current", "anchor"), [(0.1, "left"), (1.0, "center"), (8.9, "right"), (50.0, "right")])
def test_the_slider_label_stays_within_the_chart_near_its_edges(current, anchor):
    fig = ratio_curves(current=current)
    label = next(a for a in fig.layout.annotations if a.text == f"slider T = {current:g}")
    assert label.xanchor == anchor and label.x == pytest.approx(math.log10(current))
    assert fig.layout.xaxis.range[1] == pytest.approx(math.log10(max(current, 10.0)))  # the axis reaches it


# --- entropy_curve_figure ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("scores", [[5.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [3.0, -1.0, 0.5, 2.0, 2.0, -4.0]])
def test_entropy_curve_has_its_ln_n_ceiling_and_never_exceeds_it(scores):
    marked = [0.5, 1.0, 2.0]
    fig = entropy_curve_figure(scores, marked)
    ceiling = math.log(len(scores))

    curve = fig.data[0]
    h = np.asarray(curve.y)
    assert curve.name == "entropy" and len(h) == len(curve.x)
    assert np.all(h <= ceiling + 1e-12) and np.all(h >= -1e-12)
    assert np.all(np.diff(h) >= -1e-9)  # entropy never falls as T grows
    np.testing.assert_allclose(h, [entropy(softmax_with_temperature(scores, t)) for t in curve.x], rtol=1e-12)

    (line,) = fig.layout.shapes
    assert line.y0 == line.y1 == pytest.approx(ceiling)
    assert line.xref == "x domain"  # spans the whole width
    assert any(text.startswith(f"ln n = {ceiling:.2f}") for text in annotation_texts(fig))
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis.range[1] >= ceiling

    points = fig.data[1:]
    assert [trace.name for trace in points] == ["T = 0.5", "T = 1", "T = 2"]
    assert [trace.marker.color for trace in points] == list(PALETTE[:3])
    for trace, t in zip(points, marked, strict=True):
        assert trace.x[0] == t
        assert trace.y[0] == pytest.approx(float(entropy(softmax_with_temperature(scores, t))))
        assert trace.y[0] <= ceiling + 1e-12


# --- attention_heatmaps -----------------------------------------------------------------------------------------


def test_attention_heatmaps_share_one_colour_axis_and_blank_the_future():
    tokens = ["<s>", "The", " cat", " sat", "."]
    maps = causal_maps(5)
    maps[0] = maps[0] * 0.5  # panels with different maxima: the shared scale must cover the largest
    titles = ["T = 0.5", "T = 1", "T = 2"]
    fig = attention_heatmaps(maps, tokens, titles)

    assert [trace.type for trace in fig.data] == ["heatmap"] * 3
    assert [trace.xaxis for trace in fig.data] == ["x", "x2", "x3"]
    assert {trace.coloraxis for trace in fig.data} == {"coloraxis"}
    assert all(trace.zmin is None and trace.zmax is None for trace in fig.data)  # no per-panel scale
    assert fig.layout.coloraxis.cmin == 0.0
    assert fig.layout.coloraxis.cmax == pytest.approx(max(float(m.max()) for m in maps))

    upper = np.triu(np.ones((5, 5), dtype=bool), 1)
    for trace, weights in zip(fig.data, maps, strict=True):
        z = np.asarray(trace.z, dtype=np.float64)
        assert z.shape == (5, 5)
        assert np.all(np.isnan(z[upper])), "future keys must be blank (NaN), not 0"
        np.testing.assert_allclose(z[~upper], weights[~upper])
        assert list(trace.x) == list(range(5)) and list(trace.y) == list(range(5))
    assert annotation_texts(fig) == titles


def test_attention_heatmaps_label_axes_with_tokens_and_hover_with_query_key_weight():
    tokens = ["<s>", "a", "a", "\n", " b"]  # repeated and whitespace tokens stay distinct, visible ticks
    maps = causal_maps(5, temperatures=(1.0, 2.0))
    fig = attention_heatmaps(maps, tokens, ["T = 1", "T = 2"])
    labels = [display_token(token) for token in tokens]

    for axis in (fig.layout.xaxis, fig.layout.xaxis2, fig.layout.yaxis):
        assert axis.tickmode == "array"
        assert list(axis.tickvals) == [0, 1, 2, 3, 4]
        assert list(axis.ticktext) == labels
    assert fig.layout.yaxis.autorange == "reversed"  # query 0 on top
    assert fig.layout.xaxis.title.text == "key" and fig.layout.yaxis.title.text == "query"

    for trace, weights in zip(fig.data, maps, strict=True):
        custom = np.asarray(trace.customdata)
        assert custom.shape == (5, 5, 3)
        for q in range(5):
            for k in range(5):
                assert custom[q, k, 0] == labels[q]
                assert custom[q, k, 1] == labels[k]
                assert float(custom[q, k, 2]) == pytest.approx(weights[q, k], rel=1e-12, abs=1e-300)
        template = trace.hovertemplate
        assert "%{customdata[0]}" in template and "%{customdata[1]}" in template and "%{customdata[2]" in template


def test_attention_heatmaps_thin_out_tick_labels_on_long_texts():
    n = 100
    tokens = [f"t{i}" for i in range(n)]
    fig = attention_heatmaps(causal_maps(n, temperatures=(1.0,)), tokens, ["T = 1"])
    ticks = fig.layout.xaxis
    assert 20 <= len(ticks.tickvals) <= 40
    assert [ticks.ticktext[i] for i in range(len(ticks.tickvals))] == [tokens[v] for v in ticks.tickvals]


def test_attention_heatmaps_spare_the_browser_a_box_per_tick_label():
    """Every panel's axes let their labels be (the margins fit them): plotly's default measures each one's box."""
    fig = attention_heatmaps(causal_maps(100, temperatures=(1.0, 2.0, 3.0)), [f"t{i}" for i in range(100)],
                             ["T = 1", "T = 2", "T = 3"])
    axes = [fig.layout[name] for name in fig.layout if name.startswith(("xaxis", "yaxis"))]
    assert len(axes) == 8 and {axis.ticklabeloverflow for axis in axes} == {"allow"}  # 2 x 2 panels, one empty


@pytest.mark.parametrize("hostile", HOSTILE_TOKENS)
def test_attention_heatmaps_show_markup_tokens_only_escaped(hostile):
    tokens = ["<s>", "hi", hostile, "there"]
    fig = attention_heatmaps(causal_maps(4, temperatures=(1.0, 2.0)), tokens, [f"T = 1 {hostile}", "T = 2"])
    text = fig.to_json()
    assert "<script" not in text.lower()
    assert "<img" not in text.lower()
    assert "\\u003cscript" not in text.lower() and "\\u003cimg" not in text.lower()
    escaped = display_token(hostile)
    assert escaped.startswith("&lt;")
    assert escaped in fig.layout.xaxis.ticktext and escaped in fig.layout.yaxis.ticktext
    assert np.asarray(fig.data[0].customdata)[2, 0, 0] == escaped
    assert plotly_rendered(escaped) == hostile  # drawn as the literal token text
    assert fig.layout.annotations[0].text == f"T = 1 {escaped}"


def test_attention_heatmaps_log_colour_switches_to_log10_with_a_floor():
    weights = np.array([[1.0, 0.0, 0.0],
                        [1e-9, 1.0 - 1e-9, 0.0],
                        [0.01, 0.09, 0.9]])
    fig = attention_heatmaps([weights, weights], ["<s>", "x", "y"], ["T = 1", "T = 2"], log_colour=True)
    axis = fig.layout.coloraxis
    assert LOG_DECADES == 3 and axis.cmax == 0  # the largest weight, 1
    assert axis.cmin == pytest.approx(-3.0)  # three decades below it
    assert list(axis.colorbar.tickvals) == [-3, -2, -1, 0]
    assert list(axis.colorbar.ticktext) == ["1e-3", "1e-2", "1e-1", "1e0"]
    for trace in fig.data:
        assert trace.coloraxis == "coloraxis"
        z = np.asarray(trace.z, dtype=np.float64)
        assert z[1, 0] == pytest.approx(-3.0)  # 1e-9 shares the floor's colour
        assert z[2, 0] == pytest.approx(-2.0) and z[2, 2] == pytest.approx(math.log10(0.9))
        assert z[0, 0] == pytest.approx(0.0)
        assert np.isnan(z[0, 1]) and np.isnan(z[0, 2]) and np.isnan(z[1, 2])
        assert float(np.asarray(trace.customdata)[1, 0, 2]) == pytest.approx(1e-9)  # hover keeps the weight
    linear = attention_heatmaps([weights], ["<s>", "x", "y"], ["T = 1"])
    assert linear.layout.coloraxis.cmin == 0.0 and linear.layout.coloraxis.cmax == pytest.approx(1.0)
    assert float(np.asarray(linear.data[0].z, dtype=np.float64)[1, 0]) == pytest.approx(1e-9)


def test_the_log_colour_scale_follows_its_top_so_small_weights_stay_at_the_floor():
    """Maps whose largest weight is 0.2 (rows without a query that sees only itself): the scale spans 0.2 down to
    2e-4, a near-uniform row sits near the top and 1e-6 at the floor, not two thirds of the way up a 1e-6..1 scale."""
    weights = np.tile([0.2, 0.2, 0.2, 0.2, 0.2 - 1e-6, 1e-6], (6, 1))  # the upper triangle is blanked
    fig = attention_heatmaps([weights], list("abcdef"), ["T = 1"], log_colour=True)
    axis = fig.layout.coloraxis
    assert axis.cmax == pytest.approx(math.log10(0.2)) and axis.cmin == pytest.approx(math.log10(2e-4))
    assert list(axis.colorbar.tickvals) == [-3, -2, -1]
    z = np.asarray(fig.data[0].z, dtype=np.float64)[5]
    assert z[0] == pytest.approx(axis.cmax) and z[5] == pytest.approx(axis.cmin)


# --- entropy_grids, mass_bars, distance_profile -----------------------------------------------------------------


def test_head_grids_share_a_zero_to_one_colour_axis():
    rng = np.random.default_rng(1)
    grids = [rng.uniform(0.0, 0.6, size=(3, 4)), rng.uniform(0.4, 1.0, size=(3, 4))]
    fig = head_grids(grids, ["T = 0.5", "T = 2"])
    assert [trace.type for trace in fig.data] == ["heatmap", "heatmap"]
    assert {trace.coloraxis for trace in fig.data} == {"coloraxis"}
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    for trace, grid in zip(fig.data, grids, strict=True):
        np.testing.assert_array_equal(trace.z, grid)
        assert list(trace.x) == [0, 1, 2, 3] and list(trace.y) == [0, 1, 2]
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.yaxis2.autorange == "reversed"
    assert annotation_texts(fig) == ["T = 0.5", "T = 2"]
    assert fig.layout.coloraxis.colorbar.title.text.replace("<br>", " ") == STATISTIC_LABELS["normalized_entropy"]


def test_head_grids_draw_top_ratio_in_log10_and_say_it_is_a_geometric_mean():
    grids = [np.array([[1.0, 10.0], [100.0, 1e4]]), np.array([[2.0, 3.0], [1e6, 1.5]])]
    fig = head_grids(grids, ["T = 0.5", "T = 2"], "top_ratio")
    for trace, grid in zip(fig.data, grids, strict=True):
        np.testing.assert_allclose(trace.z, np.log10(grid))
        np.testing.assert_array_equal(trace.customdata, grid)  # the hover shows the ratio itself
        assert "geometric mean over queries" in trace.hovertemplate
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == pytest.approx(6.0)
    title = fig.layout.coloraxis.colorbar.title.text.replace("<br>", " ")
    assert title.startswith("log10 of the ") and "geometric mean" in title


def test_head_grids_scale_the_entropy_to_its_largest_value():
    grids = [np.full((2, 2), 1.5), np.full((2, 2), 3.25)]
    fig = head_grids(grids, ["T = 1", "T = 4"], "entropy")
    assert fig.layout.coloraxis.cmax == pytest.approx(3.25)
    assert "nats" in fig.layout.coloraxis.colorbar.title.text


def test_mass_bars_stack_sink_distant_recent_in_every_panel():
    rng = np.random.default_rng(2)
    masses = []
    for _ in range(3):
        parts = rng.dirichlet([1.0, 1.0, 1.0], size=4)  # 4 layers, the three parts add up to 1
        masses.append({"sink": parts[:, 0], "distant": parts[:, 1], "recent": parts[:, 2]})
    fig = mass_bars(masses, ["T = 0.5", "T = 1", "T = 2"])

    assert fig.layout.barmode == "stack"
    assert len(fig.data) == 9
    for panel, parts in enumerate(masses):
        traces = fig.data[3 * panel : 3 * panel + 3]
        axis = "x" if panel == 0 else f"x{panel + 1}"
        assert [trace.name for trace in traces] == ["sink", "distant", "recent"]
        assert {trace.xaxis for trace in traces} == {axis}
        assert [trace.marker.color for trace in traces] == [MASS_COLOURS[p] for p in ("sink", "distant", "recent")]
        assert all(trace.showlegend is (panel == 0) for trace in traces)  # one legend entry per part
        for trace in traces:
            np.testing.assert_array_equal(trace.y, parts[trace.name])
            assert list(trace.x) == [0, 1, 2, 3]
        np.testing.assert_allclose(sum(np.asarray(trace.y) for trace in traces), 1.0)
    assert tuple(fig.layout.yaxis.range) == (0, 1)
    assert fig.layout.yaxis2.matches == "y" and fig.layout.yaxis3.matches == "y"


def test_distance_profile_one_line_per_label_over_log_bins():
    edges = distance_bins(10)
    rng = np.random.default_rng(3)
    rows = [rng.dirichlet(np.ones(10)) for _ in range(3)]
    profiles = [mass_by_distance(row, edges) for row in rows]
    labels = ["T = 0.5", "T = 1", "qwen <logn>"]
    fig = distance_profile(profiles, edges, labels)

    assert len(fig.data) == 3
    assert [trace.name for trace in fig.data] == ["T = 0.5", "T = 1", "qwen &lt;logn&gt;"]
    assert [trace.line.color for trace in fig.data] == list(PALETTE[:3])
    for trace, profile in zip(fig.data, profiles, strict=True):
        assert trace.mode == "lines+markers"
        assert list(trace.x) == ["0", "1", "2-3", "4-7", "8-15"]
        np.testing.assert_array_equal(trace.y, profile)
        assert sum(trace.y) == pytest.approx(1.0)
    assert fig.layout.xaxis.type == "category"
    assert "<logn>" not in fig.to_json()


def test_layer_lines_one_line_per_temperature_with_the_statistics_label():
    values = [np.array([0.2, 0.5, 0.7]), np.array([0.4, 0.8, 0.95])]
    fig = layer_lines(values, ["T = 1", "T = <2>"], "normalized_entropy", reference=0.9, reference_text="near uniform")
    assert [trace.name for trace in fig.data] == ["T = 1", "T = &lt;2&gt;"]
    assert [trace.line.color for trace in fig.data] == list(PALETTE[:2])
    for trace, series in zip(fig.data, values, strict=True):
        assert trace.mode == "lines+markers" and list(trace.x) == [0, 1, 2]
        np.testing.assert_array_equal(trace.y, series)
    (line,) = fig.layout.shapes
    assert line.y0 == line.y1 == 0.9 and annotation_texts(fig) == ["near uniform"]
    title = fig.layout.yaxis.title.text.replace("<br>", " ")
    assert title == f"{STATISTIC_LABELS['normalized_entropy']} mean of heads"
    assert fig.layout.yaxis.type is None and fig.layout.yaxis.rangemode == "tozero"
    assert fig.layout.xaxis.title.text == "layer"
    assert "<2>" not in fig.to_json()


def test_layer_lines_of_top_ratio_are_geometric_means_on_a_log_axis():
    fig = layer_lines([np.array([3.0, 150.0, 2e5])], ["T = 1"], "top_ratio")
    assert fig.layout.yaxis.type == "log"
    assert fig.layout.yaxis.title.text.replace("<br>", " ") == (
        "top / runner-up weight ratio (geometric mean over queries) geometric mean of heads")
    assert not fig.layout.shapes  # no reference line unless asked for


def test_hidden_keys_are_the_future_and_keys_before_a_sliding_window():
    np.testing.assert_array_equal(hidden_keys(4), np.triu(np.ones((4, 4), dtype=bool), 1))
    banded = hidden_keys(5, sliding_span=2)  # query q sees keys q - 1 and q
    np.testing.assert_array_equal(~banded, [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0],
                                            [0, 0, 0, 1, 1]])


def test_attention_heatmaps_blank_the_keys_outside_a_sliding_window():
    n, window = 6, 3
    maps = causal_maps(n, temperatures=(1.0,))
    banded = np.where(hidden_keys(n, window), 0.0, maps[0])
    banded /= banded.sum(axis=1, keepdims=True)
    z = np.asarray(attention_heatmaps([banded], list("abcdef"), ["T = 1"], sliding_span=window).data[0].z,
                   dtype=np.float64)
    assert np.all(np.isnan(z[hidden_keys(n, window)])), "keys outside the window are blank, not weight 0"
    np.testing.assert_allclose(z[~hidden_keys(n, window)], banded[~hidden_keys(n, window)])
    # without the window the same zeros would be drawn as weight 0, the darkest colour
    unbanded = np.asarray(attention_heatmaps([banded], list("abcdef"), ["T = 1"]).data[0].z, dtype=np.float64)
    assert unbanded[5, 0] == 0.0


# --- outcome_bars ---------------------------------------------------------------------------------------------


def test_outcome_bars_with_the_whole_answers_log_probability_has_two_panels():
    labels = ["T = 0.5", "T = 1", "T = 2"]
    fig = outcome_bars(labels, [3.1, 2.5, 4.0], [-12.18, -5.34, -20.5], answer="4817")
    assert len(fig.data) == 2
    loss, answer = fig.data
    assert (loss.xaxis, answer.xaxis) == ("x", "x2")
    assert list(loss.x) == labels and list(answer.x) == labels
    assert list(loss.y) == [3.1, 2.5, 4.0] and list(answer.y) == [-12.18, -5.34, -20.5]
    assert list(loss.text) == ["3.10", "2.50", "4.00"] and list(answer.text) == ["-12.18", "-5.34", "-20.50"]
    assert list(loss.marker.color) == list(PALETTE[:3]) == list(answer.marker.color)
    titles = [plotly_rendered(text) for text in annotation_texts(fig)]
    assert titles == ["loss (mean next-token NLL)", "log-probability of the whole answer: 4817"]


def test_outcome_bars_without_an_answer_has_one_panel():
    fig = outcome_bars(["T = 1", "qwen-logn"], [2.5, 2.4], None)
    assert len(fig.data) == 1
    assert list(fig.data[0].y) == [2.5, 2.4]
    assert annotation_texts(fig) == ["loss (mean next-token NLL)"]
    assert "xaxis2" not in fig.layout.to_plotly_json()


def test_outcome_bars_escape_the_answer_text():
    fig = outcome_bars(["T = 1"], [2.0], [-0.5], answer=HOSTILE_TOKENS[1])
    assert "<img" not in fig.to_json()
    assert plotly_rendered(annotation_texts(fig)[1]) == f"log-probability of the whole answer: {HOSTILE_TOKENS[1]}"


def test_outcome_bars_draw_a_quoted_answer_literally():
    fig = outcome_bars(["T = 1"], [2.0], [-0.5], answer='"Marigold"')
    assert plotly_rendered(annotation_texts(fig)[1]) == 'log-probability of the whole answer: "Marigold"'


# --- last_query_bars ------------------------------------------------------------------------------------------


def test_last_query_bars_put_recent_and_fact_side_by_side_and_the_sink_apart():
    labels = ["T=0.5", "T=1", "T=2"]
    fig = last_query_bars(labels, [0.45, 0.41, 0.2], [0.01, 0.0003, None], [0.4, 0.38, 0.1], 32)
    recent, fact, sink = fig.data
    assert [trace.legendgroup for trace in fig.data] == ["recent", "fact", "sink"]
    assert (recent.xaxis, fact.xaxis, sink.xaxis) == ("x", "x", "x2")  # the sink in a panel of its own
    assert list(recent.y) == [0.45, 0.41, 0.2] and list(fact.y) == [0.01, 0.0003, None]
    assert list(fact.text) == ["0.01", "0.0003", ""] and list(sink.text) == ["0.40", "0.38", "0.10"]
    assert recent.marker.color == MASS_COLOURS["recent"] and sink.marker.color == MASS_COLOURS["sink"]
    assert fig.layout.barmode == "group" and fig.layout.yaxis2.matches == "y"
    assert annotation_texts(fig) == ["on the last 32 tokens and on the fact", "on the first token (the sink)"]
    no_fact = last_query_bars(labels, [0.4] * 3, [None] * 3, [0.3] * 3, 32)
    assert [trace.legendgroup for trace in no_fact.data] == ["recent", "sink"]


def test_distance_profile_draws_the_sink_apart_when_given():
    edges = distance_bins(10)
    profiles = [np.full(5, 0.1), np.full(5, 0.15)]
    fig = distance_profile(profiles, edges, ["T=1", "T=2"], sinks=[0.5, 0.25])
    lines, markers = fig.data[:2], fig.data[2:]
    assert [trace.xaxis for trace in lines] == ["x", "x"] and [trace.xaxis for trace in markers] == ["x2", "x2"]
    assert [list(trace.y) for trace in markers] == [[0.5], [0.25]] and list(markers[0].x) == ["sink"]
    assert [trace.marker.color for trace in markers] == list(PALETTE[:2])
    assert not any(trace.showlegend for trace in markers)  # one legend entry per temperature, from its line


# --- schedule_curves ------------------------------------------------------------------------------------------


def test_schedule_curves_plot_the_temperature_one_over_m():
    lengths = np.array([1, 10, 100, 1000, 10000])
    multipliers = {"yarn (s = 4)": np.full(5, 1.295), "qwen-logn (L = 100)": np.array([1.0, 1.0, 1.0, 1.5, 2.0])}
    fig = schedule_curves(lengths, multipliers)

    assert [trace.name for trace in fig.data] == list(multipliers)
    for trace, values in zip(fig.data, multipliers.values(), strict=True):
        np.testing.assert_array_equal(trace.x, lengths)
        np.testing.assert_allclose(trace.y, 1.0 / values)
    shown = np.concatenate([np.asarray(trace.y) for trace in fig.data])
    assert np.all(shown <= 1.0)  # published schedules sharpen: T = 1 / m <= 1
    (line,) = fig.layout.shapes
    assert line.y0 == line.y1 == 1.0
    assert annotation_texts(fig) == ["T = 1 (unchanged)"]
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.yaxis.title.text.startswith("temperature T")


# --- display_token --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("token", "shown"), [
    ("hello", "hello"),
    (" ", "␣"),
    ("   ", "␣␣␣"),
    ("\n", "↵"),
    ("\n\n", "↵↵"),
    ("\t", "⇥"),
    ("\r\n", "␍↵"),
    ("", "∅"),
    ("a\nb", "a↵b"),
    ("end\t", "end⇥"),
    ("\x00", "\\x00"),
    ("x\x1b[31m", "x\\x1b[31m"),
    ("\x7f", "\\x7f"),
    ("a\x0bb", "a\\x0bb"),
    ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("a & b", "a &amp; b"),
])
def test_display_token_makes_whitespace_and_controls_visible_and_escapes_html(token, shown):
    assert display_token(token) == shown


@pytest.mark.parametrize("token", ["\x00", "\x01", "\x08", "\x1b", "\x7f", " \x00", "a\x0cb"])
def test_display_token_leaves_no_raw_control_character(token):
    label = display_token(token)
    assert label
    assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in label)


@pytest.mark.parametrize("token", [*HOSTILE_TOKENS, "<b>bold</b>", "a<br>b", "&lt;", "it's", '"', 'say "hi"', "x&y"])
def test_display_token_is_drawn_by_plotly_as_the_literal_token(token):
    label = display_token(token)
    assert "<" not in label and ">" not in label  # no tag can reach plotly's pseudo-HTML
    assert plotly_rendered(label) == token


def test_plotly_json_of_a_figure_is_valid_and_uses_the_shared_palette():
    fig = weight_bars([1.0, 2.0, 3.0], [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 90, 100])
    data = json.loads(fig.to_json())["data"]
    assert len(data) == 11
    assert [trace["marker"]["color"] for trace in data] == [colour(i) for i in range(11)]
    assert len(set(PALETTE)) == len(PALETTE) == 10  # ten temperatures, ten colours (a sweep's grid)
    assert data[10]["marker"]["color"] == PALETTE[0]  # then the palette wraps around


def test_schedule_figure_draws_each_schedule_at_its_knob():
    schedules = [Schedule("logn", 1024), Schedule("qwen-logn", 1024)]
    fig = schedule_figure(schedules, longest=4096)
    assert [trace.name for trace in fig.data] == ["logn (base=1024)", "qwen-logn (train_length=1024)"]
    lengths = np.asarray(fig.data[0].x)
    assert lengths[0] == 1 and lengths[-1] == 4096 and np.all(np.diff(lengths) > 0)
    for trace, schedule in zip(fig.data, schedules, strict=True):
        with np.errstate(divide="ignore"):  # log-n's m = 0 for one key: T infinite
            np.testing.assert_allclose(trace.y, 1.0 / schedule.multipliers(4096)[lengths - 1])
    logn = np.asarray(fig.data[0].y)
    assert np.all(logn[lengths < 1024] > 1.0) and np.all(logn[lengths > 1024] < 1.0)  # T = 1 at n = base


# --- the context-length page ------------------------------------------------------------------------------------

BUCKETS = [[1, 256], [256, 512], [512, 768], [768, 1024], [1024, 1280]]  # aligned at multiples of 256, from q = 1
SWEEP_LABELS = ["T=0.8", "T=1", "T=1.25", "yarn (scale=2)", "logn (base=1024)"]
SWEEP_TEMPERATURES = [0.8, 1.0, 1.25, None, None]
SWEEP_SCHEDULES = [None, None, None, "yarn", "logn"]  # each result's schedule name


def trained_lines(fig: go.Figure) -> list:
    return [shape for shape in fig.layout.shapes if shape.x0 == shape.x1 and shape.line.dash == "dash"]


def test_sweep_styles_keep_the_palette_for_temperatures_and_dash_the_schedules():
    styles = sweep_styles(SWEEP_TEMPERATURES, SWEEP_SCHEDULES)
    assert [style["color"] for style in styles[:3]] == list(PALETTE[:3])  # in the order they were run
    assert [style["dash"] for style in styles[:3]] == ["solid"] * 3
    assert styles[1]["width"] > styles[0]["width"] == styles[2]["width"]  # T = 1, the reference, stands out
    assert all(style["dash"] != "solid" for style in styles[3:])
    # each schedule has its own colour, never a temperature's, whatever the number of temperatures
    assert styles[3]["color"] == SCHEDULE_COLOURS[0] and styles[4]["color"] == SCHEDULE_COLOURS[4]
    assert not set(SCHEDULE_COLOURS) & set(PALETTE)
    many = sweep_styles([0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, None], [None] * 8 + ["yarn"])
    assert len({style["color"] for style in many}) == 9


def test_position_lines_put_each_bucket_at_its_middle_and_draw_the_trained_length():
    values = [np.linspace(2.0, 3.0, 5) + i for i in range(5)]
    styles = sweep_styles(SWEEP_TEMPERATURES, SWEEP_SCHEDULES)
    fig = position_lines(BUCKETS, values, SWEEP_LABELS, styles, 1024, "mean NLL")
    assert [trace.name for trace in fig.data] == SWEEP_LABELS
    for trace, series, style in zip(fig.data, values, styles, strict=True):
        np.testing.assert_allclose(trace.x, [128.0, 383.5, 639.5, 895.5, 1151.5])  # positions start..stop-1
        np.testing.assert_array_equal(trace.y, series)
        assert trace.line.color == style["color"] and trace.line.dash == style["dash"]
        assert trace.customdata[0] == "positions 1-255" and trace.customdata[-1] == "positions 1,024-1,279"
    (line,) = trained_lines(fig)
    assert line.x0 == 1024 and "trained length 1,024" in annotation_texts(fig)
    assert fig.layout.xaxis.title.text == "query position (tokens)" and fig.layout.yaxis.title.text == "mean NLL"


def test_position_lines_draw_interval_bands_in_the_lines_colour_only_where_given():
    values = [np.array([2.0, 2.1, 2.2, 2.5, 2.9]), np.array([2.1, 2.0, 2.3, 2.4, 2.6])]
    low_high = (values[0] - 0.1, values[0] + 0.2)
    styles = sweep_styles([1.0, None], ["T=1", "yarn (scale=2)"])
    fig = position_lines(BUCKETS, values, ["T=1", "yarn (scale=2)"], styles, None, "NLL",
                         intervals=[low_high, None])
    high, low, line, schedule = fig.data  # the band's upper edge, then its lower edge filled up to it
    np.testing.assert_array_equal(high.y, low_high[1])
    np.testing.assert_array_equal(low.y, low_high[0])
    assert low.fill == "tonexty" and low.fillcolor == "rgba(31,119,180,0.15)"  # PALETTE[0] at BAND_ALPHA
    assert high.showlegend is False and low.showlegend is False and line.name == "T=1"
    assert "interval 1.900 to 2.200" in line.customdata[0]
    assert schedule.name == "yarn (scale=2)" and schedule.fill is None
    assert not trained_lines(fig) and not annotation_texts(fig)  # no trained length known: no line


def test_position_lines_of_top_ratio_use_a_log_axis():
    fig = position_lines(BUCKETS[:2], [np.array([3.0, 30.0])], ["T=1"], [{"color": PALETTE[0]}], 1024,
                         "ratio", log_y=True)
    assert fig.layout.yaxis.type == "log"


def test_distance_bin_names_label_the_log_spaced_bins():
    assert distance_bin_names([0, 1, 2, 4, 8, 16]) == ["0", "1", "2-3", "4-7", "8-15"]


def test_distance_heatmaps_share_one_scale_and_span_each_buckets_positions():
    edges = [0, 1, 2, 4, 8, 16]
    rng = np.random.default_rng(5)
    profiles = [rng.dirichlet(np.ones(5), size=len(BUCKETS)) for _ in range(2)]  # [bucket, bin], rows sum to 1
    fig = distance_heatmaps(profiles, edges, BUCKETS, ["T=1", "T=<1.25>"], 1024)
    assert [trace.type for trace in fig.data] == ["heatmap", "heatmap"]
    for trace, profile in zip(fig.data, profiles, strict=True):
        np.testing.assert_array_equal(trace.z, profile.T)  # y = distance bin, x = position
        assert list(trace.x) == [1, 256, 512, 768, 1024, 1280]  # bucket edges: each column spans its positions
        assert list(trace.y) == ["0", "1", "2-3", "4-7", "8-15"]
        assert trace.coloraxis == "coloraxis"
        np.testing.assert_allclose(np.asarray(trace.z).sum(axis=0), 1.0)
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == max(p.max() for p in profiles)
    assert [line.x0 for line in trained_lines(fig)] == [1024, 1024]  # on both panels
    assert annotation_texts(fig)[:2] == ["T=1", "T=&lt;1.25&gt;"]
    assert annotation_texts(fig).count("trained length 1,024") == 2


def test_best_temperatures_draw_the_interval_as_error_bars_around_the_best():
    best = [BestEntry(bucket=tuple(bucket), temperature=t, nll=2.0, nll_at_1=2.0 + 0.01 * i,
                      temperature_interval=interval, saved=0.01 * i, saved_interval=(0.0, 0.02 * i), positions=256)
            for i, (bucket, t, interval) in enumerate(zip(BUCKETS, [1.0, 1.25, 1.25, 0.8, 0.8],
                                                          [(0.8, 1.25), (1.0, 1.25), (1.25, 1.25), (0.8, 1.0),
                                                           (0.8, 0.8)], strict=True))]
    fig = best_temperatures(BUCKETS, best, [0.8, 1.0, 1.25], 1024)
    (points,) = fig.data
    np.testing.assert_array_equal(points.y, [1.0, 1.25, 1.25, 0.8, 0.8])
    np.testing.assert_allclose(points.error_y.array, [0.25, 0.0, 0.0, 0.2, 0.0])  # up to the interval's top
    np.testing.assert_allclose(points.error_y.arrayminus, [0.2, 0.25, 0.0, 0.0, 0.0])  # down to its bottom
    assert points.error_y.symmetric is False
    assert "best T 1.25, interval 1 to 1.25" in points.customdata[1] and "saves 0.010" in points.customdata[1]
    reference = [shape for shape in fig.layout.shapes if shape.y0 == shape.y1 == 1.0]
    assert len(reference) == 1 and "T = 1" in annotation_texts(fig)
    assert [line.x0 for line in trained_lines(fig)] == [1024]
    assert list(fig.layout.yaxis.tickvals) == [0.8, 1.0, 1.25]  # only the temperatures tried can be best


def test_a_recipes_passes_share_its_colour_darker_when_sharper_lighter_when_softer():
    temperatures = [0.8, 1.0, None, 1.0, 0.9, 1.0, 1.1, 1.0]
    labels = ["T=0.8", "T=1", "yarn (scale=2)", "yarn (s=2) + T=1", "yarn-rope (s=2) + T=0.9", "yarn-rope (s=2) + T=1",
              "yarn-rope (s=2) + T=1.1", "linear (s=2) + T=1"]
    recipes = [None, None, None, "yarn (s=2)", "yarn-rope (s=2)", "yarn-rope (s=2)", "yarn-rope (s=2)", "linear (s=2)"]
    styles = sweep_styles(temperatures, labels, recipes)
    assert styles[:3] == sweep_styles(temperatures[:3], labels[:3])  # the model's own positions as before
    yarn, sharper, rope_one, softer, linear = styles[3:]
    assert (yarn["color"], rope_one["color"], linear["color"]) == RECIPE_COLOURS[:3]  # in order of first use
    assert yarn["dash"] == rope_one["dash"] == "solid" and rope_one["width"] > sharper["width"]
    assert sharper["dash"] == "dot" and softer["dash"] == "dash"

    def brightness(colour: str) -> int:
        return sum(int(colour[i : i + 2], 16) for i in (1, 3, 5))

    assert brightness(sharper["color"]) < brightness(rope_one["color"]) < brightness(softer["color"])
    assert not set(RECIPE_COLOURS) & (set(PALETTE) | set(SCHEDULE_COLOURS))
    assert recipe_style(None, "#1b9e77")["dash"] == "dashdot"  # a schedule on a recipe
    far = recipe_style(0.5, "#1b9e77")
    assert far["color"] == "#082f24"  # 70% of the way to black at most: still the recipe's hue


def test_pass_heatmap_draws_one_row_per_pass_over_the_positions():
    values = np.array([[0.0, 0.0, 0.0, 0.0, 0.2], [0.0, 0.0, 0.0, 0.0, 0.05]])
    fig = pass_heatmap(BUCKETS, values, ["T=1", "yarn (s=2) + <T=1>"], 1024, "untrained-distance mass",
                       title="every pass")
    (cells,) = fig.data
    np.testing.assert_array_equal(cells.z, values)
    assert list(cells.x) == [1, 256, 512, 768, 1024, 1280]  # each bucket spans its own positions
    assert list(cells.y) == ["T=1", "yarn (s=2) + &lt;T=1&gt;"]  # labels escaped, first pass on top
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.yaxis.type == "category"
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 0.2
    assert [line.x0 for line in trained_lines(fig)] == [1024]
    assert fig.layout.height == 150 + 22 * 2 and fig.layout.title.text == "every pass"
    assert "positions 1,024-1,279" in cells.customdata[0][-1]
    empty = pass_heatmap(BUCKETS[:1], np.zeros((1, 1)), ["T=1"], None, "mass")
    assert empty.layout.coloraxis.cmax > 0  # an all-zero chart still has a colour scale


def test_the_reach_chart_marks_a_reach_between_its_measured_distances_as_read_between_points():
    from components.present.retrieval import reach_chart, view_styles
    from model_utils.core.reach import REACH_SHARE
    from model_utils.core.records.retrieval import Curve, Reach
    from model_utils.core.records.spread import Spread
    from model_utils.core.views import View

    distances = (512, 1024, 2048, 4096)
    table = np.array([[3.0, 2.8, 1.8, 0.5], [3.0, 2.9, 1.0, 0.4]])
    reach = Reach.of(distances, ["a", "b"], table)
    mean = tuple(float(v) for v in table.mean(axis=0))
    curve = Curve(view=View(1.0), distances=distances, gain=mean, low=mean, high=mean, spread=Spread.RANGE,
                  share=tuple(g / mean[0] for g in mean), planted_loss=mean, unplanted_loss=mean, copy_mass=mean,
                  reach=reach)
    figure = reach_chart([curve], view_styles([View(1.0)]), 8192, REACH_SHARE)
    segment, diamond = figure.data[-2], figure.data[-1]
    assert reach.between == (1024, 2048) and tuple(segment.x) == (1024, 2048)
    assert segment.line.dash == "dot" and "both measured" in segment.hovertemplate
    assert diamond.marker.symbol == "diamond-open" and 1024 < diamond.x[0] < 2048
    assert "read between those points, not measured" in diamond.hovertemplate
