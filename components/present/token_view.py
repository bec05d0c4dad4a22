"""The token view: a text drawn as its tokens, each shaded by the attention weight one query gives it, as HTML for
st.markdown. Pure functions; every token is HTML-escaped here, so user text stays inert whatever it holds. One
colour scale across temperatures (the caller passes the largest weight of all views), linear or logarithmic (two
decades, so tiny weights stay pale)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np

from components.present.text import ratio_text
from model_utils.core.softmax import weight_ratio

# the log shading spans two decades below the scale's top: a weight under 1% of the top gets no colour. Opacity tells
# fewer steps apart than a heatmap's hues, and with more decades almost every token of a row comes out red
SHADE_DECADES = 2
COLOUR = "255, 75, 75"  # Streamlit's primary red, as rgba components
QUERY_STYLE = "outline: 2px solid rgb(0, 104, 201); border-radius: 3px"
SINK_STYLE = "text-decoration: underline dotted"


def shade(weight: float, scale_max: float, log: bool) -> float:
    """The opacity (0 to 1) of a token that gets `weight`, on a scale whose top is `scale_max` (on the log scale,
    SHADE_DECADES down to the floor)."""
    if weight <= 0 or scale_max <= 0:
        return 0.0
    if not log:
        return min(1.0, weight / scale_max)
    above_floor = math.log10(weight / scale_max) + SHADE_DECADES  # decades above the scale's floor
    return float(np.clip(above_floor / SHADE_DECADES, 0.0, 1.0))


def token_html(tokens: Sequence[str], weights: Sequence[float], query: int, scale_max: float, log: bool = False,
               sink: int | None = 0) -> str:
    """The tokens up to and including `query` as escaped spans shaded by `weights` ([query + 1]); the query is
    outlined and the sink (the first token) underlined; tokens after the query are not shown (it cannot see them).
    Each span's title gives the weight, so hovering shows the number."""
    spans = []
    for index, (token, weight) in enumerate(zip(tokens[: query + 1], weights, strict=True)):
        style = [f"background-color: rgba({COLOUR}, {shade(float(weight), scale_max, log):.3f})"]
        if index == query:
            style.append(QUERY_STYLE)
        if index == sink:
            style.append(SINK_STYLE)
        shown = html.escape(token.replace("\n", "↵"))
        title = html.escape(f"token {index}: weight {float(weight):.4f}", quote=True)
        spans.append(f'<span title="{title}" style="{"; ".join(style)}; white-space: pre-wrap">{shown}</span>')
    return '<div style="line-height: 1.9; font-family: monospace">' + "".join(spans) + "</div>"


def top_keys(tokens: Sequence[str], weights: Sequence[float], k: int = 5) -> list[dict]:
    """The k keys with the largest weights, largest first: position, token and weight."""
    order = np.argsort(-np.asarray(weights, dtype=np.float64), kind="stable")[:k]
    return [{"position": int(i), "token": tokens[i], "weight": float(weights[i])} for i in order]


def ratio_line(scores: Sequence[float], weights: Sequence[float], temperature: float | None) -> str | None:
    """The top key's weight over the runner-up's, next to exp(gap / T) of the query's scores before the
    temperature: the Softmax lab's rule on real tokens. None with fewer than two keys or without a constant T."""
    if len(weights) < 2 or temperature is None:
        return None
    order = np.argsort(-np.asarray(weights, dtype=np.float64), kind="stable")
    first, second = int(order[0]), int(order[1])
    gap = float(scores[first] - scores[second])
    measured = float(weights[first] / weights[second]) if weights[second] > 0 else math.inf
    return (f"top key / runner-up: {ratio_text(measured)}; score gap {gap:.2f}, exp(gap / T) = exp({gap:.2f} / "
            f"{temperature:g}) = {ratio_text(float(weight_ratio(gap, temperature)))}")
