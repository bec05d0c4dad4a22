"""The decomposition chart: one horizontal bar per lever (what it saves past the trained length, with its 95%
interval), on the scale of the loss rise, which is drawn as a dashed line: a bar that reaches the line brings the
whole rise back. Pure: numbers in, a plotly figure out."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from components.present.figures import escape
from components.present.margins import FULL_WIDTH, fit

KIND_COLOURS = {"recipe": "#1f77b4", "temperature": "#d62728", "on_top": "#ff7f0e", "schedule": "#9467bd"}
KIND_NAMES = {"recipe": "RoPE recipe at T = 1", "temperature": "best constant T alone",
              "on_top": "a temperature on top of a recipe", "schedule": "published schedule"}


def decomposition_chart(levers: Sequence[dict], rise: float, width: int = FULL_WIDTH) -> go.Figure:
    """`levers`: dicts with label, kind, saved, interval ([low, high] or None) and share_of_rise; `rise` in nats per
    token. Bars in the order given, the first at the top; one legend entry per kind."""
    figure = go.Figure()
    shown = [lever for lever in levers if lever["saved"] is not None]
    labels = [escape(lever["label"]) for lever in shown]
    for kind, colour in KIND_COLOURS.items():
        chosen = [i for i, lever in enumerate(shown) if lever["kind"] == kind]
        if not chosen:
            continue
        saved = [shown[i]["saved"] for i in chosen]
        low = [saved[j] - (shown[i]["interval"] or [saved[j]] * 2)[0] for j, i in enumerate(chosen)]
        high = [(shown[i]["interval"] or [saved[j]] * 2)[1] - saved[j] for j, i in enumerate(chosen)]
        shares = ["" if shown[i]["share_of_rise"] is None else f"{shown[i]['share_of_rise']:.0%} of the rise"
                  for i in chosen]
        figure.add_trace(go.Bar(
            y=[labels[i] for i in chosen], x=saved, orientation="h", name=KIND_NAMES[kind],
            marker_color=colour, text=shares, textposition="outside", cliponaxis=False,
            error_x={"type": "data", "symmetric": False, "array": high, "arrayminus": low, "thickness": 1.5},
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
