"""The decomposition chart: one horizontal bar per lever (what it saves past the trained length, with its 95%
interval), on the scale of the loss rise, which is drawn as a dashed line: a bar that reaches the line brings the
whole rise back. Pure: numbers in, a plotly figure out."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from components.present.figures import escape
from components.present.margins import FULL_WIDTH, fit
from model_utils.verdicts.decomposition import Lever

KIND_COLOURS = {"recipe": "#1f77b4", "temperature": "#d62728", "on_top": "#ff7f0e", "schedule": "#9467bd"}
KIND_NAMES = {"recipe": "RoPE recipe at T = 1", "temperature": "best constant T alone",
              "on_top": "a temperature on top of a recipe", "schedule": "published schedule"}


def decomposition_chart(levers: Sequence[Lever], rise: float, width: int = FULL_WIDTH) -> go.Figure:
    """`levers` (verdicts.decomposition.Lever: label, kind, saved, interval, share_of_rise); `rise` in nats per
    token. Bars in the order given, the first at the top; one legend entry per kind."""
    figure = go.Figure()
    shown = [lever for lever in levers if lever.saved is not None]
    labels = [escape(lever.label) for lever in shown]
    for kind, colour in KIND_COLOURS.items():
        chosen = [lever for lever in shown if lever.kind == kind]
        if not chosen:
            continue
        saved = [lever.saved for lever in chosen]
        low, high = zip(*(lever.interval or [lever.saved] * 2 for lever in chosen), strict=True)  # none: no bar
        figure.add_trace(go.Bar(
            y=[escape(lever.label) for lever in chosen], x=saved, orientation="h", name=KIND_NAMES[kind],
            marker_color=colour, text=[_share(lever) for lever in chosen], textposition="outside", cliponaxis=False,
            error_x={"type": "data", "symmetric": False, "thickness": 1.5,
                     "array": [top - x for top, x in zip(high, saved, strict=True)],
                     "arrayminus": [x - bottom for bottom, x in zip(low, saved, strict=True)]},
            hovertemplate="%{y}<br>saves %{x:+.3f} nats/token<br>%{text}<extra></extra>"))
    if rise > 0:
        figure.add_vline(x=rise, line_dash="dash", line_color="black",
                         annotation_text=f"the loss rise, {rise:.2f}", annotation_position="top")
    figure.add_vline(x=0, line_color="grey", line_width=1)
    figure.update_yaxes(categoryorder="array", categoryarray=labels[::-1])
    figure.update_xaxes(title_text="nats per token saved past the trained length (against T = 1)")
    figure.update_layout(height=120 + 34 * len(shown), barmode="overlay", margin={"t": 30},
                         legend={"orientation": "h", "y": -0.3})
    return fit(figure, width)


def _share(lever: Lever) -> str:
    return "" if lever.share_of_rise is None else f"{lever.share_of_rise:.0%} of the rise"
