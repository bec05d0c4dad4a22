"""Widget groups as `*_ui()` functions that return plain values. Every widget has a key and goes through the URL
round trip of widgets/url_state.py, so a shared link reproduces the view.

Widgets shared by all pages live in the sidebar (drawn by app.py on every run) and are read back by pages through
`sidebar_choices()`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from components.present.glossary import term_link
from components.present.parsing import (
    MAX_UI_TEMPERATURES,
    MAX_WINDOW,
    format_numbers,
    parse_choice,
    parse_temperatures,
    parse_window,
)
from components.present.text import plain
from components.serving.settings import (
    DEFAULT_TEMPERATURES,
    DEFAULT_WINDOW,
    MAX_TEXT_CHARS,
    SHORT_TEXT_IN_URL,
    available_models,
    example_text,
)
from components.serving.text_store import MAX_TEXTS as TEXTS_KEPT
from components.serving.text_store import text_store
from components.widgets.url_state import linked_widget, publish_to_url, seed
from model_utils.core.errors import AnalysisError
from model_utils.core.limits import MODES
from model_utils.core.names import model_name
from model_utils.core.softmax import TEMPERATURE_RANGE

MODE_HELP = {
    "in-model": "T inside every layer during the pass: later layers and the predictions change.",
    "isolated": "each layer's T = 1 scores re-softmaxed at T, inputs held fixed: loss stays that of T = 1.",
}
MEAN_OF_HEADS = "mean of heads"
SIDEBAR_CONTROLS = ("model", "temperatures", "mode", "window")  # the shared sidebar's widgets, by key
LARGE_TYPE_SCALE = 1.5  # the projector's text size against the usual
LAST_GOOD_TEMPERATURES = "_last_good_temperatures"  # the sidebar's last temperatures that parsed


@dataclass(frozen=True, kw_only=True)
class SidebarChoices:
    """The sidebar's choices. `temperatures` is None when the text could not be parsed (see `error`)."""

    model: str
    temperatures: tuple[float, ...] | None
    error: str | None
    mode: str
    window: int


def sidebar_ui(acting: Sequence[str] = SIDEBAR_CONTROLS, note: str = "", opened: bool = False) -> SidebarChoices:
    """The shared sidebar: model, temperatures, mode, recent window; only the controls `acting` on the page are
    drawn (under `note`), the others keep their values for the pages they act on. `opened`: the page was just
    opened, so what its link names (a lesson step's temperatures) replaces what the session had."""
    models = available_models()
    seed("temperatures", DEFAULT_TEMPERATURES, lambda raw: format_numbers(parse_temperatures(raw)), url_key="t",
         link_wins=opened)
    seed("model", models[0], lambda raw: parse_choice(raw, models), link_wins=opened)
    seed("mode", MODES[0], lambda raw: parse_choice(raw, MODES), link_wins=opened)
    seed("window", DEFAULT_WINDOW, parse_window, link_wins=opened)
    for key in SIDEBAR_CONTROLS:
        if key not in acting:
            # a widget not drawn in a run loses its value; set as plain state, it is kept for the next page
            st.session_state[key] = st.session_state[key]
    with st.sidebar:
        if note:
            st.caption(note)
        if "model" in acting:
            linked_widget(st.selectbox, "Model", key="model", url_key="model", default=models[0], options=models,
                          parse=lambda raw: parse_choice(raw, models),
                          to_url=lambda name: name if len(models) > 1 else None, keep_default=True,
                          format_func=model_name, help="Models the operator of this server made available.")
        if "temperatures" in acting:
            st.text_input("Temperatures to compare", key="temperatures", max_chars=80,
                          help=f"Up to {MAX_UI_TEMPERATURES} numbers in {TEMPERATURE_RANGE}, e.g. 0.5, 1, 2. "
                               f"T > 1 softens attention, T < 1 sharpens it "
                               f"({term_link('Temperature (T)', 'the temperature')}).")
        if "mode" in acting:
            linked_widget(st.radio, "Mode", key="mode", url_key="mode", default=MODES[0], options=MODES,
                          parse=lambda raw: parse_choice(raw, MODES), keep_default=True,
                          captions=[MODE_HELP[mode] for mode in MODES],
                          help=f"Where the temperature acts: {term_link('In-model, isolated', 'the two modes')}.")
        if "window" in acting:
            linked_widget(st.number_input, "Recent window (tokens)", key="window", url_key="window",
                          default=DEFAULT_WINDOW, parse=parse_window, keep_default=True, min_value=1,
                          max_value=MAX_WINDOW, step=1,
                          help="Keys within this many positions of the query count as recent; the first token "
                               f"(the {term_link('Sink', 'sink')}) is always counted on its own. In a "
                               f"{term_link('Sliding-window layer', 'sliding-window layer')} a query sees only the "
                               "keys in the layer's window: the pages say what that changes.")
    try:
        temperatures, error = parse_temperatures(st.session_state["temperatures"]), None
    except AnalysisError as problem:
        temperatures, error = None, str(problem)
        st.sidebar.error(f"Temperatures: {plain(error)}")
    else:
        st.session_state[LAST_GOOD_TEMPERATURES] = temperatures
    publish_to_url({"t": ",".join(f"{t:g}" for t in temperatures) if temperatures else None})
    state = st.session_state
    return SidebarChoices(model=state["model"], temperatures=temperatures, error=error, mode=state["mode"],
                          window=int(state["window"]))


def large_type_ui() -> None:
    """The sidebar's switch for a projector: every page's text in large type (the link keeps it as `big=1`)."""
    on = linked_widget(st.sidebar.toggle, "Large type (for a projector)", key="large_type", url_key="big",
                       default=False, parse=lambda raw: raw == "1", to_url=lambda _: 1,
                       help="Every page's text one and a half times as large, for a class at the back of the room.")
    if on:  # Streamlit sizes its text in rem: a larger root size scales every page's words, headings and widgets
        st.markdown(f"<style>html {{ font-size: {LARGE_TYPE_SCALE:.0%}; }}</style>", unsafe_allow_html=True)


def sidebar_choices() -> SidebarChoices:
    """The sidebar's choices for a page (app.py stores them before running the page)."""
    return st.session_state["_sidebar"]


def require_temperatures(choices: SidebarChoices) -> tuple[float, ...]:
    """The parsed temperatures; while the sidebar's do not parse, the last that did (said on the page, the error
    stands beside the box), so the page and its last result stay. Error and stop only if none ever parsed."""
    if choices.temperatures is not None:
        return choices.temperatures
    last = st.session_state.get(LAST_GOOD_TEMPERATURES)
    if last is None:
        st.error(f"Fix the temperatures in the sidebar: {plain(choices.error)}")
        st.stop()
    st.warning(f"The temperatures in the sidebar were refused (see the message under them): this page still shows "
               f"T = {', '.join(f'{t:g}' for t in last)}, the last that were accepted.")
    return last


def text_ui(key: str, example: str, label: str, height: int = 150, help_text: str | None = None) -> str:
    """A text box seeded from the link (a short text itself, a long one by its id in the server's text store), else
    from what the session last typed here, else the example. A link whose long text the server no longer holds says
    so under the box and the page stops there: it never opens another text."""
    default, store = example_text(example), text_store()
    missing = f"{key}_missing"
    if key not in st.session_state and st.query_params.get("text") is None:
        wanted = st.query_params.get("text_id")
        held = store.get(wanted) if wanted else None
        if held is not None:
            st.session_state[key] = held[:MAX_TEXT_CHARS]
        elif wanted:
            st.session_state[key], st.session_state[missing] = "", wanted
    seed(key, default, lambda raw: raw[:MAX_TEXT_CHARS], url_key="text")
    text = st.text_area(label, key=key, height=height, max_chars=MAX_TEXT_CHARS, help=help_text)
    if text:
        st.session_state.pop(missing, None)
    elif missing in st.session_state:
        st.error(f"This link's text (id {st.session_state[missing]}) is no longer held by this server: it keeps the "
                 f"{TEXTS_KEPT} most recent long texts, and this one was dropped or the server restarted. Paste the "
                 "text again; the link to it will then work again.")
        st.stop()
    short = len(text) <= SHORT_TEXT_IN_URL
    publish_to_url({"text": text if short and text != default else None,
                    "text_id": None if short else store.put(text)})
    return text


def layer_head_ui(n_layers: int, n_heads: int, key_prefix: str, default: tuple[int, int] | None = None
                  ) -> tuple[int, int | None]:
    """Layer and head pickers (head None = mean of heads), seeded from and written back to the URL; without either,
    `default` (layer, head), else the middle layer and the mean of heads."""
    layers, heads = list(range(n_layers)), [MEAN_OF_HEADS, *range(n_heads)]
    for key, options in ((f"{key_prefix}_layer", layers), (f"{key_prefix}_head", heads)):
        if key in st.session_state and st.session_state[key] not in options:  # the model changed under a choice
            del st.session_state[key]
    left, right = st.columns(2)
    first_layer, first_head = default or (min(n_layers - 1, n_layers // 2), MEAN_OF_HEADS)
    layer = linked_widget(left.selectbox, "Layer", key=f"{key_prefix}_layer", url_key="layer",
                          default=first_layer, options=layers, parse=lambda raw: parse_choice(raw, layers))
    head = linked_widget(right.selectbox, "Head", key=f"{key_prefix}_head", url_key="head", default=first_head,
                         options=heads, parse=lambda raw: parse_choice(raw, heads))
    return int(layer), None if head == MEAN_OF_HEADS else int(head)
