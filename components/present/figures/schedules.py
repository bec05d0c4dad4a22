"""The Length schedules page's charts: each published schedule as the temperature it amounts to (T = 1 / m, the
schedules being published as logit multipliers m) against the context length, and the distance each remapping gives
a key against its distance in the text."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from components.present.figures.base import DASHES, colour, escape
from components.present.figures.context import RECIPE_COLOURS, TRAINED_COLOUR
from components.present.margins import FULL_WIDTH, fit
from model_utils.core.schedules import Schedule


def schedule_curves(lengths: np.ndarray, multipliers: dict[str, np.ndarray], width: int = FULL_WIDTH) -> go.Figure:
    """Each published schedule's temperature T = 1 / m (`multipliers`: its logit multipliers m) against context
    length, log x axis."""
    figure = go.Figure()
    for index, (name, values) in enumerate(multipliers.items()):
        with np.errstate(divide="ignore"):
            shown = 1.0 / values
        figure.add_trace(go.Scatter(x=lengths, y=shown, mode="lines", name=escape(name),
                                    line={"color": colour(index + 3), "dash": DASHES[index % len(DASHES)],
                                          "width": 3 - 0.4 * index},  # coinciding curves stay visible
                                    hovertemplate="n %{x:,.0f}<br>T %{y:.3f}<extra>" f"{escape(name)}</extra>"))
    figure.add_hline(y=1.0, line_dash="dot", line_color="grey", annotation_text="T = 1 (unchanged)")
    figure.update_xaxes(type="log", title_text="context length n (tokens; position p = n - 1)")
    figure.update_yaxes(title_text="temperature T  (below 1: sharper)")
    # log-n and SSMax start at m = 0 (T infinite) for one key; the interesting part is near 1
    figure.update_yaxes(range=[0, 2.5])
    figure.update_layout(height=400, margin={"t": 30}, legend={"orientation": "h", "y": -0.25})
    return fit(figure, width)


def schedule_figure(schedules: Sequence[Schedule], longest: int = 131072, width: int = FULL_WIDTH) -> go.Figure:
    """schedule_curves of `schedules` over 400 log-spaced context lengths from 1 to `longest` tokens."""
    lengths = np.unique(np.geomspace(1, longest, 400).round()).astype(int)
    curves = {schedule.label: schedule.multipliers(longest)[lengths - 1] for schedule in schedules}
    return schedule_curves(lengths, curves, width=width)


def remapped_distances(effective: dict[str, np.ndarray], trained_length: int, points: int = 600,
                       width: int = FULL_WIDTH) -> go.Figure:
    """One line per distance remapping (`effective`: label -> [n] the distance a query meets the key d tokens back
    at, index d, NaN where the key gets no weight) against the distance in the text, drawn at about `points`
    distances (every one near the ends, where the sinks and the window lie); the distances kept as they are
    (dotted) and the trained length (dashed) drawn in."""
    longest = max(len(values) for values in effective.values())
    step = max(1, longest // points)
    chosen = np.unique(np.r_[0:longest:step, 0:min(longest, 64), max(0, longest - 64):longest])
    figure = go.Figure(go.Scatter(x=[0, longest - 1], y=[0, longest - 1], mode="lines", name="no remapping",
                                  line={"color": TRAINED_COLOUR, "dash": "dot", "width": 1}, hoverinfo="skip"))
    for index, (label, values) in enumerate(effective.items()):
        kept = chosen[chosen < len(values)]
        figure.add_trace(go.Scatter(
            x=kept, y=values[kept], mode="lines+markers", marker={"size": 3}, name=escape(label),
            line={"color": RECIPE_COLOURS[index % len(RECIPE_COLOURS)], "width": 2}, connectgaps=False,
            hovertemplate="%{x:,} tokens back in the text<br>at distance %{y:,.4~f}<extra>" + escape(label)
                          + "</extra>"))
    figure.add_hline(y=trained_length, line_dash="dash", line_color=TRAINED_COLOUR, line_width=1.5,
                     annotation_text=f"trained length {trained_length:,}", annotation_position="top left",
                     annotation_font_size=11, annotation_font_color=TRAINED_COLOUR)
    figure.update_xaxes(title_text="distance in the text (tokens back from the query)")
    figure.update_yaxes(title_text="distance the model is given")
    figure.update_layout(height=380, margin={"t": 30}, legend={"orientation": "h", "y": -0.25})
    return fit(figure, width)
