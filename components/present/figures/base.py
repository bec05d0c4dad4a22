"""What the figure modules share: the palette of compared temperatures, the dashes, escaping of labels and tokens,
side-by-side panels and wrapped titles."""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components.present.text import visible_token

# One colour per compared temperature, in the order the user listed them (Plotly's D3 palette).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#7f7f7f")
SLIDER_COLOUR = "#555555"
DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
MASS_COLOURS = {"sink": "#525252", "distant": "#9ecae1", "recent": "#fdae6b"}  # pastel: not a temperature colour
LOG_DECADES = 3  # a log colour scale spans this many decades below its top; smaller weights share its lowest colour
def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def display_token(token: str) -> str:
    """A token as a safe, visible label: HTML escaped, whitespace-only and control characters made visible."""
    return escape(visible_token(token))


def escape(text: str) -> str:
    """HTML-escape text for plotly labels. Quotes stay as they are: plotly.js does not decode &quot;, and with
    < and > escaped no tag can form."""
    return html.escape(text, quote=False)


def side_by_side(titles: Sequence[str], **kwargs) -> go.Figure:
    return make_subplots(rows=1, cols=len(titles), subplot_titles=[escape(t) for t in titles], **kwargs)


def wrapped(text: str, width: int = 22) -> str:
    """A long label broken into lines for a colour bar or axis title (plotly does not wrap)."""
    return "<br>".join(escape(line) for line in textwrap.wrap(text, width))


def log_ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Plain tick values for a log axis from `low` to `high`: 1-2-5 in each decade, or 1-3, or the decades alone,
    whichever first gives at most `most` (plotly's own labels read '5 0.1 2 5 1 2 5 10')."""
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    for mantissas in ((1, 2, 5), (1, 3), (1,)):
        ticks = [float(f"{m}e{e}") for e in decades for m in mantissas]
        ticks = [t for t in ticks if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]
        if len(ticks) <= most:
            break
    return ticks
