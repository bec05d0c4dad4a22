"""The decomposition chart: one horizontal bar per lever (what it saves past the trained length, with its 95%
interval; a recipe coloured by its family where more than one family ran), on the scale of the loss rise, which is
drawn as a dashed line: a bar that reaches the line brings the whole rise back. Pure: numbers in, a plotly figure
out."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from components.present.figures.base import escape
from components.present.margins import FULL_WIDTH, NARROWEST, SLACK, TICK_PX, WORD_EM, fit, left_margin, text_px
from model_utils.verdicts.decomposition import FAMILIES, Lever, percent_of_rise

KIND_COLOURS = {"recipe": "#1f77b4", "temperature": "#d62728", "on_top": "#ff7f0e", "schedule": "#9467bd"}
KIND_NAMES = {"recipe": "RoPE recipe at T = 1", "temperature": "best constant T alone",
              "on_top": "a temperature on top of a recipe", "schedule": "published schedule"}
# where a sweep ran more than one family of recipes, each family's recipes get a colour and a legend entry
FAMILY_COLOURS = {"frequency": KIND_COLOURS["recipe"], "remap": "#2ca02c", "sink_window": "#8c564b"}


def decomposition_chart(levers: Sequence[Lever], rise: float, width: int = FULL_WIDTH) -> go.Figure:
    """`levers` (verdicts.decomposition.Lever: label, kind, family, saved, interval, share_of_rise); `rise` in nats
    per token. Bars in the order given, the first at the top; one legend entry per kind, and per recipe family where
    more than one ran. Each bar's saving and share of the rise is written just right of its interval (and of 0), on
    an x axis long enough to hold it."""
    figure = go.Figure()
    shown = [lever for lever in levers if lever.saved is not None]
    labels = [escape(lever.label) for lever in shown]
    for name, colour, chosen in _series(shown):
        saved = [lever.saved for lever in chosen]
        low, high = zip(*(_bounds(lever) for lever in chosen), strict=True)
        figure.add_trace(go.Bar(
            y=[escape(lever.label) for lever in chosen], x=saved, orientation="h", name=name,
            marker_color=colour, text=[_share(lever) for lever in chosen], textposition="none",
            error_x={"type": "data", "symmetric": False, "thickness": 1.5,
                     "array": [top - x for top, x in zip(high, saved, strict=True)],
                     "arrayminus": [x - bottom for bottom, x in zip(low, saved, strict=True)]},
            hovertemplate="%{y}<br>saves %{x:+.3f} nats/token<br>%{text}<extra></extra>"))
    for label, lever in zip(labels, shown, strict=True):
        figure.add_annotation(x=max(0.0, _bounds(lever)[1]), y=label, text=_said(lever), showarrow=False,
                              xanchor="left", xshift=4, font={"size": TICK_PX})
    if rise > 0:
        figure.add_vline(x=rise, line_dash="dash", line_color="black",
                         annotation_text=f"the loss rise, {rise:.2f}", annotation_position="top")
    figure.add_vline(x=0, line_color="grey", line_width=1)
    figure.update_yaxes(categoryorder="array", categoryarray=labels[::-1])
    figure.update_xaxes(title_text="nats per token saved past the trained length (against T = 1)")
    figure.update_layout(height=120 + 30 * len(shown), barmode="overlay", margin={"t": 30},
                         legend={"orientation": "h", "y": -0.3})
    figure.update_xaxes(range=_x_range(figure, shown, rise, width))
    return fit(figure, width)


def _series(shown: Sequence[Lever]) -> list[tuple[str, str, list[Lever]]]:
    """(legend name, colour, levers) of each trace: one per kind, the recipes split by family (FAMILIES) where a
    family besides the frequency changes ran."""
    families = [family for family in FAMILIES if any(lever.family == family for lever in shown
                                                     if lever.kind == "recipe")]
    series = []
    for kind, colour in KIND_COLOURS.items():
        chosen = [lever for lever in shown if lever.kind == kind]
        if kind == "recipe" and families not in ([], ["frequency"]):
            series += [(f"{FAMILIES[family]} at T = 1", FAMILY_COLOURS[family],
                        [lever for lever in chosen if lever.family == family]) for family in families]
        elif chosen:
            series.append((KIND_NAMES[kind], colour, chosen))
    return series


def _bounds(lever: Lever) -> tuple[float, float]:
    """The lever's 95% interval, or its saving twice where it has none (no error bar)."""
    low, high = lever.interval or (lever.saved, lever.saved)
    return low, high


def _share(lever: Lever) -> str:
    return "" if lever.share_of_rise is None else percent_of_rise(lever)


def _said(lever: Lever) -> str:
    share = _share(lever)
    return f"{lever.saved:+.3f}" + (f" ({share})" if share else "")


def _x_range(figure: go.Figure, shown: Sequence[Lever], rise: float, width: int) -> list[float]:
    """From 0 or the lowest interval to the rise or the highest, then on as far as the widest note right of a bar
    needs at the narrowest window (margins.NARROWEST), so that no note runs out of the plot."""
    bounds = [bound for lever in shown for bound in _bounds(lever)]
    low, high = min([0.0, *bounds]), max([0.0, rise, *bounds])
    span = (high - low) or 1.0
    plot = NARROWEST * width - left_margin(figure) - SLACK  # px
    note = max((text_px(_said(lever), TICK_PX, WORD_EM) + 12 for lever in shown), default=0.0)
    # the notes start at max(0, the interval's top); the widest from the highest, in the worst case
    extra = span * note / max(plot - note, plot / 2)
    return [low - 0.02 * span, high + extra]
