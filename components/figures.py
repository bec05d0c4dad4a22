"""Pure figure functions: numbers in, plotly `go.Figure` out. No streamlit import, no model access.

Every function that compares temperatures draws them side by side with one colour per temperature (the same
colour on every chart of the app) and, where the quantity is a weight, one shared colour scale. Text that comes
from the user (tokens) goes through `display_token`, which escapes HTML, so it is always shown as literal text.
"""

from __future__ import annotations

import html
import itertools
import math
import textwrap
from collections.abc import Sequence

import numpy as np
import pandas  # noqa: F401  (imported before any figure is built: see the note below)
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from model_utils.metrics import STATISTIC_LABELS, entropy, entropy_curve, softmax_with_temperature, weight_ratio
from model_utils.schedules import Schedule

# Plotly looks pandas up in sys.modules without the import lock (`get_module("pandas", should_load=False)`): while
# one session's thread was still importing pandas (Streamlit imports it for st.dataframe), another session's figure
# found the half-made module and failed with "partially initialized module 'pandas' has no attribute 'Series'" (the
# load test, 8 sessions at once). Importing pandas with this module closes that window: a page imports figures
# before it builds any figure, and an import in progress makes other importers of this module wait.

# One colour per compared temperature, in the order the user listed them (Plotly's D3 palette).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
SLIDER_COLOUR = "#555555"
DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
MASS_COLOURS = {"sink": "#525252", "distant": "#9ecae1", "recent": "#fdae6b"}  # pastel: not a temperature colour
LOG_FLOOR = 1e-6  # weights below this share the lowest colour on a log scale
_CONTROL = {"\n": "↵", "\r": "␍", "\t": "⇥", " ": "␣"}


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def display_token(token: str) -> str:
    """A token as a safe, visible label: HTML escaped, whitespace-only and control characters made visible."""
    if token.strip() == "":
        shown = "".join(_CONTROL.get(ch, "␣") for ch in token) or "∅"
    else:
        shown = "".join(_CONTROL.get(ch, ch) if ch in "\n\r\t" else ch for ch in token)
    shown = "".join(f"\\x{ord(ch):02x}" if ord(ch) < 32 or 127 <= ord(ch) < 160 else ch for ch in shown)
    return escape(shown)


def escape(text: str) -> str:
    """HTML-escape text for plotly labels. Quotes stay as they are: plotly.js does not decode &quot;, and with
    < and > escaped no tag can form."""
    return html.escape(text, quote=False)


def _side_by_side(titles: Sequence[str], **kwargs) -> go.Figure:
    return make_subplots(rows=1, cols=len(titles), subplot_titles=[escape(t) for t in titles], **kwargs)


def weight_bars(scores: Sequence[float], temperatures: Sequence[float], slider: float | None = None) -> go.Figure:
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
    figure = _side_by_side(titles, shared_yaxes=True, horizontal_spacing=0.03)
    for column, ((_, bar_colour, name), w) in enumerate(zip(panels, weights, strict=True), start=1):
        figure.add_trace(go.Bar(x=keys, y=w, name=name, marker_color=bar_colour, customdata=scores,
                                hovertemplate="key %{x}<br>score %{customdata:g}<br>weight %{y:.4f}<extra></extra>"),
                         row=1, col=column)
    figure.update_yaxes(range=[0, 1], title_text="attention weight", row=1, col=1)
    figure.update_layout(showlegend=False, height=330, margin={"t": 60, "b": 30}, bargap=0.15)
    figure.update_annotations(font_size=12)
    return figure


def ratio_curves(gaps: Sequence[float] = (1, 2, 5, 10), marked_gap: float = 5.0,
                 marked_temperatures: Sequence[float] = (1.0, 2.0), current: float | None = None) -> go.Figure:
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
    return figure


def entropy_curve_figure(scores: Sequence[float], marked_temperatures: Sequence[float] = ()) -> go.Figure:
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
    return figure


def hidden_keys(n: int, sliding_window: int | None = None) -> np.ndarray:
    """[query, key] True where the query cannot see the key: a later key, or (in a sliding-window layer, where a
    query sees its last `sliding_window` keys) a key before its window."""
    queries, keys = np.arange(n)[:, None], np.arange(n)[None, :]
    hidden = keys > queries
    if sliding_window:
        hidden |= keys <= queries - sliding_window
    return hidden


def attention_heatmaps(maps: Sequence[np.ndarray], tokens: Sequence[str], titles: Sequence[str],
                       log_colour: bool = False, sliding_window: int | None = None) -> go.Figure:
    """One query x key heatmap per temperature, side by side, on one shared colour scale.

    Token labels go on both axes (numeric axes with tick text, so repeated tokens stay distinct); the hover shows
    query token, key token and weight. With `log_colour` the colour is log10(weight) (floored at LOG_FLOOR),
    because most weights are tiny; the hover still shows the weight itself. Keys a query cannot see are blank
    (NaN), not weight 0: later keys, and with `sliding_window` the keys before the layer's window (the band)."""
    labels = [display_token(t) for t in tokens]
    n = len(labels)
    positions = list(range(n))
    query_labels = np.array([[labels[q]] * n for q in range(n)])
    key_labels = np.array([labels] * n)
    # side by side; with more than 24 tokens two panels per row, so that token labels stay readable
    per_row = len(maps) if n <= 24 else min(2, len(maps))
    rows = math.ceil(len(maps) / per_row)
    figure = make_subplots(rows=rows, cols=per_row, subplot_titles=[escape(t) for t in titles], shared_yaxes=True,
                           horizontal_spacing=0.04, vertical_spacing=min(0.12, 0.5 / rows))
    top = max(float(np.max(m)) for m in maps)
    hidden = hidden_keys(n, sliding_window)
    for index, weights in enumerate(maps):
        weights = np.asarray(weights, dtype=np.float64)
        shown = np.log10(np.maximum(weights, LOG_FLOOR)) if log_colour else weights
        shown = np.where(hidden, np.nan, shown)  # keys the query cannot see: blank, not 0
        custom = np.dstack([query_labels, key_labels, weights])
        figure.add_trace(go.Heatmap(
            z=shown, x=positions, y=positions, coloraxis="coloraxis", customdata=custom,
            hovertemplate="query %{y}: %{customdata[0]}<br>key %{x}: %{customdata[1]}"
                          "<br>weight %{customdata[2]:.4g}<extra></extra>"),
            row=index // per_row + 1, col=index % per_row + 1)
    step = max(1, math.ceil(n / 40))  # at most ~40 labels per axis stay readable
    ticks = {"tickmode": "array", "tickvals": positions[::step], "ticktext": labels[::step], "tickfont_size": 9}
    figure.update_xaxes(**ticks, tickangle=-60, title_text="key")
    figure.update_yaxes(**ticks, autorange="reversed")
    for row in range(1, rows + 1):
        figure.update_yaxes(title_text="query", row=row, col=1)
    if log_colour:
        floor = math.log10(LOG_FLOOR)
        exponents = list(range(int(floor), 1))
        coloraxis = {"cmin": floor, "cmax": 0, "colorscale": "Viridis", "colorbar": {
            "title": {"text": "weight"}, "tickvals": exponents, "ticktext": [f"1e{e}" for e in exponents]}}
    else:
        coloraxis = {"cmin": 0.0, "cmax": top, "colorscale": "Viridis", "colorbar": {"title": {"text": "weight"}}}
    row_height = max(360, min(820, 180 + (14 if per_row <= 2 else 9) * n))
    figure.update_layout(coloraxis=coloraxis, height=rows * row_height, margin={"t": 50})
    return figure


def _wrapped(text: str, width: int = 22) -> str:
    """A long label broken into lines for a colour bar or axis title (plotly does not wrap)."""
    return "<br>".join(escape(line) for line in textwrap.wrap(text, width))


def head_grids(grids: Sequence[np.ndarray], titles: Sequence[str], statistic: str = "normalized_entropy"
               ) -> go.Figure:
    """Layer x head grids of one statistic (a name of metrics.STATISTICS), one per temperature, on one colour
    scale: 0..1 for the normalized entropy and the masses, 0..the largest for the entropy, and log10 for top_ratio
    (a ratio from 1 up to huge; the hover shows the ratio itself)."""
    label = STATISTIC_LABELS[statistic]
    ratio = statistic == "top_ratio"
    figure = _side_by_side(titles, shared_yaxes=True, horizontal_spacing=0.02)
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
        scale = {"cmin": 0.0, "cmax": top, "colorbar": {"title": {"text": "log10 of the<br>" + _wrapped(label)}}}
    else:
        top = max(float(np.max(grid)) for grid in grids) if statistic == "entropy" else 1.0
        scale = {"cmin": 0.0, "cmax": top, "colorbar": {"title": {"text": _wrapped(label)}}}
    figure.update_xaxes(title_text="head", dtick=1)
    figure.update_yaxes(title_text="layer", row=1, col=1)
    figure.update_yaxes(autorange="reversed")
    figure.update_layout(coloraxis={**scale, "colorscale": "Plasma"}, height=520, margin={"t": 50})
    return figure


def mass_bars(masses: Sequence[dict[str, np.ndarray]], titles: Sequence[str]) -> go.Figure:
    """Stacked bars per layer of the mean sink / distant / recent mass (they add up to 1), one panel per T."""
    figure = _side_by_side(titles, shared_yaxes=True, horizontal_spacing=0.02)
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
    return figure


def distance_profile(profiles: Sequence[np.ndarray], edges: np.ndarray, labels: Sequence[str]) -> go.Figure:
    """Attention mass of the last query in log-spaced key-distance bins (0, 1, 2-3, 4-7, ...), one line per T."""
    names = [f"{lo}" if hi - lo == 1 else f"{lo}-{hi - 1}" for lo, hi in itertools.pairwise(edges)]
    figure = go.Figure()
    for index, (profile, label) in enumerate(zip(profiles, labels, strict=True)):
        figure.add_trace(go.Scatter(x=names, y=profile, mode="lines+markers", name=escape(label),
                                    line={"color": colour(index)},
                                    hovertemplate="distance %{x}<br>mass %{y:.3f}<extra>"
                                                  f"{escape(label)}</extra>"))
    figure.update_xaxes(type="category", title_text="key distance from the last query (tokens; 0 = itself)")
    figure.update_yaxes(title_text="attention mass in bin", rangemode="tozero")
    figure.update_layout(height=380, margin={"t": 30}, legend={"orientation": "h", "y": -0.3})
    return figure


def layer_lines(values: Sequence[np.ndarray], labels: Sequence[str], statistic: str,
                reference: float | None = None, reference_text: str = "") -> go.Figure:
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
    figure.update_yaxes(title_text=_wrapped(label, 40) + f"<br>{'geometric mean' if ratio else 'mean'} of heads",
                        **({"type": "log"} if ratio else {"rangemode": "tozero"}))
    figure.update_layout(height=380, margin={"t": 30}, legend={"orientation": "h", "y": -0.25})
    return figure


def outcome_bars(labels: Sequence[str], losses: Sequence[float], answer_probs: Sequence[float] | None,
                 answer: str = "") -> go.Figure:
    """The model's loss per temperature and, if an answer is given, the probability of its first token."""
    columns = 2 if answer_probs is not None else 1
    titles = ["loss (mean next-token NLL)"] + ([f"P(answer's first token: {answer})"] if columns == 2 else [])
    figure = make_subplots(rows=1, cols=columns, subplot_titles=[escape(t) for t in titles])
    names = [escape(label) for label in labels]
    colours = [colour(i) for i in range(len(labels))]
    figure.add_trace(go.Bar(x=names, y=losses, marker_color=colours, text=[f"{v:.2f}" for v in losses],
                            hovertemplate="%{x}<br>loss %{y:.3f}<extra></extra>"), row=1, col=1)
    if answer_probs is not None:
        figure.add_trace(go.Bar(x=names, y=answer_probs, marker_color=colours,
                                text=[f"{v:.2f}" for v in answer_probs],
                                hovertemplate="%{x}<br>probability %{y:.3f}<extra></extra>"), row=1, col=2)
        figure.update_yaxes(range=[0, 1], row=1, col=2)
    figure.update_layout(showlegend=False, height=320, margin={"t": 50})
    return figure


def schedule_curves(lengths: np.ndarray, multipliers: dict[str, np.ndarray], as_temperature: bool = False
                    ) -> go.Figure:
    """Each published schedule's logit multiplier m (or T = 1 / m) against context length, log x axis."""
    figure = go.Figure()
    for index, (name, values) in enumerate(multipliers.items()):
        with np.errstate(divide="ignore"):
            shown = 1.0 / values if as_temperature else values
        figure.add_trace(go.Scatter(x=lengths, y=shown, mode="lines", name=escape(name),
                                    line={"color": colour(index + 3), "dash": DASHES[index % len(DASHES)],
                                          "width": 3 - 0.4 * index},  # coinciding curves stay visible
                                    hovertemplate="n %{x:,.0f}<br>%{y:.3f}<extra>" f"{escape(name)}</extra>"))
    figure.add_hline(y=1.0, line_dash="dot", line_color="grey",
                     annotation_text="T = 1 (unchanged)" if as_temperature else "m = 1 (unchanged)")
    figure.update_xaxes(type="log", title_text="context length n (tokens; position p = n - 1)")
    figure.update_yaxes(title_text="temperature T = 1 / m  (below 1: sharper)" if as_temperature
                        else "logit multiplier m  (above 1: sharper)")
    if as_temperature:  # log-n and SSMax start at m = 0 (T infinite) for one key; the interesting part is near 1
        figure.update_yaxes(range=[0, 2.5])
    figure.update_layout(height=400, margin={"t": 30}, legend={"orientation": "h", "y": -0.25})
    return figure


def schedule_figure(schedules: Sequence[Schedule], as_temperature: bool = False, longest: int = 131072
                    ) -> go.Figure:
    """schedule_curves of `schedules` over 400 log-spaced context lengths from 1 to `longest` tokens."""
    lengths = np.unique(np.geomspace(1, longest, 400).round()).astype(int)
    curves = {schedule.label: schedule.multipliers(longest)[lengths - 1] for schedule in schedules}
    return schedule_curves(lengths, curves, as_temperature=as_temperature)
