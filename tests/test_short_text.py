"""A text too short for the question says so: with no key beyond the recent window and the sink, the distant mass
is 0 by definition, and the pages say why instead of drawing an empty answer (AppTest, tiny byte-level model, where
a text of k characters is k tokens)."""

import numpy as np
import pytest

from components import captions
from model_utils import analyze
from tests.apptest import array, assert_clean, chart, open_app, traces

SHORT = "The code is Marigold. Recall"  # 28 tokens, within the recent window of 32


def infos(at) -> list[str]:
    return [info.value for info in at.info]


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


def test_the_collapse_page_says_why_nothing_is_distant(tiny_env):
    at = open_app("collapse_inspector")
    assert_clean(at)
    assert not any(info.startswith("Nothing in this text is distant") for info in infos(at))  # the long default
    at.text_area(key="collapse_text").set_value(SHORT).run()
    assert_clean(at)
    note = next(info for info in infos(at) if info.startswith("Nothing in this text is distant"))
    assert "it has 28 tokens and the recent window is 32" in note
    assert "more than 33 tokens or a recent window of at most 26 tokens" in note
    distant = [array(trace["y"]) for trace in traces(chart(at, "collapse_masses"), "bar") if trace["name"] == "distant"]
    assert len(distant) == 4 and all(np.all(values == 0) for values in distant)

    at.number_input(key="window").set_value(8).run()  # a shorter window makes part of the text distant
    assert_clean(at)
    assert not any(info.startswith("Nothing in this text is distant") for info in infos(at))


def test_the_schedules_page_says_why_nothing_is_distant(tiny_env):
    at = open_app("length_schedules")
    at.text_area(key="schedule_text").set_value(SHORT).run()
    assert_clean(at)
    assert any(info.startswith("Nothing in this text is distant") for info in infos(at))


def test_the_maps_page_says_it_under_the_distant_mass_grid(tiny_env):
    at = open_app("attention_maps")
    at.text_area(key="maps_text").set_value(SHORT).run()
    assert_clean(at)
    assert not any(info.startswith("Nothing in this text is distant") for info in infos(at))  # entropy is shown
    at.selectbox(key="maps_statistic").set_value("distant_mass").run()
    assert_clean(at)
    assert any(info.startswith("Nothing in this text is distant") for info in infos(at))
