"""The decomposition chart: one bar per lever with a saving, its interval as error bars, the rise as a line (bars
made by hand for the layout, and a verdict's own decomposition)."""

from components.present.figures.base import escape
from components.present.figures.decomposition import Bar, bars, bars_chart, decomposition_chart
from model_utils.core.records.verdict import Family, LeverKind
from model_utils.verdicts import words
from tests.golden.cases import verdicts


def lever(label: str, kind: LeverKind, saved: float, interval: tuple[float, float] | None, share: float | None,
          family: Family | None = None) -> Bar:
    return Bar(label=label, kind=kind, family=family, saved=saved, interval=interval, share=share)


LEVERS = [
    lever("yarn-rope (s=2) + T=1", LeverKind.RECIPE, 2.07, (1.99, 2.16), 1.06, Family.FREQUENCY),
    lever("best T per bucket (cross-fit on one text)", LeverKind.TEMPERATURE, 0.17, (0.16, 0.22), 0.09),
    lever("<b>ssmax</b>", LeverKind.SCHEDULE, 0.14, None, 0.07),
]


def test_a_verdicts_chart_has_one_bar_per_lever_with_a_saving():
    verdict = verdicts()["frequency recipes, YaRN's own temperature"]
    shown = bars(verdict.decomposition)
    assert [bar.saved for bar in shown] == [row.saved for row in verdict.decomposition.levers if row.saved is not None]
    figure = decomposition_chart(verdict.decomposition)
    assert sum(len(trace.x) for trace in figure.data) == len(shown)
    assert figure.layout.title.text is None and figure.layout.xaxis.title.text.startswith("loss saved")
    titled = decomposition_chart(verdict.decomposition, title="SmolLM2-135M, 8 documents")
    assert titled.layout.title.text == "SmolLM2-135M, 8 documents" and titled.layout.margin.t > figure.layout.margin.t


def test_one_bar_per_lever_with_its_interval():
    figure = bars_chart(LEVERS, rise=1.95)
    bars = {trace.name: trace for trace in figure.data}
    assert sum(len(trace.x) for trace in figure.data) == 3
    recipe = bars["RoPE recipe at T = 1"]
    assert list(recipe.x) == [2.07] and recipe.error_x.array[0] == 2.16 - 2.07
    assert recipe.error_x.arrayminus[0] == 2.07 - 1.99 and recipe.text[0] == "106% of the rise"
    assert bars["published schedule"].error_x.array[0] == 0  # no interval: no error bar
    assert "&lt;b&gt;" in bars["published schedule"].y[0]  # labels are escaped
    assert list(figure.layout.yaxis.categoryarray)[-1] == "yarn-rope (s=2) + T=1"  # first lever on top


def test_the_rise_is_a_dashed_line_only_when_the_loss_rises():
    lines = [shape for shape in bars_chart(LEVERS, rise=1.95).layout.shapes if shape.line.dash == "dash"]
    assert len(lines) == 1 and lines[0].x0 == 1.95
    assert not [s for s in bars_chart(LEVERS, rise=-0.1).layout.shapes if s.line.dash == "dash"]


def test_each_bar_says_its_saving_and_share_right_of_its_interval_inside_the_plot():
    figure = bars_chart(LEVERS, rise=1.95)
    notes = {note.y: note for note in figure.layout.annotations if isinstance(note.y, str)}  # not the rise line's
    assert notes["yarn-rope (s=2) + T=1"].text == "+2.070 (106% of the rise)"
    assert notes["yarn-rope (s=2) + T=1"].x == 2.16 and notes["yarn-rope (s=2) + T=1"].xanchor == "left"
    assert notes["&lt;b&gt;ssmax&lt;/b&gt;"].x == 0.14  # no interval: right of the bar itself
    assert set(notes) == {"yarn-rope (s=2) + T=1", "best T per bucket (cross-fit on one text)",
                          "&lt;b&gt;ssmax&lt;/b&gt;"}
    low, high = figure.layout.xaxis.range
    assert low < 0 and high > 2.16 + 0.3  # room right of the highest interval for its note
    negative = bars_chart([LEVERS[0], lever("yarn (scale=2)", LeverKind.SCHEDULE, -0.15, (-0.17, -0.13),
                                                        -0.08)], rise=1.95)
    note = next(n for n in negative.layout.annotations if n.y == "yarn (scale=2)")
    assert note.x == 0.0 and note.text == "-0.150 (-8% of the rise)"  # right of 0, clear of the axis labels


def test_with_more_than_one_recipe_family_each_family_has_its_colour_and_legend_entry():
    def recipe(label, family, saved):
        return lever(label, LeverKind.RECIPE, saved, None, saved / 2, family)

    levers = [LEVERS[1], recipe("yarn-rope (s=2) + T=1", Family.FREQUENCY, 2.07),
              recipe("self-extend (G=2, W=1024) + T=1", Family.REMAP, 1.5),
              recipe("rerope (W=4096) + T=1", Family.REMAP, 1.2),
              recipe("sink-window (S=4, W=8192) + T=1", Family.SINK_WINDOW, -0.4), LEVERS[2]]
    figure = bars_chart(levers, rise=2.0)
    bars = {trace.name: list(trace.y) for trace in figure.data}
    assert bars == {"frequency change, T = 1": ["yarn-rope (s=2) + T=1"],
                    "distance remapping, T = 1": ["self-extend (G=2, W=1024) + T=1", "rerope (W=4096) + T=1"],
                    "sink + window, T = 1": ["sink-window (S=4, W=8192) + T=1"],
                    "best T alone, per block": [LEVERS[1].label],
                    "published schedule": ["&lt;b&gt;ssmax&lt;/b&gt;"]}
    assert len({trace.marker.color for trace in figure.data}) == 5
    assert list(figure.layout.yaxis.categoryarray)[::-1] == [lever.label for lever in levers[:-1]] + [
        "&lt;b&gt;ssmax&lt;/b&gt;"]  # in the order given, the first on top
    # one family alone keeps the one legend entry of the recipes
    assert bars_chart(LEVERS, rise=1.95).data[0].name == "RoPE recipe at T = 1"


def test_a_verdicts_bars_have_plain_names_and_their_code_names_in_the_hover():
    verdict = verdicts()["frequency recipes, YaRN's own temperature"]
    levers = [row for row in verdict.decomposition.levers if row.saved is not None]
    figure = decomposition_chart(verdict.decomposition)
    hover = {name: text for trace in figure.data for name, text in zip(trace.y, trace.hovertext, strict=True)}
    assert len(hover) == len(levers)  # one bar per lever, each name its own
    assert "YaRN's stretch, s = 2" in hover and "yarn-rope (s=2) + T=1" not in hover
    for row in levers:
        name, code = escape(words.chart_label(row)), escape(words.row_label(row))
        assert hover[name].startswith(name) and code in hover[name]
