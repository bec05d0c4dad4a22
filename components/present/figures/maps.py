"""Attention as the model page draws it: query x key maps, layer x head grids, the sink / distant / recent mass per
layer, the last query's distance profile (the sink apart) and its recent, fact and sink mass, a statistic per layer,
and the loss and the whole answer's log-probability (the Attention maps and Collapse inspector pages)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from components.present.figures.base import (
    LOG_DECADES,
    MASS_COLOURS,
    colour,
    display_token,
    escape,
    side_by_side,
    wrapped,
)
from components.present.margins import FULL_WIDTH, fit
from model_utils.core.statistics import STATISTIC_LABELS


def hidden_keys(n: int, sliding_span: int | None = None) -> np.ndarray:
    """[query, key] True where the query cannot see the key: a later key, or (in a sliding-window layer, where a
    query sees its last `sliding_span` keys) a key before its window."""
    queries, keys = np.arange(n)[:, None], np.arange(n)[None, :]
    hidden = keys > queries
    if sliding_span:
        hidden |= keys <= queries - sliding_span
    return hidden


TITLE_SIZE = 13  # px: a heatmap panel's two-line title, small enough that four panels' titles fit side by side


def attention_heatmaps(maps: Sequence[np.ndarray], tokens: Sequence[str], titles: Sequence[str],
                       log_colour: bool = False, sliding_span: int | None = None,
                       width: int = FULL_WIDTH) -> go.Figure:
    """One query x key heatmap per temperature, side by side, on one shared colour scale.

    Token labels go on both axes (numeric axes with tick text, so repeated tokens stay distinct); the hover shows
    query token, key token and weight. A title's lines are split at "\\n" and each escaped. With `log_colour` the
    colour is log10(weight), because most weights are tiny, over LOG_DECADES below the largest weight (smaller ones
    share the lowest colour, so the many near-zero weights do not fill the scale); the hover still shows the weight
    itself. Keys a query cannot see are blank (NaN), not weight 0: later keys, and with `sliding_span` the keys
    before the layer's window (the band)."""
    labels = [display_token(t) for t in tokens]
    n = len(labels)
    positions = list(range(n))
    query_labels = np.array([[labels[q]] * n for q in range(n)])
    key_labels = np.array([labels] * n)
    # side by side; with more than 24 tokens two panels per row, so that token labels stay readable
    per_row = len(maps) if n <= 24 else min(2, len(maps))
    rows = math.ceil(len(maps) / per_row)
    figure = make_subplots(rows=rows, cols=per_row, shared_yaxes=True, horizontal_spacing=0.04,
                           vertical_spacing=min(0.12, 0.5 / rows),
                           subplot_titles=["<br>".join(escape(line) for line in t.split("\n")) for t in titles])
    top = max(float(np.max(m)) for m in maps)
    high = math.log10(top) if top > 0 else 0.0  # the log scale's top, and its floor LOG_DECADES below
    hidden = hidden_keys(n, sliding_span)
    for index, weights in enumerate(maps):
        weights = np.asarray(weights, dtype=np.float64)
        shown = np.log10(np.maximum(weights, 10.0 ** (high - LOG_DECADES))) if log_colour else weights
        shown = np.where(hidden, np.nan, shown)  # keys the query cannot see: blank, not 0
        custom = np.dstack([query_labels, key_labels, weights])
        figure.add_trace(go.Heatmap(
            z=shown, x=positions, y=positions, coloraxis="coloraxis", customdata=custom,
            hovertemplate="query %{y}: %{customdata[0]}<br>key %{x}: %{customdata[1]}"
                          "<br>weight %{customdata[2]:.4g}<extra></extra>"),
            row=index // per_row + 1, col=index % per_row + 1)
    step = max(1, math.ceil(n / 40))  # at most ~40 labels per axis stay readable
    # "allow": the margins grow to fit the labels anyway, and plotly's default ("hide past div") measures every
    # label's box to find any past the figure's edge: 0.4 s of the page's one thread for the 4 panels' 320 labels
    ticks = {"tickmode": "array", "tickvals": positions[::step], "ticktext": labels[::step], "tickfont_size": 9,
             "ticklabeloverflow": "allow"}
    figure.update_xaxes(**ticks, tickangle=-60, title_text="key")
    figure.update_yaxes(**ticks, autorange="reversed")
    for row in range(1, rows + 1):
        figure.update_yaxes(title_text="query", row=row, col=1)
    if log_colour:
        exponents = list(range(math.ceil(high - LOG_DECADES), math.floor(high) + 1))
        coloraxis = {"cmin": high - LOG_DECADES, "cmax": high, "colorscale": "Viridis", "colorbar": {
            "title": {"text": "weight"}, "tickvals": exponents, "ticktext": [f"1e{e}" for e in exponents]}}
    else:
        coloraxis = {"cmin": 0.0, "cmax": top, "colorscale": "Viridis", "colorbar": {"title": {"text": "weight"}}}
    row_height = max(360, min(820, 180 + (14 if per_row <= 2 else 9) * n))
    figure.update_annotations(font_size=TITLE_SIZE)
    figure.update_layout(coloraxis=coloraxis, height=rows * row_height, margin={"t": 60})
    return fit(figure, width)


def head_grids(grids: Sequence[np.ndarray], titles: Sequence[str], statistic: str = "normalized_entropy",
               width: int = FULL_WIDTH) -> go.Figure:
    """Layer x head grids of one statistic (a name of core.statistics.STATISTICS), one per temperature, on one colour
    scale: 0..1 for the normalized entropy and the masses, 0..the largest for the entropy, and log10 for top_ratio
    (a ratio from 1 up to huge; the hover shows the ratio itself)."""
    label = STATISTIC_LABELS[statistic]
    ratio = statistic == "top_ratio"
    figure = side_by_side(titles, shared_yaxes=True, horizontal_spacing=0.02)
    for column, grid in enumerate(grids, start=1):
        grid = np.asarray(grid, dtype=np.float64)
        layers, heads = grid.shape
        figure.add_trace(go.Heatmap(z=np.log10(grid) if ratio else grid, x=list(range(heads)),
                                    y=list(range(layers)), coloraxis="coloraxis", customdata=grid,
                                    hovertemplate=f"layer %{{y}} head %{{x}}<br>{escape(label)}<br>"
                                                  f"%{{customdata:{'.4g' if ratio else '.3f'}}}<extra></extra>"),
                         row=1, col=column)
    if ratio:
        top = max(1.0, max(float(np.log10(np.max(grid))) for grid in grids))
        scale = {"cmin": 0.0, "cmax": top, "colorbar": {"title": {"text": "log10 of the<br>" + wrapped(label)}}}
    else:
        top = max(float(np.max(grid)) for grid in grids) if statistic == "entropy" else 1.0
        scale = {"cmin": 0.0, "cmax": top, "colorbar": {"title": {"text": wrapped(label)}}}
    figure.update_xaxes(title_text="head", dtick=1)
    figure.update_yaxes(title_text="layer", row=1, col=1)
    figure.update_yaxes(autorange="reversed")
    figure.update_layout(coloraxis={**scale, "colorscale": "Plasma"}, height=520, margin={"t": 50})
    return fit(figure, width)


def mass_bars(masses: Sequence[dict[str, np.ndarray]], titles: Sequence[str], width: int = FULL_WIDTH) -> go.Figure:
    """Stacked bars per layer of the mean sink / distant / recent mass (they add up to 1), one panel per T."""
    figure = side_by_side(titles, shared_yaxes=True, horizontal_spacing=0.02)
    for column, parts in enumerate(masses, start=1):
        layers = list(range(len(parts["sink"])))
        for part in ("sink", "distant", "recent"):
            figure.add_trace(go.Bar(x=layers, y=parts[part], name=part, marker_color=MASS_COLOURS[part],
                                    legendgroup=part, showlegend=column == 1,
                                    hovertemplate=f"layer %{{x}}<br>{part} mass %{{y:.3f}}<extra></extra>"),
                             row=1, col=column)
    figure.update_layout(barmode="stack", height=360, margin={"t": 50}, bargap=0.05,
                         legend={"orientation": "h", "y": -0.2})
    figure.update_yaxes(range=[0, 1], row=1, col=1, title_text="attention mass")
    figure.update_xaxes(title_text="layer")
    return fit(figure, width)


def distance_bin_names(edges: Sequence[int]) -> list[str]:
    """Key-distance bins [lo, hi) as labels: 0, 1, 2-3, 4-7, ..."""
    return [f"{lo}" if hi - lo == 1 else f"{lo}-{hi - 1}" for lo, hi in itertools.pairwise(edges)]


def distance_profile(profiles: Sequence[np.ndarray], edges: np.ndarray, labels: Sequence[str],
                     sinks: Sequence[float] | None = None, width: int = FULL_WIDTH) -> go.Figure:
    """Attention mass of the last query in log-spaced key-distance bins (0, 1, 2-3, 4-7, ...), one line per T. With
    `sinks` (per T, the last query's weight on key 0, which the profiles then leave out), the sink is drawn apart, in
    a narrow panel of its own on the same scale, so it never reads as attention on the farthest keys."""
    names = distance_bin_names(edges)
    figure = go.Figure() if sinks is None else make_subplots(rows=1, cols=2, column_widths=[0.84, 0.16],
                                                             shared_yaxes=True, horizontal_spacing=0.03)
    place = {} if sinks is None else {"row": 1, "col": 1}
    for index, (profile, label) in enumerate(zip(profiles, labels, strict=True)):
        figure.add_trace(go.Scatter(x=names, y=profile, mode="lines+markers", name=escape(label),
                                    line={"color": colour(index)}, legendgroup=str(index),
                                    hovertemplate="distance %{x}<br>mass %{y:.3f}<extra>"
                                                  f"{escape(label)}</extra>"), **place)
    for index, (sink, label) in enumerate(zip(sinks, labels, strict=True) if sinks is not None else ()):
        figure.add_trace(go.Scatter(x=["sink"], y=[sink], mode="markers", name=escape(label), showlegend=False,
                                    legendgroup=str(index), marker={"color": colour(index), "size": 10},
                                    hovertemplate=f"the first token (the sink)<br>mass %{{y:.3f}}<extra>"
                                                  f"{escape(label)}</extra>"), row=1, col=2)
    figure.update_xaxes(type="category", title_text="key distance from the last query (tokens; 0 = itself)", **place)
    if sinks is not None:
        figure.update_xaxes(type="category", title_text="key 0", row=1, col=2)
    figure.update_yaxes(title_text="attention mass in bin", rangemode="tozero", **place)
    figure.update_layout(height=380, margin={"t": 30}, legend={"orientation": "h", "y": -0.3})
    return fit(figure, width)


def _share_text(value: float | None) -> str:
    """A bar's label: two decimals, two significant digits below 0.01 (a fact's 0.0003 is not drawn as 0.00)."""
    return "" if value is None else f"{value:.2f}" if value >= 0.01 or value == 0 else f"{value:.2g}"


FACT_COLOUR = "#756bb1"  # the fact: a purple, apart from the temperatures' palette and the other masses' pastels


def last_query_bars(names: Sequence[str], recent: Sequence[float], fact: Sequence[float | None],
                    sink: Sequence[float], window: int, width: int = FULL_WIDTH) -> go.Figure:
    """The Collapse inspector's chart: per view, the last token's attention on its last `window` tokens and on the
    fact, side by side, and on the first token (the sink) drawn apart in a panel of its own, all on one 0..1 scale.
    A view without a fact mass (None) draws no fact bar."""
    figure = make_subplots(rows=1, cols=2, column_widths=[0.68, 0.32], shared_yaxes=True, horizontal_spacing=0.04,
                           subplot_titles=[f"on the last {window} tokens and on the fact",
                                           "on the first token (the sink)"])
    shown = [escape(name) for name in names]
    bars = [("recent", f"the last {window} tokens", recent, MASS_COLOURS["recent"], 1),
            ("fact", "the fact", fact, FACT_COLOUR, 1), ("sink", "the first token (the sink)", sink,
                                                            MASS_COLOURS["sink"], 2)]
    for part, name, values, paint, column in bars:
        if all(value is None for value in values):
            continue
        figure.add_trace(go.Bar(x=shown, y=values, name=name, marker_color=paint, legendgroup=part,
                                text=[_share_text(value) for value in values],
                                textposition="outside", cliponaxis=False,
                                hovertemplate=f"%{{x}}<br>{escape(name)}: %{{y:.3f}}<extra></extra>"),
                         row=1, col=column)
    figure.update_yaxes(range=[0, 1.08], row=1, col=1, title_text="share of the last token's attention")
    figure.update_layout(barmode="group", height=340, margin={"t": 50}, bargap=0.25,
                         legend={"orientation": "h", "y": -0.18})
    return fit(figure, width)


def layer_lines(values: Sequence[np.ndarray], labels: Sequence[str], statistic: str,
                reference: float | None = None, reference_text: str = "", width: int = FULL_WIDTH) -> go.Figure:
    """One line per temperature of a per-layer statistic, as TemperatureResult.layer_mean gives it: the mean of
    the heads (the geometric mean for top_ratio, drawn on a log axis)."""
    ratio = statistic == "top_ratio"
    label = STATISTIC_LABELS[statistic]
    figure = go.Figure()
    for index, (series, name) in enumerate(zip(values, labels, strict=True)):
        figure.add_trace(go.Scatter(x=list(range(len(series))), y=series, mode="lines+markers",
                                    name=escape(name), line={"color": colour(index)},
                                    hovertemplate=f"layer %{{x}}<br>%{{y:{'.4g' if ratio else '.3f'}}}"
                                                  f"<extra>{escape(name)}</extra>"))
    if reference is not None:
        figure.add_hline(y=reference, line_dash="dash", line_color="grey", annotation_text=reference_text)
    figure.update_xaxes(title_text="layer")
    figure.update_yaxes(title_text=wrapped(label, 40) + f"<br>{'geometric mean' if ratio else 'mean'} of heads",
                        **({"type": "log"} if ratio else {"rangemode": "tozero"}))
    figure.update_layout(height=380, margin={"t": 30}, legend={"orientation": "h", "y": -0.25})
    return fit(figure, width)


def outcome_bars(labels: Sequence[str], losses: Sequence[float], answer_log_probs: Sequence[float] | None,
                 answer: str = "", width: int = FULL_WIDTH) -> go.Figure:
    """The model's loss per temperature and, if an answer is given, the log-probability of the whole answer after
    the text (0 = certain, lower = less likely)."""
    columns = 2 if answer_log_probs is not None else 1
    titles = ["loss (mean next-token NLL)"] + ([f"log-probability of the whole answer: {answer}"] if columns == 2
                                               else [])
    figure = make_subplots(rows=1, cols=columns, subplot_titles=[escape(t) for t in titles])
    names = [escape(label) for label in labels]
    colours = [colour(i) for i in range(len(labels))]
    figure.add_trace(go.Bar(x=names, y=losses, marker_color=colours, text=[f"{v:.2f}" for v in losses],
                            hovertemplate="%{x}<br>loss %{y:.3f}<extra></extra>"), row=1, col=1)
    if answer_log_probs is not None:
        figure.add_trace(go.Bar(x=names, y=answer_log_probs, marker_color=colours,
                                text=[f"{v:.2f}" for v in answer_log_probs],
                                hovertemplate="%{x}<br>log-probability %{y:.3f}<extra></extra>"), row=1, col=2)
    figure.update_layout(showlegend=False, height=320, margin={"t": 50})
    return fit(figure, width)
