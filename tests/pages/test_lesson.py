"""The Lesson page: its steps in order, each a sentence and a link, and each link opening its page in the state the
step needs (the page's own widgets and the sidebar's, even when the session had other values); large type."""

import pytest

from components.present.lesson import STEPS, TROPHY
from tests.support.apptest import assert_clean, open_app


def test_the_lesson_shows_every_step_with_its_link_and_runs_no_model(tiny_env):
    at = open_app("lesson")
    assert_clean(at)
    headings = [m.value.split("\n")[0] for m in at.markdown if m.value.startswith("#### ")]
    assert headings == [f"#### {n}. {step.title}" for n, step in enumerate(STEPS, start=1)]
    links = at.get("page_link")
    assert [link.proto.label for link in links[: len(STEPS)]] == [step.label for step in STEPS]
    assert 5 <= len(STEPS) <= 7
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("step", STEPS, ids=[step.page + "-" + str(n) for n, step in enumerate(STEPS)])
def test_each_step_opens_its_page_in_the_state_it_needs(tiny_env, step):
    at = open_app("lesson")
    at.session_state["temperatures"] = "0.7, 1.3"  # the session had other temperatures: the step's link wins
    for key, value in step.query.items():
        at.query_params[key] = value
    at.switch_page(f"components/pages/{step.page}.py").run()
    assert_clean(at)
    if "t" in step.query:
        assert at.session_state["temperatures"] == step.query["t"].replace(",", ", ")
    if "scores" in step.query:
        assert at.text_input(key="lab_scores").value == step.query["scores"]
    if step.query.get("text") == TROPHY:
        assert at.text_area(key="maps_text").value == TROPHY
        # the query word the step names, found in the text: the tiny model reads a token per character, so the
        # token that ends "it" (not the "it" of "fit")
        assert at.selectbox(key="maps_query").value == TROPHY.index(" it ") + 2
        assert at.radio(key="mode").value == step.query["mode"]


def test_large_type_scales_every_page_and_travels_in_the_link(tiny_env):
    at = open_app("lesson")
    assert not [m for m in at.markdown if "font-size" in m.value]
    at.toggle(key="large_type").set_value(True).run()
    assert any("html { font-size: 150%; }" in m.value for m in at.markdown)
    assert at.query_params["big"] == "1"
    at.switch_page("components/pages/softmax_lab.py").run()
    assert any("font-size: 150%" in m.value for m in at.markdown)


def test_a_word_names_the_token_that_ends_it_however_the_text_was_split():
    from components.widgets.token_view import word_position

    assert word_position(["The", " trophy", " because", " it", " was"], "it") == 3
    assert word_position(list("because it was"), "it") == 9  # one token a character: the word's last one
    assert word_position(["A", " bit", " of", " it"], "it") == 3  # not the "it" inside "bit"
    with pytest.raises(ValueError):
        word_position(["no", " such"], "it")
