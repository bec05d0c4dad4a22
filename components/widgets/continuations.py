"""What the model says at each temperature: on a button, the top next tokens after the page's text and a greedy
continuation, side by side (serving.cache.cached_generation: admitted through the server's gate and cached like a
report). A refusal (a text too long to continue within the trained length) is an error line that stays until the
request changes, without asking the engine again on every run of the page."""

from __future__ import annotations

import streamlit as st

from components.present.text import plain
from components.serving.cache import cached_generation, computed_once
from components.widgets.model_page import ModelPage
from components.widgets.token_view import shown
from model_utils import AnalysisError, Generation, ModelLoadError, Report

NEW_TOKENS = 32  # a sentence or two: enough to read over-softening as words, a few seconds on the bundled model


def continuations_ui(page: ModelPage, report: Report, key: str) -> None:
    """The button, then (for the request it was pressed for) the continuations or the refusal. The text is the
    report's own: cut to the tokens the report analysed."""
    choices = page.choices
    request = (choices.model, page.text, tuple(page.temperatures), choices.mode, NEW_TOKENS, max(2, report.n_tokens))
    if st.button(f"Generate {NEW_TOKENS} tokens at each temperature", key=f"{key}_button",
                 help="Greedy decoding (the likeliest token at every step) with T inside every layer."):
        st.session_state[key] = (request, None)
    asked = st.session_state.get(key)  # (the request the button was pressed for, its refusal or None)
    if asked is None or asked[0] != request:
        st.caption(f"The five likeliest next tokens and a greedy continuation of {NEW_TOKENS} tokens at each "
                   "temperature, on demand: it runs the model once more.")
        return
    if asked[1] is not None:
        st.error(asked[1])
        return
    try:
        generation = computed_once(cached_generation, *request)
    except (AnalysisError, ModelLoadError) as error:
        st.session_state[key] = (request, plain(error))
        st.error(plain(error))
        return
    _draw(generation)


def _draw(generation: Generation) -> None:
    if generation.note is not None:
        st.info(plain(generation.note[0].upper() + generation.note[1:]))
    for continuation, column in zip(generation.continuations, st.columns(len(generation.continuations)),
                                    strict=True):
        with column:
            st.markdown(f"**T={continuation.temperature:g}**")
            st.caption("Next: " + " · ".join(f"{shown(entry['token'])} {entry['prob']:.0%}"
                                             for entry in continuation.top_next))
            st.code(continuation.text, language=None, wrap_lines=True)
    cut = " (the text cut to the tokens analysed above)" if generation.truncated else ""
    st.caption(f"After the {generation.prompt_tokens:,} tokens of the text{cut}, the likeliest next tokens and up to "
               f"{NEW_TOKENS} greedy tokens at each temperature, with T inside every layer at every step: generated "
               f"in {generation.seconds:.1f} s, then kept for an hour.")
