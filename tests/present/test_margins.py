"""present/margins.py: margins estimated from a figure alone, so that plotly's automargin finds nothing to grow
and draws each chart once. Whether the estimates hold in a real browser is the browser test's job (every
default page); here: the estimates' arithmetic, and that every figure of the app carries them."""

import math

import numpy as np
import plotly.graph_objects as go
import pytest

from components.present import margins
from components.present.figures.context import best_temperatures, distance_heatmaps, position_lines, sweep_styles
from components.present.figures.maps import (
    attention_heatmaps,
    distance_profile,
    head_grids,
    last_query_bars,
    layer_lines,
    mass_bars,
    outcome_bars,
)
from components.present.figures.schedules import schedule_figure
from components.present.figures.softmax import entropy_curve_figure, ratio_curves, weight_bars
from components.present.margins import (
    LEGEND_PAD,
    LEGEND_ROW,
    fit,
    left_margin,
    legend_rows,
    linear_labels,
    text_px,
)
from model_utils.core.records.sweep import BestEntry
from model_utils.core.schedules import Schedule


def lines_figure(names, y_title="entropy (nats)", height=380, top=30, legend_y=-0.25):
    figure = go.Figure([go.Scatter(x=[0, 1, 2], y=[0.1, 0.5, 0.9], name=name) for name in names])
    figure.update_yaxes(title_text=y_title)
    figure.update_xaxes(title_text="layer")
    figure.update_layout(height=height, margin={"t": top}, legend={"orientation": "h", "y": legend_y})
    return figure


def test_linear_labels_are_plotly_like_steps_with_their_decimals():
    assert linear_labels(0.0, 1.0, 250) == ["0", "0.2", "0.4", "0.6", "0.8", "1"]
    assert linear_labels(0.0, 29.0, 400)[-1] in {"28", "25"}  # integer steps: no "27.5"
    assert linear_labels(0.0, 40000.0, 300)[-1] == "40k"  # plotly's default exponent format
    assert "−0.4" in linear_labels(-1.0, 1.0, 300)  # plotly draws a minus sign, as wide as a digit


def test_text_width_counts_the_longest_line_and_no_markup():
    assert text_px("ab<br>abcd", 10) == text_px("abcd", 10)
    assert text_px("<b>ab</b>", 10) == text_px("ab", 10)
    assert text_px("&lt;", 10) == text_px("<", 10)


def test_the_left_margin_grows_with_the_tick_labels_and_each_title_line():
    one_line = left_margin(lines_figure(["a"]))
    two_lines = left_margin(lines_figure(["a"], y_title="entropy<br>mean of heads"))
    untitled = left_margin(lines_figure(["a"], y_title=None))
    assert untitled < one_line < two_lines
    assert two_lines - one_line == pytest.approx(margins.LINE_EM * margins.TITLE_PX)
    wide = lines_figure(["a"])
    wide.data[0].y = [1000.5, 2000.25, 3000.125]
    assert left_margin(wide) > one_line


def test_a_legend_fits_one_row_when_its_entries_do_else_a_grid_of_the_widest():
    assert legend_rows(lines_figure(["T=1", "T=2"]), 400) == 1
    long_names = [f"schedule number {i} (a long knob=8192)" for i in range(6)]
    widest = margins.LEGEND_SYMBOL + text_px(long_names[0], margins.TICK_PX, margins.WORD_EM)
    assert legend_rows(lines_figure(long_names), 400) == math.ceil(6 / max(1, int(400 // widest)))
    grouped = lines_figure(["sink", "sink", "recent"])
    for trace in grouped.data:
        trace.legendgroup = trace.name
    assert legend_rows(grouped, 400) == 1 and len([t for t in grouped.data if t.legendgroup == "sink"]) == 2
    assert legend_rows(lines_figure(["only one"]), 400) == 0  # plotly shows no legend for a single trace


@pytest.mark.parametrize(("legend_y", "entries"), [(-0.2, 8), (-0.3, 8), (-0.25, 14)])
def test_a_legend_below_the_plot_sits_under_the_axis_title_and_inside_the_figure(legend_y, entries):
    """Whatever paper y the caller gave it: the legend's top comes after the x axis's labels and title (a legend of
    four rows at y = -0.25 once covered the title of the Context length page's loss chart), and its rows end
    above the figure's bottom edge; a figure too short for that grows."""
    figure = fit(lines_figure([f"a long legend entry {i}" for i in range(entries)], height=420, top=40,
                              legend_y=legend_y), margins.HALF_WIDTH)
    plot_width = margins.HALF_WIDTH - figure.layout.margin.l - figure.layout.margin.r
    axis, _ = margins._axis_and_legend(figure, plot_width, None)
    plot_height = figure.layout.height - 40 - figure.layout.margin.b
    legend_top = -figure.layout.legend.y * plot_height
    assert figure.layout.legend.yanchor == "top"
    assert legend_top >= axis
    box = LEGEND_PAD + LEGEND_ROW * legend_rows(figure, plot_width)
    assert figure.layout.margin.b - legend_top >= box - 1e-9
    assert plot_height >= margins.MIN_PLOT and legend_rows(figure, plot_width) > 1


def test_a_colour_bar_and_its_title_take_room_on_the_right():
    grids = [np.random.default_rng(0).random((4, 3)) for _ in range(2)]
    plain = fit(head_grids(grids, ["T=1", "T=2"], "sink_mass"))
    titled = fit(head_grids(grids, ["T=1", "T=2"], "normalized_entropy"))
    lines = fit(lines_figure(["a", "b"]))
    assert lines.layout.margin.r == 0  # nothing reaches past the plot: Streamlit's theme's 0 stays
    assert 0 < plain.layout.margin.r < titled.layout.margin.r


def test_labels_that_plotly_turns_get_room_below_and_to_the_right():
    labels = ["T=0.5", "T=1", "qwen-logn (train_length=8192)"]
    narrow = outcome_bars(labels, [3.0, 2.5, 2.6], None, width=margins.HALF_WIDTH)
    short = outcome_bars(["T=0.5", "T=1", "T=2"], [3.0, 2.5, 2.6], None, width=margins.HALF_WIDTH)
    assert narrow.layout.margin.b > short.layout.margin.b
    assert narrow.layout.margin.r > short.layout.margin.r == 0


@pytest.mark.parametrize(("axis_type", "values", "last", "room"), [
    ("log", [0.1, 1.0, 10.0], 10.0, True), ("log", [0.1, 1.0, 10.0], 5.0, False), ("linear", [0, 50, 100], 100, True),
])
def test_the_last_tick_label_on_the_right_edge_gets_half_its_width(axis_type, values, last, room):
    """A number at the plot's right edge is centred on it: half of '100' would be cut at the figure's edge."""
    figure = go.Figure(go.Scatter(x=values, y=[1, 2, 3]))
    ticks = [t for t in values if t <= last]
    end = math.log10(values[-1]) if axis_type == "log" else values[-1]
    figure.update_xaxes(type=axis_type, range=[math.log10(values[0]) if axis_type == "log" else values[0], end],
                        tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    fit(figure, margins.HALF_WIDTH)
    half = margins.text_px(f"{last:g}", margins.TICK_PX) / 2
    assert (figure.layout.margin.r >= half) == room, figure.layout.margin


def test_a_long_title_over_the_last_panel_gets_room_on_the_right():
    parts = [{part: np.arange(3.0) / 10 for part in ("sink", "distant", "recent")}] * 2
    short = mass_bars(parts, ["T=1", "T=2"])
    long = mass_bars(parts, ["T=1", "qwen-logn (train_length=8192), a schedule with a long name"])
    assert short.layout.margin.r == 0
    title = long.layout.annotations[-1]
    half = margins.text_px(title.text, title.font.size, margins.WORD_EM) / 2
    plot = margins.NARROWEST * margins.FULL_WIDTH - long.layout.margin.l  # the narrowest plot it is fitted for
    assert long.layout.margin.r >= half - (1 - title.x) * plot > 0


def every_figure(width):
    rng = np.random.default_rng(1)
    maps = [np.tril(rng.random((6, 6))) for _ in range(2)]
    buckets = [[0, 4], [4, 8]]
    best = [BestEntry(bucket=(0, 4), temperature=1.0, nll=2.0, nll_at_1=2.0, saved=0.0,
                      temperature_interval=(0.9, 1.1), saved_interval=(0.0, 0.1), positions=4)] * 2
    edges = np.array([0, 1, 2, 4, 8])
    return {
        "weight_bars": weight_bars([1.0, 2.0, 0.5], [1.0, 2.0], width=width),
        "ratio_curves": ratio_curves(width=width),
        "entropy_curve_figure": entropy_curve_figure([1.0, 2.0, 0.5], [1.0], width=width),
        "attention_heatmaps": attention_heatmaps(maps, list("abcdef"), ["T=1", "T=2"], width=width),
        "head_grids": head_grids([rng.random((3, 2))] * 2, ["T=1", "T=2"], width=width),
        "mass_bars": mass_bars([{part: rng.random(3) for part in ("sink", "distant", "recent")}] * 2,
                               ["T=1", "T=2"], width=width),
        "distance_profile": distance_profile([rng.random(4)] * 2, edges, ["T=1", "T=2"], width=width),
        "layer_lines": layer_lines([rng.random(3)] * 2, ["T=1", "T=2"], "entropy", width=width),
        "outcome_bars": outcome_bars(["T=1", "T=2"], [2.0, 3.0], [-0.1, -0.2], "x", width=width),
        "last_query_bars": last_query_bars(["T=1", "T=2"], [0.4, 0.3], [0.02, None], [0.3, 0.2], 32, width=width),
        "distance_profile_sink_apart": distance_profile([rng.random(4)] * 2, edges, ["T=1", "T=2"],
                                                        sinks=[0.3, 0.2], width=width),
        "schedule_figure": schedule_figure([Schedule("logn", 1024)], longest=4096, width=width),
        "position_lines": position_lines(buckets, [rng.random(2)] * 2, ["T=1", "T=2"],
                                         sweep_styles([1.0, 2.0], ["T=1", "T=2"]), 4, "loss",
                                         width=width),
        "distance_heatmaps": distance_heatmaps([rng.random((2, 4))] * 2, edges, buckets, ["T=1", "T=2"], 4,
                                               width=width),
        "best_temperatures": best_temperatures(buckets, best, [0.9, 1.0, 1.1], 4, width=width),
    }


@pytest.mark.parametrize("width", [margins.FULL_WIDTH, margins.HALF_WIDTH])
def test_every_figure_sets_all_its_margins_and_keeps_its_top(width):
    for name, figure in every_figure(width).items():
        margin = figure.layout.margin
        assert None not in (margin.l, margin.r, margin.b, margin.t), (name, margin)
        assert margin.l > 0 and margin.b > 0, name  # Streamlit's theme would leave l at 0 for automargin to grow
        assert margin.t <= 60, name  # the caller's top margin, not the estimate's


def test_fitting_a_fitted_figure_again_changes_nothing():
    by_hand = entropy_curve_figure([1.0, 2.0, 0.5], [1.0], width=margins.HALF_WIDTH)
    again = fit(go.Figure(by_hand), margins.HALF_WIDTH)
    assert again.layout.margin == by_hand.layout.margin
