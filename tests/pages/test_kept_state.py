"""Nothing a visitor typed is lost: a page switch keeps each page's text and settings, a refused input keeps the text
and the other widgets, and a long text travels in a link by its id in the server's store (a link whose text the
server no longer holds says so, and opens no other text)."""

from components.serving.text_store import text_store
from tests.support.apptest import assert_clean, chart, open_app, traces

LONG_PROMPT = ("The code for the vault is 4817. " + "The archive keeps its ledgers in rows of grey boxes. " * 170
               + "What is the code for the vault?")


def switch(at, page: str):
    """A page switch as the browser makes it: the link's parameters belong to the page left behind."""
    at.query_params.clear()
    return at.switch_page(f"components/pages/{page}.py").run()


def test_a_page_switch_keeps_each_pages_text_and_scores(tiny_env):
    at = open_app("softmax_lab")
    at.text_input(key="lab_scores").set_value("3, 2, 1, 0").run()
    switch(at, "attention_maps")
    at.text_area(key="maps_text").set_value("The trophy did not fit in the suitcase because it was too big.").run()
    switch(at, "softmax_lab")
    assert at.text_input(key="lab_scores").value == "3, 2, 1, 0"
    assert chart(at, "lab_bars")["data"][0]["x"] == ["k0", "k1", "k2", "k3"]
    switch(at, "attention_maps")
    assert_clean(at)
    assert at.text_area(key="maps_text").value == "The trophy did not fit in the suitcase because it was too big."


def test_a_refused_temperature_then_its_fix_then_another_widget_keep_a_long_prompt(tiny_env):
    assert len(LONG_PROMPT) > 9000
    at = open_app("collapse_inspector")
    at.selectbox(key="collapse_limit").set_value(1024).run()
    at.text_area(key="collapse_text").set_value(LONG_PROMPT).run()
    assert_clean(at)
    at.text_input(key="temperatures").set_value("0.5, 1, abc").run()
    assert at.sidebar.error and at.text_area(key="collapse_text").value == LONG_PROMPT
    at.text_input(key="temperatures").set_value("0.5, 1").run()
    at.text_input(key="collapse_answer").set_value("4817").run()
    assert_clean(at)
    assert at.text_area(key="collapse_text").value == LONG_PROMPT
    assert at.selectbox(key="collapse_limit").value == 1024


def test_a_long_prompt_travels_in_the_link_by_its_id(tiny_env):
    at = open_app("collapse_inspector")
    at.text_area(key="collapse_text").set_value(LONG_PROMPT).run()
    assert "text" not in at.query_params
    key = at.query_params["text_id"]
    opened = open_app("collapse_inspector", query={"text_id": key})  # a fresh session of the same server
    assert_clean(opened)
    assert opened.text_area(key="collapse_text").value == LONG_PROMPT


def test_a_link_whose_text_is_no_longer_held_says_so_and_opens_no_other_text(tiny_env):
    assert text_store().get("0123456789abcdef") is None
    at = open_app("attention_maps", query={"text_id": "0123456789abcdef"})
    assert not at.exception
    assert any("no longer held by this server" in e.value for e in at.error)
    assert at.text_area(key="maps_text").value == ""
    assert not at.get("plotly_chart")
    at.text_area(key="maps_text").set_value("Pasted again.").run()  # pasting the text brings the page back
    assert_clean(at)
    assert traces(chart(at, "maps_heatmaps"), "heatmap")
