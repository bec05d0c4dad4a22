"""What the pages say, as pure functions of a report, a model's facts or the schedules' knobs (present/captions.py)."""

import numpy as np
import pytest

from components.present import captions
from components.present.figures.maps import attention_heatmaps
from components.present.margins import FULL_WIDTH, NARROWEST, WORD_EM, text_px
from model_utils import Schedule, analyze
from model_utils.core.schedules import SCHEDULES
from model_utils.verdicts.findings import direction_of
from model_utils.verdicts.words import temperature_words
from tests.support import SAMPLE_TEXT


def knobs(**values) -> dict[str, Schedule]:
    parameters = {name: info.default for name, info in SCHEDULES.items()} | values
    return {name: Schedule(name, value) for name, value in parameters.items()}


@pytest.fixture(scope="module")
def report(tiny):
    return analyze(tiny, SAMPLE_TEXT, temperatures=[0.5, 1.0, Schedule("logn", 64)], window=16)


def test_number_separates_thousands_and_drops_a_zero_fraction():
    assert [captions.number(v) for v in (1024, 1024.0, 0.5, "llama", 131072.0)] == [
        "1,024", "1,024", "0.5", "llama", "131,072"]


def test_measured_queries_and_run_summary_say_what_every_number_averages(report):
    n = report.n_tokens
    assert report.q_start == 16
    assert captions.measured_queries(report) == f"the {n - 16} queries at positions 16 to {n - 1}"
    summary = captions.run_summary(report)
    assert summary.startswith(f"{n} tokens at T=0.5, T=1, logn (base=64), in-model mode: computed in ")
    assert summary.endswith(f"Every statistic averages the {n - 16} queries at positions 16 to {n - 1}.")


def test_applied_caption_takes_the_direction_from_findings(report):
    caption = captions.applied_caption(report, 2, Schedule("logn", 64))
    assert caption.startswith(f"On this {report.n_tokens}-token prompt, logn (base=64) ")
    assert temperature_words(direction_of(report, 2)) in caption
    assert "m = " not in caption and "m from" not in caption  # the pages speak of T only
    measured = Schedule("logn", 64).multipliers(report.n_tokens)[16:]
    assert f"softer than T = 1 on {np.mean(measured < 1):.0%}" in caption
    assert caption.endswith(SCHEDULES["logn"].applied)


def test_applied_caption_names_the_queries_a_schedule_leaves_at_t_1(tiny):
    """Qwen's log-n keeps T = 1 up to its L: those queries are neither softer nor sharper, and the caption says so."""
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[1.0, Schedule("qwen-logn", 64)], window=16)
    measured = Schedule("qwen-logn", 64).multipliers(report.n_tokens)[16:]
    caption = captions.applied_caption(report, 1, Schedule("qwen-logn", 64))
    assert f"is sharper than T = 1 on {np.mean(measured > 1):.0%} of the measured queries" in caption
    assert f"; T = 1 on the other {np.mean(measured == 1):.0%}, over the " in caption
    assert f"(T from {1 / measured.max():.3g} to 1)" in caption
    assert "T = 1 on the other" not in captions.applied_caption(report, 0, Schedule("qwen-logn", 64))  # T = 1


def test_map_titles_name_what_their_number_is(report):
    mean_titles = captions.map_titles(report, 1, None)
    head_titles = captions.map_titles(report, 1, 3)
    for result, mean_title, head_title in zip(report.results, mean_titles, head_titles, strict=True):
        mean = result.heads["normalized_entropy"][1].mean()
        assert mean_title == f"{result.label}\nmean entropy {mean:.2f}"
        assert head_title == f"{result.label}\nentropy {result.heads['normalized_entropy'][1, 3]:.2f}"
    caption = captions.maps_caption(report, None, log_colour=False)
    assert "The entropy under each title is the mean of the 4 heads' normalized entropies H / ln(visible keys)" \
        in caption



def test_map_titles_fit_over_their_panels_four_side_by_side(tiny):
    """The titles once ran into each other ('T=0.5 · H / ln(visible keys) 0.0T=1 ...'): each line of each title,
    at its font size, must fit the width of its panel in the narrowest window the pages are drawn in."""
    report = analyze(tiny, "Four panels.", temperatures=[0.25, 0.75, 1.25, 2.5], window=16)
    n = report.n_tokens
    assert n <= 24  # four panels in one row: the narrowest they get
    maps = [np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]] * 4
    for head in (None, 2):
        titles = captions.map_titles(report, 1, head)
        figure = attention_heatmaps(maps, report.tokens, titles)
        plot_px = NARROWEST * FULL_WIDTH - figure.layout.margin.l - figure.layout.margin.r
        notes = figure.layout.annotations
        assert len(notes) == 4
        for number, note in enumerate(notes, start=1):
            assert note.text.count("<br>") == 1  # T on one line, the entropy on the next
            domain = figure.layout[f"xaxis{'' if number == 1 else number}"].domain
            assert text_px(note.text, note.font.size, WORD_EM) <= (domain[1] - domain[0]) * plot_px, note.text

def test_window_note_is_silent_without_sliding_windows():
    assert captions.window_note([None, None, None], 32) is None


def test_window_note_splits_recent_and_distant_inside_a_wide_window():
    note = captions.window_note([4096] * 30, 32)
    assert "In 30 of its 30 layers a query sees only its last 4,096 keys" in note
    assert "From query position 4,096 on, token 0 is outside that window: its sink mass is 0" in note
    assert "recent is its last 32 keys and distant the 4,064 keys it sees before those" in note
    assert "min(q + 1, 4,096)" in note


def test_window_note_lists_few_layers_and_each_window():
    note = captions.window_note([8, None, 8, 16], 12)
    assert "In layers 0 and 2 a query sees only its last 8 keys" in note
    assert "recent is every key it sees (the recent window of 12 covers the layer's 8) and distant is 0" in note
    assert "In layer 3 a query sees only its last 16 keys" in note
    assert "recent is its last 12 keys and distant the 4 keys it sees before those" in note


@pytest.mark.parametrize(("values", "said", "not_said"), [
    ({}, "Three curves coincide past 512 tokens", "no two"),
    ({"qwen-logn": 1024.0}, "SSMax and log-n coincide at every length", "Three"),
    ({"ssmax": 1024.0}, "Qwen's log-n and log-n coincide past 512 tokens", "Three"),
    ({"logn": 1024.0}, "Qwen's log-n and SSMax coincide past 512 tokens", "Three"),
    ({"logn": 1024.0, "ssmax": 2048.0}, "no two of Qwen's log-n (L = 512), SSMax (L = 2048) and log-n (base 1024)",
     "coincide past"),
])
def test_curves_caption_says_which_curves_coincide_only_when_the_knobs_make_it_true(values, said, not_said):
    caption = captions.curves_caption(knobs(**values))
    assert said in caption and not_said not in caption
    # and it is true: the curves said to coincide are equal past the shared length, the others are not
    schedules = knobs(**values)
    curves = {name: schedules[name].multipliers(20000) for name in ("qwen-logn", "ssmax", "logn")}
    for first, second in (("qwen-logn", "ssmax"), ("qwen-logn", "logn"), ("ssmax", "logn")):
        past = int(max(schedules[first].resolved_parameter, schedules[second].resolved_parameter))
        equal = np.allclose(curves[first][past:], curves[second][past:])
        named = {"qwen-logn": "Qwen's log-n", "ssmax": "SSMax", "logn": "log-n"}
        pair_said = "Three curves" in caption or (f"{named[first]} and {named[second]} coincide" in caption)
        assert equal == pair_said, (first, second, caption)


def test_schedule_rows_give_each_temperature_at_its_knob_in_a_few_words():
    schedules = knobs(logn=1000.0, llama4=2000.0)
    rows = {row["schedule"]: row for row in captions.schedule_rows(schedules)}
    assert rows["logn"]["temperature T"] == "ln 1000 / ln n for a query that sees n keys"
    assert "/ 2000⌋" in rows["llama4"]["temperature T"] and "s = 4" in rows["yarn"]["temperature T"]
    for name, schedule in schedules.items():  # each T is 1 / m of the last query at that length
        for n in captions.TABLE_LENGTHS:
            assert float(rows[name][f"T at {n:,} tokens"]) == pytest.approx(1 / schedule.multipliers(n)[-1],
                                                                             abs=5e-4)
        assert float(rows[name][f"T at {captions.TABLE_LENGTHS[-1]:,} tokens"]) < 1  # past its anchor, sharper
    assert max(len(cell) for row in rows.values() for cell in row.values()) <= 60  # a few words a cell


def test_schedule_details_keep_the_published_formula_the_source_and_what_is_applied():
    details = dict(captions.schedule_details(knobs(logn=1000.0)))
    said = details["logn (base=1000)"]
    assert said.startswith("T = ln 1000 / ln n") and SCHEDULES["logn"].formula_for(1000) in said
    assert SCHEDULES["logn"].source in said and said.endswith(SCHEDULES["logn"].applied)


@pytest.mark.parametrize("name, knob", [("yarn", 4.0), ("qwen-logn", 512.0), ("llama4", 8192.0), ("ssmax", 512.0),
                                        ("logn", 512.0)])
def test_each_schedules_temperature_in_words_is_one_over_its_multiplier(name, knob):
    """The T the table writes, evaluated at a few positions, against 1 / m of core.schedules."""
    import math

    schedule = Schedule(name, knob)
    positions = np.array([0, 100, 511, 512, 8191, 8192, 100000])
    m = schedule.multipliers(100001)[positions]
    written = {"yarn": lambda p: 1 / (0.1 * math.log(knob) + 1) ** 2,
               "qwen-logn": lambda p: 1 / (math.log(p + 1) / math.log(knob)) if p + 1 > knob else 1.0,
               "llama4": lambda p: 1 / (0.1 * math.log(math.floor((p + 1) / knob) + 1) + 1),
               "ssmax": lambda p: math.log(knob) / math.log(p + 1) if p else math.inf,
               "logn": lambda p: math.log(knob) / math.log(p + 1) if p else math.inf}[name]
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose([written(p) for p in positions], 1 / m)
    assert f"{knob:g}" in captions.schedule_temperature(schedule)


def test_softmax_rows_follow_the_closed_forms():
    rows = captions.softmax_rows([5.0, 0.0], [1.0, 2.0])
    assert [row["T"] for row in rows] == ["1", "2"]
    assert rows[0]["top / runner-up (gap 5)"] == "148.4x" and rows[1]["top / runner-up (gap 5)"] == "12.18x"
    assert rows[0]["top weight"] == round(np.exp(5) / (np.exp(5) + 1), 4)


def test_a_sharp_temperature_gives_a_ratio_a_classroom_can_read():
    rows = captions.softmax_rows([5.0, 0.0], [0.5, 0.1])
    assert rows[0]["top / runner-up (gap 5)"] == "22,026x"  # exp(10), not '2.203e+04x'
    assert rows[1]["top / runner-up (gap 5)"] == "5.185 × 10²¹x"  # exp(50)


def test_fact_lines_format_numbers():
    assert captions.fact_lines({"architecture": "llama", "trained length": 8192, "attention soft cap": 50.0}) == [
        ("architecture", "llama"), ("trained length", "8,192"), ("attention soft cap", "50")]


@pytest.mark.parametrize(("text", "window", "distant"), [
    ("x" * 33, 32, False),  # 33 tokens: the last query (32) sees keys 1..32, all within its window of 32
    ("x" * 34, 32, True),  # 34 tokens: the last query's key 1 lies beyond its window
    ("x" * 10, 8, True), ("xx", 1, False),
])
def test_the_note_appears_exactly_when_no_query_has_a_distant_key(tiny, text, window, distant):
    report = analyze(tiny, text, temperatures=[0.5, 2.0], window=window)
    note = captions.nothing_distant_note(report)
    assert (note is None) == distant
    measured = np.array([result.heads["distant_mass"] for result in report.results])
    if note is None:
        assert measured.max() > 0
    else:
        assert np.all(measured == 0.0)
        assert f"it has {report.n_tokens} tokens and the recent window is {window}" in note




def test_a_continuation_shows_special_tokens_as_marks_and_its_text_as_is():
    from components.present.captions import continuation_markdown, special_mark
    from model_utils.core.collapse import TextPiece

    pieces = [TextPiece(text=" 4817."), TextPiece(text="<|im_end|>", special=True)]
    assert continuation_markdown(pieces) == " 4817\\.:gray-background[⟨im\\_end⟩]"
    assert continuation_markdown([TextPiece(text="\n\nThe [vault]*")]) == "↵↵The \\[vault\\]\\*"
    assert continuation_markdown([]) == "(nothing)"
    assert [special_mark(token) for token in ("<|endoftext|>", "</s>", "<eos>")] == ["⟨endoftext⟩", "⟨/s⟩", "⟨eos⟩"]
