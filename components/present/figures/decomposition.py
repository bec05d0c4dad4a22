"""The decomposition chart: one horizontal bar per lever (what it saves past the trained length, with its 95%
interval; a recipe coloured by its family where more than one family ran), on the scale of the loss rise, which is
drawn as a dashed line: a bar that reaches the line brings the whole rise back. Each bar is named in plain words
(words.chart_label), its code name (words.row_label) in the hover text. Pure: numbers in, a plotly figure out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from components.present.figures.base import escape
from components.present.margins import FULL_WIDTH, NARROWEST, SLACK, TICK_PX, WORD_EM, fit, left_margin, text_px
from model_utils.core.records.verdict import Decomposition, DecompositionRow, Family, LeverKind
from model_utils.verdicts.words import FAMILIES, chart_label, row_label, share_label

KIND_COLOURS = {LeverKind.RECIPE: "#1f77b4", LeverKind.TEMPERATURE: "#d62728", LeverKind.ON_TOP: "#ff7f0e",
                LeverKind.SCHEDULE: "#9467bd"}
KIND_NAMES = {LeverKind.RECIPE: "RoPE recipe at T = 1", LeverKind.TEMPERATURE: "best T alone, per block",
              LeverKind.ON_TOP: "a T on top of a recipe", LeverKind.SCHEDULE: "published schedule"}
AXIS = "loss saved (nats per token) against T = 1"  # what a bar measures, past the trained length
# where a sweep ran more than one family of recipes, each family's recipes get a colour and a legend entry, named
# short (a legend row holds few long names; FAMILIES' "(interpolation)" is in the bar's hover)
LEGEND_FAMILIES = {Family.FREQUENCY: "frequency change", Family.REMAP: "distance remapping",
                   Family.SINK_WINDOW: "sink + window"}
FAMILY_COLOURS = {Family.FREQUENCY: KIND_COLOURS[LeverKind.RECIPE], Family.REMAP: "#2ca02c",
                  Family.SINK_WINDOW: "#8c564b"}


@dataclass(frozen=True, kw_only=True)
class Bar:
    """One lever as the chart draws it: its name, kind, family, saving, interval and share of the rise, and its code
    name for the hover text ('' where it has none apart from its name)."""

    label: str
    kind: LeverKind
    family: Family | None
    saved: float
    interval: tuple[float, float] | None
    share: float | None
    code: str = ""


def bars(decomposition: Decomposition) -> list[Bar]:
    """The decomposition's levers with a saving, as bars, in its order."""
    return [_bar(row, decomposition) for row in decomposition.levers if row.saved is not None]


def _bar(row: DecompositionRow, decomposition: Decomposition) -> Bar:
    return Bar(label=chart_label(row), kind=row.lever, family=row.family, saved=row.saved, interval=row.interval,
               share=decomposition.share_of_rise(row), code=row_label(row))


def decomposition_chart(decomposition: Decomposition, width: int = FULL_WIDTH, title: str = "") -> go.Figure:
    """The levers of a verdict's decomposition on the scale of its rise (nats per token): bars in the verdict's
    order, the first at the top; one legend entry per kind, and per recipe family where more than one ran. Each
    bar's saving and share of the rise is written just right of its interval (and of 0), on an x axis long enough
    to hold it; `title` (words.chart_title: the model and what it was measured on) over it."""
    return bars_chart(bars(decomposition), decomposition.rise, width, title)


def bars_chart(shown: Sequence[Bar], rise: float, width: int = FULL_WIDTH, title: str = "") -> go.Figure:
    """decomposition_chart of the bars `shown`, the rise and the title."""
    figure = go.Figure()
    labels = [escape(lever.label) for lever in shown]
    for name, colour, chosen in _series(shown):
        saved = [lever.saved for lever in chosen]
        low, high = zip(*(_bounds(lever) for lever in chosen), strict=True)
        figure.add_trace(go.Bar(
            y=[escape(lever.label) for lever in chosen], x=saved, orientation="h", name=name,
            marker_color=colour, text=[_share(lever) for lever in chosen], textposition="none",
            hovertext=[_hover_name(lever) for lever in chosen],
            error_x={"type": "data", "symmetric": False, "thickness": 1.5,
                     "array": [top - x for top, x in zip(high, saved, strict=True)],
                     "arrayminus": [x - bottom for bottom, x in zip(low, saved, strict=True)]},
            hovertemplate="%{hovertext}<br>saves %{x:+.3f} nats/token<br>%{text}<extra></extra>"))
    for label, lever in zip(labels, shown, strict=True):
        figure.add_annotation(x=max(0.0, _bounds(lever)[1]), y=label, text=_said(lever), showarrow=False,
                              xanchor="left", xshift=4, font={"size": TICK_PX})
    if rise > 0:
        figure.add_vline(x=rise, line_dash="dash", line_color="black",
                         annotation_text=f"the loss rise, {rise:.2f}", annotation_position="top")
    figure.add_vline(x=0, line_color="grey", line_width=1)
    figure.update_yaxes(categoryorder="array", categoryarray=labels[::-1])
    figure.update_xaxes(title_text=AXIS)
    figure.update_layout(height=120 + 30 * len(shown) + (30 if title else 0), barmode="overlay",
                         margin={"t": 60 if title else 30}, legend={"orientation": "h", "y": -0.3})
    if title:
        figure.update_layout(title={"text": escape(title), "x": 0, "xanchor": "left", "y": 0.99, "yanchor": "top"})
    figure.update_xaxes(range=_x_range(figure, shown, rise, width))
    return fit(figure, width)


def _series(shown: Sequence[Bar]) -> list[tuple[str, str, list[Bar]]]:
    """(legend name, colour, bars) of each trace: one per kind, the recipes split by family (FAMILIES) where a
    family besides the frequency changes ran."""
    families = [family for family in FAMILIES if any(lever.family == family for lever in shown
                                                     if lever.kind is LeverKind.RECIPE)]
    series = []
    for kind, colour in KIND_COLOURS.items():
        chosen = [lever for lever in shown if lever.kind is kind]
        if kind is LeverKind.RECIPE and families not in ([], [Family.FREQUENCY]):
            series += [(f"{LEGEND_FAMILIES[family]}, T = 1", FAMILY_COLOURS[family],
                        [lever for lever in chosen if lever.family == family]) for family in families]
        elif chosen:
            series.append((KIND_NAMES[kind], colour, chosen))
    return series


def _bounds(lever: Bar) -> tuple[float, float]:
    """The lever's 95% interval, or its saving twice where it has none (no error bar)."""
    low, high = lever.interval or (lever.saved, lever.saved)
    return low, high


def _hover_name(lever: Bar) -> str:
    """The bar's plain name, then its code name where it has another."""
    name = escape(lever.label)
    return name if lever.code in ("", lever.label) else f"{name}<br>{escape(lever.code)}"


def _share(lever: Bar) -> str:
    return "" if lever.share is None else share_label(lever.share)


def _said(lever: Bar) -> str:
    share = _share(lever)
    return f"{lever.saved:+.3f}" + (f" ({share})" if share else "")


def _x_range(figure: go.Figure, shown: Sequence[Bar], rise: float, width: int) -> list[float]:
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
