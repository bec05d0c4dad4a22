"""The Glossary page: every term of docs/GLOSSARY.md as a heading (the anchor the other pages link to), no model,
no chart, no sidebar control."""

from components.present import glossary
from tests.support.apptest import assert_clean, open_app


def test_the_glossary_shows_every_term_and_runs_nothing(tiny_env):
    at = open_app("glossary")
    assert_clean(at)
    assert [title.value for title in at.title] == ["Glossary"]
    headings = [m.value.split("\n", 1)[0] for m in at.markdown if m.value.startswith("##### ")]
    assert headings == [f"##### {entry.term}" for entry in glossary.read()]
    assert not at.get("plotly_chart")
    assert not at.sidebar.selectbox and not at.sidebar.text_input and not at.sidebar.radio


def test_a_link_to_a_term_opens_on_that_entry_first_and_an_unknown_term_on_the_list(tiny_env):
    entry = next(entry for entry in glossary.read() if entry.term == "Sliding-window layer")
    at = open_app("glossary", query={glossary.TERM_KEY: entry.anchor})
    assert_clean(at)
    assert [info.value for info in at.info] == [f"**{entry.term}.** {entry.text}"]
    at = open_app("glossary", query={glossary.TERM_KEY: "no-such-term"})
    assert_clean(at) and not at.info
    assert len([m for m in at.markdown if m.value.startswith("##### ")]) == len(glossary.read())
