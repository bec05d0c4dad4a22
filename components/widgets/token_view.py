"""The token view: for one query token, the text at each temperature side by side, every token it sees shaded by the
weight it gets (present/token_view.py escapes and shades), on one colour scale, with the top keys and the top /
runner-up ratio under each. It reads the maps the page rebuilt from a cached report, so changing the query, layer or
head runs no model."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import numpy as np
import streamlit as st

from components.present.glossary import term_link
from components.present.text import plain, ratio_text, visible_token
from components.present.token_view import SHADE_DECADES, ratio_line, token_html, top_keys
from components.widgets.url_state import forget, linked_widget
from model_utils import Report, attention_map
from model_utils.core.report import HeadPick, runner_up_ratio
from model_utils.verdicts import words
from model_utils.verdicts.maps import hidden_by_mean

TOP_KEYS = 5
LOG_WORDS = f"logarithmic (a weight under {10.0 ** -SHADE_DECADES:.0%} of the top stays white)"


def shown(token: str) -> str:
    """A token as a caption shows it: quoted (its spaces visible), newlines as ↵, markdown escaped."""
    return f"“{plain(visible_token(token))}”"


def word_position(tokens: Sequence[str], word: str) -> int:
    """The token that ends the first whole-word `word` of the text (however the tokenizer split it), for a link that
    names its query by a word; ValueError where the text has no such word."""
    found = re.search(rf"(?<!\w){re.escape(word.strip())}(?!\w)", "".join(tokens)) if word.strip() else None
    if found is None:
        raise ValueError(f"no word {word!r} in the text")
    ends = np.cumsum([len(token) for token in tokens])
    return int(np.searchsorted(ends, found.end()))


def query_ui(report: Report, container, key: str) -> int:
    """The query token picker (default: the last token), in `container`. A new text or model starts again at its
    last token: the choice (and the link's `q`) is dropped when the report's tokens change."""
    tokens_key = f"{key}_tokens"
    if st.session_state.get(tokens_key) not in (None, report.token_ids):
        forget(key, "q")
    st.session_state[tokens_key] = report.token_ids
    positions = list(range(report.n_tokens))

    def parse(raw: str) -> int:  # a position, or a word of the text (a lesson's link: ?q=it)
        if raw.strip().lstrip("-").isdigit():
            if int(raw) not in positions:
                raise ValueError(f"no token {raw}")
            return int(raw)
        return word_position(report.tokens, raw)

    return int(linked_widget(container.selectbox, "Query token", key=key,
                             url_key="q", default=positions[-1], parse=parse, options=positions,
                             format_func=lambda i: f"{i}: “{visible_token(report.tokens[i])}”",
                             help="The word whose attention is shown: each text below shades the tokens it "
                                  "attends to. Type to search."))


def scale_top(rows: Sequence[np.ndarray]) -> float:
    """The top of the shared colour scale: the largest weight on any token but the first (the sink, which often
    takes most of the weight and would leave every word pale), over every temperature; the sink is then drawn at
    full colour. With the sink alone in view, its weight."""
    rest = max((float(row[1:].max()) for row in rows if len(row) > 1), default=0.0)
    return rest if rest > 0 else max(float(row.max()) for row in rows)


def _score_rows(report: Report, layer: int, head: int, query: int) -> list[np.ndarray]:
    """Per view, the query's scores before the temperature, up to constants (log-weights at multiplier 1 of the
    view's own queries and keys, through the engine's map): their gaps are the scores' gaps."""
    unscaled = dataclasses.replace(report, multipliers=np.ones_like(report.multipliers))
    with np.errstate(divide="ignore"):
        return [np.log(attention_map(unscaled, layer, view, head=head)[query, : query + 1].astype(np.float64))
                for view in range(len(report.results))]


def _ratio(report: Report, view: int, row: np.ndarray, scores: np.ndarray | None, layer: int) -> str | None:
    """The top / runner-up line: next to exp(gap / T) for one head, the ratio alone for the mean of heads."""
    if len(row) < 2:
        return None
    applies = report.layers is None or layer in report.layers
    temperature = report.results[view].temperature if applies else 1.0
    if scores is not None:
        return ratio_line(scores, row, temperature)
    measured = ratio_text(runner_up_ratio(row))
    return (f"top key / runner-up: {measured} (a mean of heads has no single score gap: pick a head to compare "
            "it with exp(gap / T))")


def token_view_ui(report: Report, maps: Sequence[np.ndarray], *, layer: int, head: int | None, query: int,
                  log_colour: bool, pick: HeadPick | None = None) -> None:
    """One shaded text per temperature (maps[v]: view v's [n, n] map of this layer and head), the top keys and the
    ratio line under each, what the shading means, and for the mean of heads, whether it hides what T does (against
    `pick`, the head picked for this query)."""
    rows = [np.asarray(weights[query, : query + 1], dtype=np.float64) for weights in maps]
    top = scale_top(rows)
    scores = _score_rows(report, layer, head, query) if head is not None else [None] * len(rows)
    for view, column in enumerate(st.columns(len(rows))):
        with column:
            st.markdown(f"**{plain(report.results[view].label)}**")
            st.markdown(token_html(report.tokens, rows[view], query, top, log=log_colour), unsafe_allow_html=True)
            keys = top_keys(report.tokens[: query + 1], rows[view], TOP_KEYS)
            st.caption("Top keys: " + " · ".join(f"{shown(k['token'])} ({k['position']}) {k['weight']:.3f}"
                                                  for k in keys))
            line = _ratio(report, view, rows[view], scores[view], layer)
            if line is not None:
                st.caption(plain(line[0].upper() + line[1:]))
    chosen = "mean of heads" if head is None else f"head {head}"
    st.caption(f"Query {query} {shown(report.tokens[query])} (outlined), layer {layer}, {chosen}. Each token it "
               f"sees is shaded by the weight it gets, on one {LOG_WORDS if log_colour else 'linear'} scale for "
               f"every temperature that tops at {top:.3f}, the largest weight on any token but the first; the first "
               f"token (the {term_link('Sink', 'sink')}, dotted underline) is drawn at full colour when it takes "
               "more. Hover a token for its weight; later tokens are not shown (the query cannot see them).")
    ends = report.temperature_ends()
    if head is None and ends is not None:
        hidden = hidden_by_mean(layer, tuple(runner_up_ratio(rows[view]) for view in ends), pick)
        if hidden is not None:
            st.info(plain(words.hidden_by_mean_words(hidden)))
