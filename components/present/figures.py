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

from components.present.margins import FULL_WIDTH, HALF_WIDTH, fit  # noqa: F401  (HALF_WIDTH: for the pages)
from components.present.text import visible_token
from model_utils.core.schedules import SCHEDULES, Schedule, yarn_multiplier
from model_utils.core.softmax import entropy, entropy_curve, softmax_with_temperature, weight_ratio
from model_utils.core.statistics import STATISTIC_LABELS

# Plotly looks pandas up in sys.modules without the import lock (`get_module("pandas", should_load=False)`): while
# one session's thread was still importing pandas (Streamlit imports it for st.dataframe), another session's figure
# found the half-made module and failed with "partially initialized module 'pandas' has no attribute 'Series'" (the
# load test, 8 sessions at once). Importing pandas with this module closes that window: a page imports figures
# before it builds any figure, and an import in progress makes other importers of this module wait.

# One colour per compared temperature, in the order the user listed them (Plotly's D3 palette).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#7f7f7f")
SLIDER_COLOUR = "#555555"
DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
MASS_COLOURS = {"sink": "#525252", "distant": "#9ecae1", "recent": "#fdae6b"}  # pastel: not a temperature colour
LOG_FLOOR = 1e-6  # weights below this share the lowest colour on a log scale


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def display_token(token: str) -> str:
    """A token as a safe, visible label: HTML escaped, whitespace-only and control characters made visible."""
    return escape(visible_token(token))


def escape(text: str) -> str:
    """HTML-escape text for plotly labels. Quotes stay as they are: plotly.js does not decode &quot;, and with
    < and > escaped no tag can form."""
    return html.escape(text, quote=False)


def _side_by_side(titles: Sequence[str], **kwargs) -> go.Figure:
    return make_subplots(rows=1, cols=len(titles), subplot_titles=[escape(t) for t in titles], **kwargs)


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
    figure = _side_by_side(titles, shared_yaxes=True, horizontal_spacing=0.03)
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


def hidden_keys(n: int, sliding_window: int | None = None) -> np.ndarray:
    """[query, key] True where the query cannot see the key: a later key, or (in a sliding-window layer, where a
    query sees its last `sliding_window` keys) a key before its window."""
    queries, keys = np.arange(n)[:, None], np.arange(n)[None, :]
    hidden = keys > queries
    if sliding_window:
        hidden |= keys <= queries - sliding_window
    return hidden


def attention_heatmaps(maps: Sequence[np.ndarray], tokens: Sequence[str], titles: Sequence[str],
                       log_colour: bool = False, sliding_window: int | None = None,
                       width: int = FULL_WIDTH) -> go.Figure:
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
    # "allow": the margins grow to fit the labels anyway, and plotly's default ("hide past div") measures every
    # label's box to find any past the figure's edge: 0.4 s of the page's one thread for the 4 panels' 320 labels
    ticks = {"tickmode": "array", "tickvals": positions[::step], "ticktext": labels[::step], "tickfont_size": 9,
             "ticklabeloverflow": "allow"}
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
    return fit(figure, width)


def _wrapped(text: str, width: int = 22) -> str:
    """A long label broken into lines for a colour bar or axis title (plotly does not wrap)."""
    return "<br>".join(escape(line) for line in textwrap.wrap(text, width))


def head_grids(grids: Sequence[np.ndarray], titles: Sequence[str], statistic: str = "normalized_entropy",
               width: int = FULL_WIDTH) -> go.Figure:
    """Layer x head grids of one statistic (a name of core.statistics.STATISTICS), one per temperature, on one colour
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
    return fit(figure, width)


def mass_bars(masses: Sequence[dict[str, np.ndarray]], titles: Sequence[str], width: int = FULL_WIDTH) -> go.Figure:
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
    return fit(figure, width)


def distance_bin_names(edges: Sequence[int]) -> list[str]:
    """Key-distance bins [lo, hi) as labels: 0, 1, 2-3, 4-7, ..."""
    return [f"{lo}" if hi - lo == 1 else f"{lo}-{hi - 1}" for lo, hi in itertools.pairwise(edges)]


def distance_profile(profiles: Sequence[np.ndarray], edges: np.ndarray, labels: Sequence[str],
                     width: int = FULL_WIDTH) -> go.Figure:
    """Attention mass of the last query in log-spaced key-distance bins (0, 1, 2-3, 4-7, ...), one line per T."""
    names = distance_bin_names(edges)
    figure = go.Figure()
    for index, (profile, label) in enumerate(zip(profiles, labels, strict=True)):
        figure.add_trace(go.Scatter(x=names, y=profile, mode="lines+markers", name=escape(label),
                                    line={"color": colour(index)},
                                    hovertemplate="distance %{x}<br>mass %{y:.3f}<extra>"
                                                  f"{escape(label)}</extra>"))
    figure.update_xaxes(type="category", title_text="key distance from the last query (tokens; 0 = itself)")
    figure.update_yaxes(title_text="attention mass in bin", rangemode="tozero")
    figure.update_layout(height=380, margin={"t": 30}, legend={"orientation": "h", "y": -0.3})
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
    figure.update_yaxes(title_text=_wrapped(label, 40) + f"<br>{'geometric mean' if ratio else 'mean'} of heads",
                        **({"type": "log"} if ratio else {"rangemode": "tozero"}))
    figure.update_layout(height=380, margin={"t": 30}, legend={"orientation": "h", "y": -0.25})
    return fit(figure, width)


def outcome_bars(labels: Sequence[str], losses: Sequence[float], answer_probs: Sequence[float] | None,
                 answer: str = "", width: int = FULL_WIDTH) -> go.Figure:
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
    return fit(figure, width)


def schedule_curves(lengths: np.ndarray, multipliers: dict[str, np.ndarray], as_temperature: bool = False,
                    width: int = FULL_WIDTH) -> go.Figure:
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
    return fit(figure, width)


def schedule_figure(schedules: Sequence[Schedule], as_temperature: bool = False, longest: int = 131072,
                    width: int = FULL_WIDTH) -> go.Figure:
    """schedule_curves of `schedules` over 400 log-spaced context lengths from 1 to `longest` tokens."""
    lengths = np.unique(np.geomspace(1, longest, 400).round()).astype(int)
    curves = {schedule.label: schedule.multipliers(longest)[lengths - 1] for schedule in schedules}
    return schedule_curves(lengths, curves, as_temperature=as_temperature, width=width)


# --- the context-length page: by query position, with the trained length drawn in ---------------------------------

TRAINED_COLOUR = "#333333"
BAND_ALPHA = 0.15  # interval bands: light enough that overlapping bands stay readable
# A sweep runs up to 8 temperatures and the 5 schedules at once: schedules get dark colours of their own (D3's
# category20b), one per schedule, so no schedule shares a colour with a temperature.
SCHEDULE_COLOURS = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173")


# A RoPE recipe's passes: one colour per recipe (Dark2 and Paired tones that are neither a temperature's nor a
# schedule's), its T = 1 solid, sharper temperatures darker and dotted, softer ones lighter and dashed.
RECIPE_COLOURS = ("#e7298a", "#1b9e77", "#a6761d", "#6a3d9a", "#b15928", "#66a61e", "#e6ab02", "#666666")
BEST_STYLE = {"color": "#000000", "dash": "dot", "width": 2.5}  # the best constant temperature of each bucket


def _mix(hex_colour: str, towards: int, share: float) -> str:
    """`hex_colour` moved `share` of the way to black (towards 0) or white (towards 255)."""
    parts = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{round(part + (towards - part) * share):02x}" for part in parts)


def recipe_style(temperature: float | None, recipe_colour: str) -> dict:
    """The line of one pass on a RoPE recipe: T = 1 solid in the recipe's colour; the further T is from 1, the
    darker (sharper, dotted) or lighter (softer, dashed); a schedule on the recipe dash-dotted."""
    if temperature is None:
        return {"color": recipe_colour, "dash": "dashdot", "width": 2}
    if temperature == 1.0:
        return {"color": recipe_colour, "dash": "solid", "width": 3}
    share = min(0.7, 0.2 + 1.2 * abs(math.log(temperature)))
    return {"color": _mix(recipe_colour, 0 if temperature < 1 else 255, share),
            "dash": "dot" if temperature < 1 else "dash", "width": 2}


def sweep_styles(temperatures: Sequence[float | None], labels: Sequence[str],
                 recipes: Sequence[str | None] | None = None) -> list[dict]:
    """A line style per sweep result. Constant temperatures take the app's palette in the order they were run
    (T = 1, the reference, drawn thicker); schedules are dashed, each in its own dark colour (SCHEDULE_COLOURS, in
    the order of model_utils.core.schedules.SCHEDULES); a result on a RoPE recipe (`recipes`, None for the model's own
    positions) takes its recipe's colour (RECIPE_COLOURS, in the order the recipes first appear), recipe_style."""
    recipes = [None] * len(labels) if recipes is None else recipes
    on_recipes = list(dict.fromkeys(recipe for recipe in recipes if recipe is not None))
    styles, constants = [], 0
    for temperature, label, recipe in zip(temperatures, labels, recipes, strict=True):
        if recipe is not None:
            styles.append(recipe_style(temperature, RECIPE_COLOURS[on_recipes.index(recipe) % len(RECIPE_COLOURS)]))
            continue
        if temperature is not None:
            styles.append({"color": colour(constants), "dash": "solid", "width": 3.5 if temperature == 1.0 else 2})
            constants += 1
            continue
        name = label.split(" (")[0]
        index = list(SCHEDULES).index(name) if name in SCHEDULES else len(styles)
        styles.append({"color": SCHEDULE_COLOURS[index % len(SCHEDULE_COLOURS)],
                       "dash": DASHES[1 + index % (len(DASHES) - 1)], "width": 2})
    return styles


def _rgba(hex_colour: str, alpha: float) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def add_trained_length(figure: go.Figure, trained_length: int | None, line_colour: str = TRAINED_COLOUR,
                       position: str = "top left", **where) -> None:
    """A dashed vertical line at the trained length, labelled, on every panel (`where`: row/col of a subplot)."""
    if trained_length is None:
        return
    figure.add_vline(x=trained_length, line_dash="dash", line_color=line_colour, line_width=1.5,
                     annotation_text=f"trained length {trained_length:,}", annotation_position=position,
                     annotation_font_size=11, annotation_font_color=line_colour, **where)


def _positions(buckets: Sequence[Sequence[int]]) -> tuple[np.ndarray, list[str]]:
    """Bucket midpoints (the x of a point) and the positions each bucket holds, for the hover."""
    middles = np.array([(start + stop - 1) / 2 for start, stop in buckets], dtype=np.float64)
    return middles, [f"positions {start:,}-{stop - 1:,}" for start, stop in buckets]


def position_lines(buckets: Sequence[Sequence[int]], values: Sequence[np.ndarray], labels: Sequence[str],
                   styles: Sequence[dict], trained_length: int | None, y_title: str,
                   intervals: Sequence[tuple[np.ndarray, np.ndarray] | None] | None = None, log_y: bool = False,
                   title: str = "", width: int = FULL_WIDTH) -> go.Figure:
    """One line per result of a per-bucket quantity against the query position (each point at its bucket's middle),
    with optional interval bands (low, high; None for a line without one) in the line's colour, and the trained
    length drawn in."""
    middles, ranges = _positions(buckets)
    figure = go.Figure()
    for index, (series, label, style) in enumerate(zip(values, labels, styles, strict=True)):
        name = escape(label)
        if intervals is not None and intervals[index] is not None:
            low, high = intervals[index]
            figure.add_trace(go.Scatter(x=middles, y=high, mode="lines", line={"width": 0}, legendgroup=name,
                                        showlegend=False, hoverinfo="skip"))
            figure.add_trace(go.Scatter(x=middles, y=low, mode="lines", line={"width": 0}, fill="tonexty",
                                        fillcolor=_rgba(style["color"], BAND_ALPHA), legendgroup=name,
                                        showlegend=False, hoverinfo="skip"))
        custom = ranges if intervals is None or intervals[index] is None else [
            f"{where}<br>interval {lo:.3f} to {hi:.3f}" for where, lo, hi in zip(ranges, *intervals[index],
                                                                                 strict=True)]
        figure.add_trace(go.Scatter(x=middles, y=series, mode="lines+markers", name=name, legendgroup=name,
                                    line=style, marker={"size": 5, "color": style["color"]}, customdata=custom,
                                    hovertemplate=f"%{{customdata}}<br>%{{y:{'.4g' if log_y else '.3f'}}}"
                                                  f"<extra>{name}</extra>"))
    add_trained_length(figure, trained_length)
    figure.update_xaxes(title_text="query position (tokens)", rangemode="tozero")
    figure.update_yaxes(title_text=y_title, **({"type": "log"} if log_y else {}))
    figure.update_layout(height=420, margin={"t": 40 if title else 30}, legend={"orientation": "h", "y": -0.25},
                         title_text=escape(title) if title else None)
    return fit(figure, width)


def distance_heatmaps(profiles: Sequence[np.ndarray], edges: Sequence[int], buckets: Sequence[Sequence[int]],
                      titles: Sequence[str], trained_length: int | None, width: int = FULL_WIDTH) -> go.Figure:
    """Attention mass by key distance (log-spaced bins: 0, 1, 2-3, 4-7, ...) for every position bucket, one panel
    per result side by side on one colour scale; each bucket spans its own positions on the x axis."""
    names = distance_bin_names(edges)
    x_edges = [buckets[0][0], *(stop for _, stop in buckets)]
    _, ranges = _positions(buckets)
    figure = _side_by_side(titles, shared_yaxes=True, horizontal_spacing=0.04)
    top = max(float(np.nanmax(profile)) for profile in profiles)
    for column, profile in enumerate(profiles, start=1):
        profile = np.asarray(profile, dtype=np.float64)  # [bucket, bin]
        custom = np.array([[where] * len(names) for where in ranges]).T  # [bin, bucket]
        figure.add_trace(go.Heatmap(z=profile.T, x=x_edges, y=names, coloraxis="coloraxis", customdata=custom,
                                    hovertemplate="%{customdata}<br>key distance %{y}<br>mass %{z:.3f}"
                                                  "<extra></extra>"), row=1, col=column)
        # white on the dark end of Viridis: the low-mass cells are the ones the line crosses
        add_trained_length(figure, trained_length, "white", "bottom left", row=1, col=column)
    figure.update_xaxes(title_text="query position (tokens)")
    figure.update_yaxes(type="category", title_text="key distance (tokens; 0 = itself)", row=1, col=1)
    figure.update_layout(coloraxis={"cmin": 0.0, "cmax": top, "colorscale": "Viridis",
                                    "colorbar": {"title": {"text": "attention<br>mass in bin"}}},
                         height=440, margin={"t": 50})
    return fit(figure, width)


def pass_heatmap(buckets: Sequence[Sequence[int]], values: np.ndarray, labels: Sequence[str],
                 trained_length: int | None, z_title: str, title: str = "", width: int = FULL_WIDTH) -> go.Figure:
    """One row per pass (`values` [pass, bucket], labels top to bottom in the order given) against the query
    position, each bucket spanning its own positions, colour from 0 to the largest value, the trained length drawn
    in: every pass of a sweep on one chart."""
    values = np.asarray(values, dtype=np.float64)
    x_edges = [buckets[0][0], *(stop for _, stop in buckets)]
    _, ranges = _positions(buckets)
    names = [escape(label) for label in labels]
    custom = np.array([ranges] * len(names))  # [pass, bucket]
    top = float(np.nanmax(values)) if np.isfinite(values).any() else 1.0
    figure = go.Figure(go.Heatmap(z=values, x=x_edges, y=names, coloraxis="coloraxis", customdata=custom,
                                  hovertemplate="%{y}<br>%{customdata}<br>%{z:.3f}<extra></extra>"))
    add_trained_length(figure, trained_length, "white", "bottom left")
    figure.update_xaxes(title_text="query position (tokens)")
    figure.update_yaxes(type="category", autorange="reversed")
    figure.update_layout(coloraxis={"cmin": 0.0, "cmax": max(top, 1e-9), "colorscale": "Viridis",
                                    "colorbar": {"title": {"text": _wrapped(z_title, 18)}}},
                         height=150 + 22 * len(names), margin={"t": 40 if title else 30},
                         title_text=escape(title) if title else None)
    return fit(figure, width)


def best_temperatures(buckets: Sequence[Sequence[int]], best: Sequence, tried: Sequence[float],
                      trained_length: int | None, title: str = "", width: int = FULL_WIDTH) -> go.Figure:
    """The best constant temperature of each bucket (an entry of a sweep's or a summary's `best`: temperature,
    saved and their intervals) with its interval as error bars, T = 1 as a dotted line, and the tried temperatures
    as the y ticks."""
    middles, ranges = _positions(buckets)
    chosen = np.array([entry.temperature for entry in best], dtype=np.float64)
    low = np.array([entry.temperature_interval[0] for entry in best], dtype=np.float64)
    high = np.array([entry.temperature_interval[1] for entry in best], dtype=np.float64)
    hover = [f"{where}<br>best T {entry.temperature:g}, interval {lo:g} to {hi:g}<br>saves {entry.saved:.3f} "
             f"nats per token against T = 1 (interval {entry.saved_interval[0]:.3f} to "
             f"{entry.saved_interval[1]:.3f})" for where, entry, lo, hi in zip(ranges, best, low, high, strict=True)]
    figure = go.Figure(go.Scatter(
        x=middles, y=chosen, mode="markers", name="best T", marker={"size": 10, "color": "black"},
        error_y={"type": "data", "symmetric": False, "array": high - chosen, "arrayminus": chosen - low,
                 "thickness": 1.5, "width": 6}, customdata=hover, hovertemplate="%{customdata}<extra></extra>"))
    figure.add_hline(y=1.0, line_dash="dot", line_color="grey", annotation_text="T = 1",
                     annotation_position="bottom right")
    add_trained_length(figure, trained_length)
    tried = sorted(tried)
    spread = max(0.05, (tried[-1] - tried[0]) * 0.08)
    figure.update_xaxes(title_text="query position (tokens)", rangemode="tozero")
    figure.update_yaxes(title_text="best temperature T<br>(above 1: softer, below 1: sharper)", tickmode="array",
                        tickvals=tried, ticktext=[f"{t:g}" for t in tried],
                        range=[tried[0] - spread, tried[-1] + spread])
    figure.update_layout(height=380, margin={"t": 40 if title else 30}, showlegend=False,
                         title_text=escape(title) if title else None)
    return fit(figure, width)


def fitted_against_law(points: Sequence[dict], width: int = FULL_WIDTH) -> go.Figure:
    """Fitted logit multipliers 1 / T on a RoPE recipe (each point: scale s, multiplier, its fold range as error
    bars, a label) against YaRN's published law m(s) = (0.1 ln s + 1)^2, with m = 1 (no temperature) dotted."""
    largest = max([4.0, *(point["scale"] * 1.25 for point in points)])
    scales = np.linspace(1.0, largest, 200)
    figure = go.Figure(go.Scatter(x=scales, y=yarn_multiplier(scales), mode="lines", name="YaRN's law (0.1 ln s + 1)²",
                                  line={"color": colour(1)}))
    for index, point in enumerate(points):
        low, high = point["range"]
        figure.add_trace(go.Scatter(
            x=[point["scale"]], y=[point["multiplier"]], mode="markers", name=escape(point["label"]),
            marker={"size": 11, "color": colour(index + 2) if index else "black"},
            error_y={"type": "data", "symmetric": False, "array": [high - point["multiplier"]],
                     "arrayminus": [point["multiplier"] - low], "thickness": 1.5, "width": 6},
            hovertemplate=f"{escape(point['label'])}<br>s = %{{x:g}}, fitted m = %{{y:.3f}} (folds {low:.3f} to "
                          f"{high:.3f})<br>YaRN's law: {float(yarn_multiplier(point['scale'])):.3f}<extra></extra>"))
    figure.add_hline(y=1.0, line_dash="dot", line_color="grey", annotation_text="m = 1 (T = 1)",
                     annotation_position="bottom right")
    figure.update_xaxes(title_text="RoPE scale factor s")
    figure.update_yaxes(title_text="logit multiplier m = 1 / T<br>(above 1: sharper)")
    figure.update_layout(height=360, margin={"t": 30}, legend={"orientation": "h", "y": -0.25})
    return fit(figure, width)


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
