"""Margins that already fit a figure's labels, legend and colour bar, estimated from the figure alone, so that
plotly's automargin finds nothing to grow and draws each chart once, not twice (docs/ARCHITECTURE.md, Serving)."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

FULL_WIDTH = 940  # px: a chart across the page (Streamlit's wide layout in a 1,400 px window)
HALF_WIDTH = 460  # px: a chart in one of two columns
# A chart's width in a 1,280 px and in a 1,920 px window, relative to its width in a 1,400 px one (measured: 820 and
# 1,460 px across the page, 402 and 722 in a column). What a narrower chart needs more of (room for the last
# category's label, turned labels, legend rows) is estimated at the narrowest; the colour bar's gap, 2% of the plot,
# at the widest.
NARROWEST, WIDEST = 0.87, 1.56
TICK_PX, TITLE_PX = 12, 14  # Streamlit's theme: tick labels and legend entries 12 px, axis and colour-bar titles 14 px
CHAR_EM, WORD_EM = 0.5, 0.45  # mean advance of a character of Source Sans, in em: tick labels (digits), and words
LINE_EM = 1.3  # one line of text, in em
LEGEND_ROW, LEGEND_PAD, LEGEND_SYMBOL = 19, 12, 40  # px: a row of a horizontal legend, its padding, an entry's symbol
LEGEND_GAP = 8  # px between the x axis's title and a legend under it
MIN_PLOT = 160  # px: the least height left to a plot whose legend sits below it
# px plotly reserves past a set last tick label beyond its half width (Chromium drew the lab's "10" and "100" margins
# 2 px wider than the estimate without it: tests/browser, test_plotly_draws_each_chart_once_...)
LAST_TICK_PAD = 3
SLACK = 10  # px: rounding, glyphs wider than the mean, and a few px plotly adds that the estimate leaves out
_TAG = re.compile(r"<[^>]+>")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def text_px(text: object, size: float, em: float = CHAR_EM) -> float:
    """The width of a label's longest line, in px (plotly's `<br>` breaks lines; other tags add no width)."""
    lines = _BREAK.split(str(text)) if text is not None else [""]
    return max(len(html.unescape(_TAG.sub("", line))) for line in lines) * em * size


def line_count(text: object) -> int:
    return 0 if not text else len(_BREAK.split(str(text)))


def _nice_step(span: float, ticks: float) -> float:
    """The tick step plotly picks for `ticks` ticks over `span`, or a smaller one (more decimals: wider labels)."""
    raw = span / max(ticks, 1.0)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw * 0.999)  # plotly's roundBase10


def linear_labels(low: float, high: float, pixels: float) -> list[str]:
    """The tick labels of a linear axis over [low, high], about one per 30 px (plotly puts fewer)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [f"{low:g}"] if math.isfinite(low) else ["0"]
    step = _nice_step(high - low, pixels / 30)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    first = math.ceil(low / step - 1e-9)
    values = [(first + i) * step for i in range(int((high - low) / step + 1e-9) + 1)]
    return [_plotly_number(v, decimals) for v in values]


def _plotly_number(value: float, decimals: int) -> str:
    suffix = ""
    if abs(value) >= 1e4:  # plotly's default exponentformat "B": 10k, 1.5M
        limit, suffix = next((limit, suffix) for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k"))
                             if abs(value) >= limit)
        value, decimals = value / limit, decimals + 3
    text = f"{value:.{decimals}f}"
    return (text.rstrip("0").rstrip(".") if "." in text else text).replace("-", "−") + suffix


def _axis_values(figure: go.Figure, letter: str) -> list:
    """Every value the traces put on the first `letter` axis ("x" or "y"), flattened."""
    values: list = []
    for trace in figure.data:
        if (getattr(trace, f"{letter}axis", None) or letter) != letter:
            continue
        data = getattr(trace, letter, None)
        if data is None:
            continue
        values.extend(np.asarray(data, dtype=object).ravel().tolist())
        if letter == "y" and trace.type == "bar":
            values.append(0.0)  # bars start at 0
    return values


def tick_labels(figure: go.Figure, letter: str, pixels: float) -> tuple[list[str], bool]:
    """The tick labels of the first `letter` axis as plotly would draw them (a superset, for width), and whether
    they are one per category (or the figure's own tick text) rather than numbers plotly spaces itself."""
    axis = figure.layout[f"{letter}axis"]
    if axis.ticktext:
        return [str(t) for t in axis.ticktext], True
    values = _axis_values(figure, letter)
    if axis.type == "category" or any(isinstance(v, str) for v in values):
        return [str(v) for v in dict.fromkeys(values)], True
    numbers = np.array([v for v in values if v is not None], dtype=np.float64)
    numbers = numbers[np.isfinite(numbers)]
    if axis.type == "log":
        return (["1000"] if axis.exponentformat == "power" else ["100k"]), False  # 10⁶ is 4 digits wide; 100k, 1M
    if axis.range:
        low, high = axis.range
    else:
        low, high = (numbers.min(), numbers.max()) if numbers.size else (0.0, 1.0)
    if axis.rangemode == "tozero":
        low, high = min(low, 0.0), max(high, 0.0)
    return linear_labels(float(low), float(high), pixels), False


def _labels_px(labels: Sequence[str], axis) -> float:
    size = axis.tickfont.size or TICK_PX
    return max((text_px(label, size) for label in labels), default=0.0)


def _title(axis) -> object:
    return axis.title.text if axis.title else None


def left_margin(figure: go.Figure) -> float:
    """Tick labels of the first y axis and its title's lines, with Streamlit's standoff and plotly's gaps."""
    axis = figure.layout.yaxis
    height = figure.layout.height or 450
    ticks = _labels_px(tick_labels(figure, "y", height - 110)[0], axis)
    lines = line_count(_title(axis))
    outside = 18 if any(trace.type == "heatmap" for trace in figure.data) else 0  # plotly's heatmaps: ticks outside
    return ticks + outside + (43 + LINE_EM * TITLE_PX * (lines - 1) if lines else 21)


def _colour_bar(figure: go.Figure, plot_width: float) -> float:
    """A coloraxis colour bar at x = 1.02: the gap and padding, then the wider of its title and the bar with its tick
    labels."""
    if not any(getattr(trace, "coloraxis", None) for trace in figure.data):
        return 0.0
    axis = figure.layout.coloraxis
    bar = axis.colorbar
    title = text_px(bar.title.text, TITLE_PX, WORD_EM) if bar.title and bar.title.text else 0.0
    if bar.ticktext:
        labels = [str(t) for t in bar.ticktext]
    else:
        length = 0.75 * ((figure.layout.height or 450) - 130)  # Streamlit's theme: the bar is 3/4 of the plot
        labels = linear_labels(axis.cmin if axis.cmin is not None else 0.0,
                               axis.cmax if axis.cmax is not None else 1.0, length)
    ticks = max(text_px(label, TICK_PX) for label in labels)
    return 0.02 * plot_width + 52 + max(title, 28 + ticks)


def _x_labels(figure: go.Figure, plot_width: float) -> tuple[float, float]:
    """(the height the x tick labels take below the axis, how far the last one reaches past the plot's right edge)."""
    axis = figure.layout.xaxis
    labels, categorical = tick_labels(figure, "x", plot_width)
    size = axis.tickfont.size or TICK_PX
    widths = [text_px(label, size) for label in labels]
    widest = max(widths, default=0.0)
    angle = axis.tickangle if isinstance(axis.tickangle, (int, float)) else 0
    panels = sum(1 for key in figure.layout if key.startswith("xaxis")) or 1
    slot = plot_width / panels / max(len(labels), 1)
    if not angle and categorical and widest + 8 > slot:
        angle = 30  # plotly turns labels that would overlap (autotickangles 0, 30, 90), and 30 was enough here
    radians = math.radians(abs(angle))
    height = math.sin(radians) * widest + math.cos(radians) * LINE_EM * size
    past = 0.0
    if widths and axis.tickvals and axis.range and axis.type != "category" and not angle:
        past = _last_tick_past(axis, widths[-1], plot_width)  # numbers at set positions (their own tick text)
    elif categorical and widths and axis.tickangle is None:
        # the last category sits half a slot inside the edge; a turned label starts at its tick and runs right
        past = max(0.0, (math.cos(radians) if angle else 0.5) * widths[-1] - slot / 2)
    return height, past


def _last_tick_past(axis, label_width: float, plot_width: float) -> float:
    """How far the figure's own last tick label (a number at a set position) reaches past the plot's right edge:
    half its width, less its distance from the edge (a log axis's range is in log10 units)."""
    last = float(axis.tickvals[-1])
    if axis.type == "log":
        last = math.log10(last) if last > 0 else -math.inf
    low, high = (float(end) for end in axis.range)
    if not (math.isfinite(last) and high > low):
        return 0.0
    return max(0.0, label_width / 2 + LAST_TICK_PAD - (high - last) / (high - low) * plot_width)


def _titles_past(figure: go.Figure, plot_width: float) -> float:
    """How far a centred panel title (make_subplots puts them at the panels' middles, in paper coordinates) reaches
    past the plot's right edge. Plotly gives annotations no margin of their own: a long title over the last panel
    was cut at the figure's edge."""
    past = 0.0
    for note in figure.layout.annotations:
        if note.xref == "paper" and note.xanchor == "center" and note.x is not None and not note.showarrow:
            width = text_px(note.text, note.font.size or 16, WORD_EM)
            past = max(past, width / 2 - (1 - note.x) * plot_width)
    return past


def legend_rows(figure: go.Figure, plot_width: float) -> int:
    """Rows of a horizontal legend: one row if its entries (one per legend group) fit the plot's width, else as many
    as a grid of columns as wide as the widest entry needs."""
    entries, seen = [], set()
    for trace in figure.data:
        if trace.showlegend is False or not trace.name:
            continue
        if trace.showlegend is None and len(figure.data) == 1:
            continue  # plotly shows no legend for a single trace
        group = trace.legendgroup or id(trace)
        if group in seen:
            continue
        seen.add(group)
        entries.append(LEGEND_SYMBOL + text_px(trace.name, TICK_PX, WORD_EM))
    if sum(entries) <= plot_width:
        return 1 if entries else 0
    columns = max(1, int(plot_width // max(entries)))  # too long for a row: plotly lines the entries up in columns
    return math.ceil(len(entries) / columns)


def _axis_and_legend(figure: go.Figure, plot_width: float, narrowest: float | None) -> tuple[float, int]:
    """The px the x axis's labels and title take below the plot, and the rows of a horizontal legend drawn below
    the plot (0 for none), which fit puts under the axis's title (a legend at the caller's paper y = -d would sit d
    plot heights below the plot and run into the title once many rows leave the plot short). The legend gets the
    rows it needs `narrowest` px wide, but at most one more than `plot_width` px wide: plotly lays a long legend
    out in columns, and its column widths are not this estimate's to know."""
    narrowest = plot_width if narrowest is None else narrowest
    height, _ = _x_labels(figure, narrowest)
    axis = height + (60 if line_count(_title(figure.layout.xaxis)) else 12)
    legend = figure.layout.legend
    if figure.layout.showlegend is False or legend.orientation != "h" or legend.y is None or legend.y >= 0:
        return axis, 0
    rows = legend_rows(figure, plot_width)
    return axis, min(max(rows, legend_rows(figure, narrowest)), rows + 1)


def _legend_under_axis(figure: go.Figure, axis: float, bottom: int) -> None:
    """Put a legend below the plot just under the x axis's title: paper y is in plot heights, and the plot is what
    the figure's height leaves between its top and bottom margins (at least MIN_PLOT px: a figure too short for its
    legend grows)."""
    top = figure.layout.margin.t if figure.layout.margin.t is not None else 100
    plot = (figure.layout.height or 450) - top - bottom
    if plot < MIN_PLOT:
        figure.update_layout(height=top + MIN_PLOT + bottom)
        plot = MIN_PLOT
    figure.update_layout(legend={"y": -round((axis + LEGEND_GAP) / plot, 4), "yanchor": "top"})


def fit(figure: go.Figure, width: int = FULL_WIDTH) -> go.Figure:
    """Set the figure's left, right and bottom margins to fit its labels when drawn `width` px wide in a 1,400 px
    window, or in any window from 1,280 to 1,920 px wide (the top margin stays the caller's). Returns the figure."""
    left = left_margin(figure)
    _, past = _x_labels(figure, NARROWEST * width - left)
    right = max(past, _titles_past(figure, NARROWEST * width - left), _colour_bar(figure, WIDEST * width - left - 100))
    plot_width, narrowest = width - left - right, NARROWEST * width - left - right
    axis, rows = _axis_and_legend(figure, plot_width, narrowest)
    bottom = math.ceil(axis + (LEGEND_GAP + LEGEND_PAD + LEGEND_ROW * rows if rows else 0) + SLACK)
    figure.update_layout(margin={"l": math.ceil(left + SLACK), "r": math.ceil(right + SLACK) if right else 0,
                                 "b": bottom})
    if rows:
        _legend_under_axis(figure, axis, bottom)
    return figure
