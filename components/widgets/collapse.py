"""The Collapse inspector's own widgets: the boxes under its prompt (the expected answer, the fact, the token limit),
the answer probe asked for them (a refusal is an error line under the boxes, and the rest of the page is drawn), and
what the model says at each temperature, side by side, with its verdict and the whole answer's log-probability."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.present.captions import continuation_markdown
from components.present.parsing import parse_choice
from components.present.text import plain
from components.serving.cache import cached_answer_probe, computed_once
from components.serving.defaults import COLLAPSE_ANSWER, COLLAPSE_VIEW, tokens_within_budget
from components.widgets.model_page import ModelPage
from components.widgets.url_state import linked_widget
from model_utils import AnalysisError, AnswerProbe, ModelLoadError
from model_utils.verdicts.collapse import CollapseVerdict
from model_utils.verdicts.words import answer_log_prob_words, said_words, view_name

TOKEN_LIMITS = (512, 1024, 2048, 4096)


@dataclass(frozen=True, kw_only=True)
class CollapseInputs:
    """What the boxes under the prompt hold, and where their notes go (under them)."""

    answer: str
    fact: str
    limit: int
    notes: DeltaGenerator


def collapse_inputs_ui() -> CollapseInputs:
    """The expected answer, the fact and the token limit, side by side, each seeded from and kept in the link."""
    answer_column, fact_column, limit_column = st.columns([2, 2, 1])
    answer = linked_widget(answer_column.text_input, "Expected answer", key="collapse_answer", url_key="answer",
                           default=COLLAPSE_ANSWER, max_chars=100,
                           help="The words the prompt should make the model say. The page asks whether the model's "
                                "own continuation says them, and how likely it finds all of their tokens.")
    fact = linked_widget(fact_column.text_input, "The fact (a phrase of the prompt)", key="collapse_fact",
                         url_key="fact", default="", max_chars=300,
                         help="Where the prompt states what the question asks for. Left empty, the fact is where "
                              "the expected answer first appears, else the earlier sentence that shares most of the "
                              "question's words.")
    limit = linked_widget(limit_column.selectbox, "Token limit", key="collapse_limit", url_key="limit",
                          default=COLLAPSE_VIEW.limit, options=TOKEN_LIMITS,
                          parse=lambda raw: parse_choice(raw, TOKEN_LIMITS),
                          help="A longer prompt keeps its first tokens and its question; the middle is left out. "
                               "Longer prompts take longer: about 10 s per 1,000 tokens for 4 temperatures on the "
                               "bundled model.")
    return CollapseInputs(answer=answer, fact=fact, limit=limit, notes=st.container())


def answer_probe_ui(page: ModelPage, inputs: CollapseInputs) -> AnswerProbe | None:
    """The answer probe for the page's prompt and temperatures (cached: the page's report call computed it), None
    without an expected answer; a refused answer is an error line under the boxes."""
    if not inputs.answer.strip():
        return None
    choices = page.choices
    max_tokens = tokens_within_budget(inputs.limit, len(page.temperatures))
    try:
        return computed_once(cached_answer_probe, choices.model, page.text, tuple(page.temperatures), choices.mode,
                             max_tokens, inputs.answer)
    except (AnalysisError, ModelLoadError) as error:
        inputs.notes.error(plain(error))
        return None


def said_ui(verdict: CollapseVerdict, probe: AnswerProbe | None) -> None:
    """At each temperature, what the model says after the prompt (special tokens as marks), whether that is the
    answer, and the whole answer's log-probability."""
    if probe is None:
        return
    for view, column in zip(verdict.views, st.columns(len(verdict.views)), strict=True):
        with column:
            st.markdown(f"**{plain(view_name(view))}** {plain(said_words(view))}")
            st.markdown(continuation_markdown(view.said.continuation))
            st.caption(plain(answer_log_prob_words(view.said.answer_log_prob, len(probe.answer_tokens))))
    isolated = (" In isolated mode the model itself runs at T = 1, so every temperature says the same."
                if probe.isolated else "")
    st.caption(f"The model's own greedy continuation of up to {probe.new_tokens} tokens after the "
               f"{probe.prompt_tokens:,} tokens read, with T inside every layer; it answers when it says "
               f"{plain(repr(probe.answer))} (in any case or spacing). The log-probability adds up the model's "
               "log-probability of each of the answer's tokens given the prompt and the tokens before it: 0 is "
               f"certain.{isolated}")
