"""The Softmax lab's charts: the weights of one query's keys at each temperature, the weight ratio of two keys
against T, and the entropy of the weights against T."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from components.present.figures.base import SLIDER_COLOUR, colour, side_by_side
from components.present.margins import FULL_WIDTH, fit
from model_utils.core.softmax import entropy, entropy_curve, softmax_with_temperature, weight_ratio


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
    titles = [f"{name} · top {w.max():.2f} · H {entropy(w):.2f}" for (_, _, name), w in zip(panels, weights,
                                                                                              strict=True)]
    figure = side_by_side(titles, shared_yaxes=True, horizontal_spacing=0.03)
    for column, ((_, bar_colour, name), w) in enumerate(zip(panels, weights, strict=True), start=1):
        figure.add_trace(go.Bar(x=keys, y=w, name=name, marker_color=bar_colour, customdata=scores,
                                hovertemplate="key %{x}<br>score %{customdata:g}<br>weight %{y:.4f}<extra></extra>"),
                         row=1, col=column)
    figure.update_yaxes(range=[0, 1], title_text="attention weight", row=1, col=1)
    figure.update_layout(showlegend=False, height=330, margin={"t": 60, "b": 30}, bargap=0.15)
    figure.update_annotations(font_size=12)
    return fit(figure, width)


def ratio_curves(gaps: Sequence[float] = (1, 2, 5, 10), marked_gap: float = 5.0,
                 marked_temperatures: Sequence[float] = (1.0, 2.0), current: float | None = None,
                 width: int = FULL_WIDTH) -> go.Figure:
    """Weight ratio exp(gap / T) of a key over one `gap` lower, against T, on log-log axes, with the seed example
    (gap 5: 148x at T = 1, 12x at T = 2) marked."""
    temperatures = np.geomspace(0.1, 10.0, 200)
    figure = go.Figure()
    for index, gap in enumerate(gaps):
        figure.add_trace(go.Scatter(x=temperatures, y=weight_ratio(gap, 1.0) ** (1.0 / temperatures),
                                    mode="lines", name=f"score gap {gap:g}", line={"color": colour(index + 4)},
                                    hovertemplate=f"gap {gap:g}<br>T %{{x:.2f}}<br>ratio %{{y:.3g}}x<extra></extra>"))
    for t in marked_temperatures:
        ratio = float(weight_ratio(marked_gap, t))
        figure.add_trace(go.Scatter(x=[t], y=[ratio], mode="markers", marker={"size": 10, "color": "black"},
                                    showlegend=False, hoverinfo="skip"))
        figure.add_annotation(x=math.log10(t), y=math.log10(ratio), text=f"{ratio:.0f}x at T = {t:g}",
                              showarrow=True, arrowhead=2, ax=40, ay=-30)
    if current is not None:
        # the label is a separate annotation: on a log axis plotly places a vline's own label at 10^x (plotly #2580)
        figure.add_vline(x=current, line_dash="dot", line_color="grey")
        figure.add_annotation(x=math.log10(current), y=1, xref="x", yref="y domain", yanchor="bottom",
                              showarrow=False, text=f"slider T = {current:g}")
    figure.update_xaxes(type="log", title_text="temperature T")
    # up to a million: beyond it every curve just says "all the weight on the top key"
    figure.update_yaxes(type="log", title_text="weight ratio exp(gap / T)", exponentformat="power", range=[0, 6])
    figure.update_layout(height=380, margin={"t": 30}, legend={"orientation": "h", "y": -0.2},
                         title_text="Weight ratio of two keys against T")
    return fit(figure, width)


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
                     annotation_text=f"ln n = {ceiling:.2f}: uniform, the limit as T grows",
                     annotation_position="bottom left")
    for index, t in enumerate(marked_temperatures):
        value = float(entropy_curve(scores, [t])[0])
        figure.add_trace(go.Scatter(x=[t], y=[value], mode="markers", name=f"T = {t:g}",
                                    marker={"size": 11, "color": colour(index)},
                                    hovertemplate=f"T = {t:g}<br>H %{{y:.3f}} nats<extra></extra>"))
    figure.update_xaxes(type="log", title_text="temperature T")
    figure.update_yaxes(title_text="entropy (nats)", range=[0, ceiling * 1.08])
    figure.update_layout(height=380, margin={"t": 30}, legend={"orientation": "h", "y": -0.2},
                         title_text="Entropy of the weights against T")
    return fit(figure, width)
