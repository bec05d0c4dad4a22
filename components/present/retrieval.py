"""The Retrieval page's pictures, as pure functions (records in, plotly figures or escaped HTML out): the gain by
distance of each view, the repeat's tokens shaded by their loss, and where the repeat's queries look per layer."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from components.present.figures.base import escape
from components.present.figures.context import BAND_ALPHA, add_trained_length, rgba, schedule_names, sweep_styles
from components.present.margins import FULL_WIDTH, fit
from components.present.token_view import COLOUR
from model_utils.core.records.retrieval import Curve, ReachOutcome, RetrievalPoint
from model_utils.core.views import View

LOSS_TOP = 8.0  # nats: a token this hard or harder is drawn at full colour (a new word is often 5 to 10)


def view_styles(views: Sequence[View]) -> dict[View, dict]:
    """The line style of each view, as the Context length page draws the same view."""
    styles = sweep_styles([v.temperature for v in views], schedule_names(views),
                          [None if v.rope is None else v.rope.label for v in views])
    return dict(zip(views, styles, strict=True))


def reach_chart(curves: Sequence[Curve], styles: dict[View, dict], trained_length: int, half: float,
                width: int = FULL_WIDTH) -> go.Figure:
    """The gain on the repeat against the distance back (log scale), one line per view with its spread over the
    passages as a band, each view's reach marked as the bracket of measured distances its line crosses `half` of its
    short-distance gain between (`add_bracket`: the crossing itself is read between points), and the trained length
    drawn in."""
    figure = go.Figure()
    for curve in curves:
        style, name = styles[curve.view], escape(curve.view.label)
        figure.add_trace(go.Scatter(x=curve.distances, y=curve.high, mode="lines", line={"width": 0},
                                    legendgroup=name, showlegend=False, hoverinfo="skip"))
        figure.add_trace(go.Scatter(x=curve.distances, y=curve.low, mode="lines", line={"width": 0},
                                    fill="tonexty", fillcolor=rgba(style["color"], BAND_ALPHA), legendgroup=name,
                                    showlegend=False, hoverinfo="skip"))
        figure.add_trace(go.Scatter(
            x=curve.distances, y=curve.gain, mode="lines+markers", name=name, legendgroup=name, line=style,
            marker={"size": 6, "color": style["color"]},
            hovertemplate=f"%{{x:,}} tokens back<br>saves %{{y:.2f}} nats per token<extra>{name}</extra>"))
        if curve.reach.outcome is ReachOutcome.FOUND:
            add_bracket(figure, curve, half * curve.gain[0], style["color"], name)
    add_trained_length(figure, trained_length, position="top left", log_x=True)
    # the distances any curve was measured at (a refined curve has more of its own), thinned so that no two labels
    # are closer than TICK_RATIO on the log axis (a dense grid's 6,500, 6,850, 7,200 ran into one another); the
    # trained length is labelled
    distances = _thinned(sorted(set().union(*(curve.distances for curve in curves))))
    figure.update_xaxes(type="log", title_text="distance back to the first copy (tokens, log scale)",
                        tickvals=distances, ticktext=[f"{d:,}" for d in distances])
    figure.update_yaxes(title_text="what the first copy saves on its repeat (nats per token)", rangemode="tozero")
    figure.update_layout(height=430, margin={"t": 30}, legend={"orientation": "h", "y": -0.22})
    return fit(figure, width)


def add_bracket(figure: go.Figure, curve: Curve, level: float, color: str, name: str) -> None:
    """A reach as the probe knows it: a dotted segment at the level between the two measured distances that bracket
    it, each end a measured point, and an open diamond where the line crosses the level, read between those points
    on a log scale (never measured)."""
    low, high = curve.reach.between
    figure.add_trace(go.Scatter(
        x=[low, high], y=[level, level], mode="lines", legendgroup=name, showlegend=False,
        line={"color": color, "dash": "dot", "width": 2},
        hovertemplate=f"reach: between {low:,} and {high:,} tokens (both measured)<extra>{name}</extra>"))
    figure.add_trace(go.Scatter(
        x=[curve.reach.value], y=[level], mode="markers", legendgroup=name, showlegend=False,
        marker={"symbol": "diamond-open", "size": 11, "color": color, "line": {"width": 2}},
        hovertemplate=(f"reach: between {low:,} and {high:,} tokens; drawn at %{{x:,.0f}}, read between those "
                       f"points, not measured<extra>{name}</extra>")))


def loss_html(tokens: Sequence[str], nll: Sequence[float], top: float = LOSS_TOP) -> str:
    """The repeat's tokens as escaped spans shaded by their loss (white: predicted, red: a surprise); the first
    token, whose loss is not scored (filler comes before it), is drawn grey. Hovering shows the loss."""
    spans = [f'<span style="color: #888; white-space: pre-wrap">{html.escape(tokens[0].replace(chr(10), "↵"))}</span>']
    for token, loss in zip(tokens[1:], nll, strict=True):
        share = float(np.clip(loss / top, 0.0, 1.0))
        title = html.escape(f"loss {float(loss):.2f} nats", quote=True)
        spans.append(f'<span title="{title}" style="background-color: rgba({COLOUR}, {share:.3f}); '
                     f'white-space: pre-wrap">{html.escape(token.replace(chr(10), "↵"))}</span>')
    return '<div style="line-height: 1.9; font-family: monospace; font-size: 0.85em">' + "".join(spans) + "</div>"


def layer_mass_chart(points: Sequence[RetrievalPoint], styles: dict[View, dict], width: int = FULL_WIDTH) -> go.Figure:
    """Per layer, the weight the strongest head of the repeat's queries puts on the one key an induction copy reads
    (the copy of the token each is to predict), planted (solid) and with nothing planted (dotted), one colour per
    view."""
    figure = go.Figure()
    for point in points:
        style, name = styles[point.view], escape(point.view.label)
        layers = np.arange(len(point.planted.target_mass_top))
        for which, values, dash in (("planted", point.planted.target_mass_top, "solid"),
                                    ("nothing planted", point.unplanted.target_mass_top, "dot")):
            figure.add_trace(go.Scatter(
                x=layers, y=values, mode="lines+markers", name=f"{name}, {which}", legendgroup=name,
                showlegend=dash == "solid",  # one legend entry a view; the caption says what dotted is
                line={"color": style["color"], "dash": dash, "width": 2}, marker={"size": 4},
                hovertemplate=f"layer %{{x}}: %{{y:.3f}}<extra>{name}, {which}</extra>"))
    figure.update_xaxes(title_text="layer", dtick=5)
    figure.update_yaxes(title_text="weight on the copy of the next token", range=[0, 1])
    figure.update_layout(height=360, margin={"t": 30}, legend={"orientation": "h", "y": -0.3})
    return fit(figure, width)


TICK_RATIO = 1.3  # the least ratio between two labelled distances on the log axis


def _thinned(distances: Sequence[int]) -> list[int]:
    """The distances to label: each at least TICK_RATIO past the last one labelled."""
    kept: list[int] = []
    for distance in distances:
        if not kept or distance >= TICK_RATIO * kept[-1]:
            kept.append(distance)
    return kept
