"""The Softmax lab's charts: the weights of one query's keys at each temperature, the weight ratio of two keys
against T, and the entropy of the weights against T."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from components.present.figures.base import SLIDER_COLOUR, colour, log_ticks, side_by_side
from components.present.margins import FULL_WIDTH, NARROWEST, fit, text_px
from components.present.text import ratio_text
from model_utils.core.softmax import entropy, entropy_curve, softmax_with_temperature, top_gap, weight_ratio


def weight_bars(scores: Sequence[float], temperatures: Sequence[float], slider: float | None = None,
                width: int = FULL_WIDTH) -> go.Figure:
    """One bar chart of softmax(scores / T) per temperature, side by side on a shared 0..1 axis.

    The compared temperatures keep their colours (their order in `temperatures`); a `slider` temperature not
    among them comes first, in grey."""
    scores = np.asarray(scores, dtype=np.float64)
    keys = [f"k{i}" for i in range(len(scores))]
    panels = [(t, colour(i), f"T = {t:g}") for i, t in enumerate(temperatures)]
    if slider is not None and slider not in temperatures:
        panels.insert(0, (slider, SLIDER_COLOUR, f"slider T = {slider:g}"))
    weights = [softmax_with_temperature(scores, t) for t, _, _ in panels]
    figure = side_by_side([name for _, _, name in panels], shared_yaxes=True, horizontal_spacing=0.03)
    for title, w in zip(figure.layout.annotations, weights, strict=True):
        title.text += f"<br>top {w.max():.2f} · H {entropy(w):.2f}"  # two short lines: 7 panels fit side by side
    for column, ((_, bar_colour, name), w) in enumerate(zip(panels, weights, strict=True), start=1):
        figure.add_trace(go.Bar(x=keys, y=w, name=name, marker_color=bar_colour, customdata=scores,
                                hovertemplate="key %{x}<br>score %{customdata:g}<br>weight %{y:.4f}<extra></extra>"),
                         row=1, col=column)
    figure.update_yaxes(range=[0, 1], title_text="attention weight", row=1, col=1)
    figure.update_layout(showlegend=False, height=350, margin={"t": 60, "b": 30}, bargap=0.15)
    figure.update_annotations(font_size=12)
    figure.add_annotation(xref="paper", yref="paper", x=0, y=1, yshift=36, xanchor="left", yanchor="bottom",
                          showarrow=False, font_size=12,
                          text=f"top: the largest weight · H: the entropy, how spread the weights are (0: one key "
                               f"takes all; ln {len(scores)} = {math.log(len(scores)):.2f}: spread evenly)")
    return fit(figure, width)


RATIO_TOP = 6  # the ratio axis's last decade: beyond a million every curve just says "all the weight on the top key"
LABEL_PX, LABEL_ROW_PX, LABEL_GAP_PX = 12, 22, 8  # the marker labels: font, box height, room around a box


def ratio_curves(scores: Sequence[float] = (5.0, 0.0), marked_temperatures: Sequence[float] = (1.0, 2.0),
                 current: float | None = None, width: int = FULL_WIDTH) -> go.Figure:
    """The top key's weight over the runner-up's, exp(gap / T) for the `scores`' top gap, against T on log-log axes,
    with its value at each marked temperature (gap 5: 148x at T = 1, 12.2x at T = 2) in labels set where the curve
    leaves them room (marker_labels)."""
    gap = top_gap(scores)
    every = [*marked_temperatures, *([] if current is None else [current])]
    low, high = min(0.1, *every), max(10.0, *every)
    temperatures = np.geomspace(low, high, 200)
    shown = temperatures[gap / temperatures / math.log(10) <= RATIO_TOP + 1]  # past the top the curve has left
    ratios = np.exp(gap / shown)  # at most 10^7: no overflow
    figure = go.Figure(go.Scatter(x=shown, y=ratios, mode="lines", name=f"score gap {gap:g}",
                                  line={"color": "black"}, customdata=[ratio_text(float(r)) for r in ratios],
                                  hovertemplate="T %{x:.3g}<br>ratio %{customdata}<extra></extra>"))
    for t in marked_temperatures:
        ratio = float(weight_ratio(gap, t))
        if math.log10(ratio) <= RATIO_TOP:
            figure.add_trace(go.Scatter(x=[t], y=[ratio], mode="markers", marker={"size": 10, "color": "black"},
                                        showlegend=False, hoverinfo="skip"))
    if current is not None:
        # the label is a separate annotation: on a log axis plotly places a vline's own label at 10^x (plotly #2580)
        figure.add_vline(x=current, line_dash="dot", line_color="grey")
        where = math.log(current / low) / math.log(high / low)  # 0 at the left edge, 1 at the right
        figure.add_annotation(x=math.log10(current), y=1, xref="x", yref="y domain", yanchor="bottom",
                              xanchor="left" if where < 0.15 else "right" if where > 0.85 else "center",
                              showarrow=False, text=f"slider T = {current:g}")  # kept within the chart's width
    ticks = log_ticks(low, high)
    figure.update_xaxes(type="log", title_text="temperature T", range=[math.log10(low), math.log10(high)],
                        tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    decades = [10.0**k for k in range(RATIO_TOP + 1)]
    figure.update_yaxes(type="log", title_text="weight ratio exp(gap / T)", range=[-0.25, RATIO_TOP + 0.25],
                        tickvals=decades, ticktext=[ratio_text(d) for d in decades])
    figure.update_layout(height=380, margin={"t": 40}, showlegend=False,
                         title_text=f"Top key over runner-up (score gap {gap:g})")
    fit(figure, width)
    for note in marker_labels(figure, gap, marked_temperatures, width):
        figure.add_annotation(note)
    return figure


def marker_labels(figure: go.Figure, gap: float, marked_temperatures: Sequence[float],
                  width: int) -> list[go.layout.Annotation]:
    """One label per marked temperature ('148x at T = 1') where the fitted `figure` leaves it room: side by side in
    the top right corner, or the bottom left where the curve passes through the top right, or stacked where a row
    is too wide. The curve falls as T grows, so a box clears it when the curve at the box's left edge is below it or
    the curve at its right edge is above it. Sizes are estimated at the narrowest window."""
    texts = [f"{ratio_text(float(weight_ratio(gap, t)))} at T = {t:g}" for t in marked_temperatures]
    (x_low, x_high), (y_low, y_high) = _log_ranges(figure)
    margin = figure.layout.margin
    x_per_px = (x_high - x_low) / (NARROWEST * width - margin.l - (margin.r or 0))
    y_per_px = (y_high - y_low) / (figure.layout.height - margin.t - margin.b)
    widths = [(text_px(text, LABEL_PX) + LABEL_GAP_PX) * x_per_px for text in texts]
    plot = (x_low + LABEL_GAP_PX * x_per_px, x_high - LABEL_GAP_PX * x_per_px,
            y_low + LABEL_GAP_PX * y_per_px, y_high - LABEL_GAP_PX * y_per_px)

    def clear(box: tuple[float, float, float, float]) -> bool:
        left, right, bottom, top = box
        inside = plot[0] <= left and right <= plot[1] and plot[2] <= bottom and top <= plot[3]
        return inside and (_log_ratio(gap, left) < bottom or _log_ratio(gap, right) > top)

    layouts = _label_layouts(widths, plot, LABEL_ROW_PX * y_per_px)
    boxes = next((layout for layout in layouts if all(map(clear, layout))), layouts[0])
    notes = []
    for t, text, (left, right, bottom, top) in zip(marked_temperatures, texts, boxes, strict=True):
        middle_x, middle_y, y = (left + right) / 2, (bottom + top) / 2, math.log10(float(weight_ratio(gap, t)))
        if y <= RATIO_TOP:
            notes.append(go.layout.Annotation(x=math.log10(t), y=y, axref="x", ayref="y", ax=middle_x, ay=middle_y,
                                              text=text, showarrow=True, arrowhead=2, font_size=LABEL_PX,
                                              bgcolor="rgba(255, 255, 255, 0.85)"))
        else:  # above the top of the chart: the label without an arrow
            notes.append(go.layout.Annotation(x=middle_x, y=middle_y, text=text, showarrow=False,
                                              font_size=LABEL_PX, bgcolor="rgba(255, 255, 255, 0.85)"))
    return notes


def _label_layouts(widths: Sequence[float], plot: tuple[float, float, float, float],
                   row: float) -> list[list[tuple[float, float, float, float]]]:
    """Boxes (left, right, bottom, top) for labels `widths` wide, in the order to try: a row in the top right, a row
    in the bottom left, a stack in the top right, a stack in the bottom left (the first label on top)."""
    left_end, right_end, bottom_end, top_end = plot
    ends = np.cumsum(widths)
    top_row = [(right_end - ends[-1] + end - w, right_end - ends[-1] + end, top_end - row, top_end)
               for w, end in zip(widths, ends, strict=True)]
    bottom_row = [(left_end + end - w, left_end + end, bottom_end, bottom_end + row)
                  for w, end in zip(widths, ends, strict=True)]
    top_stack = [(right_end - w, right_end, top_end - (i + 1) * row, top_end - i * row) for i, w in enumerate(widths)]
    bottom_stack = [(left_end, left_end + w, bottom_end + (len(widths) - 1 - i) * row,
                     bottom_end + (len(widths) - i) * row) for i, w in enumerate(widths)]
    return [top_row, bottom_row, top_stack, bottom_stack]


def _log_ratio(gap: float, log_temperature: float) -> float:
    """log10 exp(gap / T) at T = 10^log_temperature: the curve in the axes' log10 units."""
    return gap * math.log10(math.e) / 10**log_temperature


def _log_ranges(figure: go.Figure) -> tuple[tuple[float, float], tuple[float, float]]:
    """The ranges of the x and y axes as set: log10 units on log axes."""
    return tuple(figure.layout.xaxis.range), tuple(figure.layout.yaxis.range)


def entropy_curve_figure(scores: Sequence[float], marked_temperatures: Sequence[float] = (),
                         width: int = FULL_WIDTH) -> go.Figure:
    """Entropy of softmax(scores / T) against T, with its ceiling ln n (uniform attention) drawn in."""
    scores = np.asarray(scores, dtype=np.float64)
    temperatures = np.geomspace(0.05, 100.0, 240)
    curve = entropy_curve(scores, temperatures)
    ceiling = math.log(len(scores))
    figure = go.Figure(go.Scatter(x=temperatures, y=curve, mode="lines", name="entropy", line={"color": "black"},
                                  hovertemplate="T %{x:.2f}<br>H %{y:.3f} nats<extra></extra>"))
    figure.add_hline(y=ceiling, line_dash="dash", line_color="grey",
                     annotation_text=f"ln n = {ceiling:.2f}: uniform weights",
                     annotation_position="bottom left")
    for index, t in enumerate(marked_temperatures):
        value = float(entropy_curve(scores, [t])[0])
        figure.add_trace(go.Scatter(x=[t], y=[value], mode="markers", name=f"T = {t:g}",
                                    marker={"size": 11, "color": colour(index)},
                                    hovertemplate=f"T = {t:g}<br>H %{{y:.3f}} nats<extra></extra>"))
    ticks = log_ticks(temperatures[0], temperatures[-1])
    figure.update_xaxes(type="log", title_text="temperature T", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks],
                        range=np.log10(temperatures[[0, -1]]).tolist())
    figure.update_yaxes(title_text="entropy (nats)", range=[0, ceiling * 1.08])
    figure.update_layout(height=380, margin={"t": 30}, legend={"orientation": "h", "y": -0.2},
                         title_text="Entropy of the weights against T")
    return fit(figure, width)
