"""The Context length page's charts: a per-bucket quantity against the query position with the trained length
drawn in (the loss, a statistic, one line per pass in its colour and dash), the distance profile and the
untrained-distance mass of every pass as heatmaps, the best temperature per bucket, and the fitted temperatures
against YaRN's law (as the temperature it amounts to)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from components.present.figures.base import DASHES, colour, escape, side_by_side, wrapped
from components.present.figures.maps import distance_bin_names
from components.present.margins import FULL_WIDTH, fit
from model_utils.core.schedules import SCHEDULES, yarn_multiplier

TRAINED_COLOUR = "#333333"
BAND_ALPHA = 0.15  # interval bands: light enough that overlapping bands stay readable
# A sweep runs up to 8 temperatures and the 5 schedules at once: schedules get dark colours of their own (D3's
# category20b), one per schedule, so no schedule shares a colour with a temperature.
SCHEDULE_COLOURS = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173")


# A RoPE recipe's passes: one colour per recipe (Dark2 and Paired tones that are neither a temperature's nor a
# schedule's), its T = 1 solid, sharper temperatures darker and dotted, softer ones lighter and dashed.
RECIPE_COLOURS = ("#e7298a", "#1b9e77", "#a6761d", "#6a3d9a", "#b15928", "#66a61e", "#e6ab02", "#666666")
BEST_STYLE = {"color": "#000000", "dash": "dot", "width": 2.5}  # the best constant temperature of each bucket
CUT_STYLE = {"color": "#7f7f7f", "dash": "dash", "width": 2.5}  # T = 1 with the context cut to the trained length


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


def sweep_styles(temperatures: Sequence[float | None], schedules: Sequence[str | None],
                 recipes: Sequence[str | None] | None = None) -> list[dict]:
    """A line style per sweep result. Constant temperatures take the app's palette in the order they were run
    (T = 1, the reference, drawn thicker); schedules (`schedules`: each result's schedule name, None for a constant
    temperature) are dashed, each in its own dark colour (SCHEDULE_COLOURS, in the order of
    model_utils.core.schedules.SCHEDULES); a result on a RoPE recipe (`recipes`, None for the model's own positions)
    takes its recipe's colour (RECIPE_COLOURS, in the order the recipes first appear), recipe_style."""
    recipes = [None] * len(schedules) if recipes is None else recipes
    on_recipes = list(dict.fromkeys(recipe for recipe in recipes if recipe is not None))
    styles, constants = [], 0
    for temperature, name, recipe in zip(temperatures, schedules, recipes, strict=True):
        if recipe is not None:
            styles.append(recipe_style(temperature, RECIPE_COLOURS[on_recipes.index(recipe) % len(RECIPE_COLOURS)]))
            continue
        if temperature is not None:
            styles.append({"color": colour(constants), "dash": "solid", "width": 3.5 if temperature == 1.0 else 2})
            constants += 1
            continue
        index = list(SCHEDULES).index(name) if name in SCHEDULES else len(styles)
        styles.append({"color": SCHEDULE_COLOURS[index % len(SCHEDULE_COLOURS)],
                       "dash": DASHES[1 + index % (len(DASHES) - 1)], "width": 2})
    return styles


def schedule_names(results) -> list[str | None]:
    """Each result's (or view's) schedule name for sweep_styles, None where it has no schedule."""
    return [getattr(result.schedule, "name", None) for result in results]


def rgba(hex_colour: str, alpha: float) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def add_trained_length(figure: go.Figure, trained_length: int | None, line_colour: str = TRAINED_COLOUR,
                       position: str = "top left", log_x: bool = False, **where) -> None:
    """A dashed vertical line at the trained length, labelled, on every panel (`where`: row/col of a subplot). On a
    log x axis (`log_x`) plotly draws a shape at the value itself but an annotation at log10 of it, so the label is
    added on its own there (one x for both put the line at 10^-ish of the axis or the label off it)."""
    if trained_length is None:
        return
    label = f"trained length {trained_length:,}"
    line = {"line_dash": "dash", "line_color": line_colour, "line_width": 1.5}
    if not log_x:
        figure.add_vline(x=trained_length, annotation_text=label, annotation_position=position,
                         annotation_font_size=11, annotation_font_color=line_colour, **line, **where)
        return
    figure.add_vline(x=trained_length, **line, **where)
    figure.add_annotation(x=math.log10(trained_length), y=1, yref="y domain", text=label, showarrow=False,
                          xanchor="right" if "left" in position else "left", yanchor="top",
                          font={"size": 11, "color": line_colour}, **where)


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
                                        fillcolor=rgba(style["color"], BAND_ALPHA), legendgroup=name,
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
    figure = side_by_side(titles, shared_yaxes=True, horizontal_spacing=0.04)
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
                                    "colorbar": {"title": {"text": wrapped(z_title, 18)}}},
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
    """Fitted temperatures on a RoPE recipe (each point: scale s, temperature, its range over documents as error
    bars, a label) against YaRN's published law as a temperature, T(s) = 1 / (0.1 ln s + 1)^2, with T = 1 dotted."""
    largest = max([4.0, *(point["scale"] * 1.25 for point in points)])
    scales = np.linspace(1.0, largest, 200)
    figure = go.Figure(go.Scatter(x=scales, y=1.0 / yarn_multiplier(scales), mode="lines",
                                  name="YaRN's law 1 / (0.1 ln s + 1)²", line={"color": colour(1)}))
    for index, point in enumerate(points):
        low, high = point["range"]
        law_t = 1.0 / float(yarn_multiplier(point["scale"]))
        figure.add_trace(go.Scatter(
            x=[point["scale"]], y=[point["temperature"]], mode="markers", name=escape(point["label"]),
            marker={"size": 11, "color": colour(index + 2) if index else "black"},
            error_y={"type": "data", "symmetric": False, "array": [high - point["temperature"]],
                     "arrayminus": [point["temperature"] - low], "thickness": 1.5, "width": 6},
            hovertemplate=f"{escape(point['label'])}<br>s = %{{x:g}}, fitted T = %{{y:.3f}} ({low:.3f} to "
                          f"{high:.3f})<br>YaRN's law: T = {law_t:.3f}<extra></extra>"))
    figure.add_hline(y=1.0, line_dash="dot", line_color="grey", annotation_text="T = 1",
                     annotation_position="top right")
    figure.update_xaxes(title_text="RoPE scale factor s")
    figure.update_yaxes(title_text="temperature T<br>(below 1: sharper)")
    figure.update_layout(height=360, margin={"t": 30}, legend={"orientation": "h", "y": -0.25})
    return fit(figure, width)
