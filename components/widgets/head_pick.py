"""The head the Attention maps page opens on for a query: the one whose attention for that word spreads most with T
(model_utils.most_moved_head). Drawn before the layer and head pickers: when the text or the query changes, the pick
becomes their value, so a typed sentence never keeps a head chosen for another; a choice the user makes afterwards is
kept until the text or the query changes again (while the view is the pick, new temperatures or a new mode pick
again too), and a link's layer and head are honoured on a session's first run.
The pick is computed once per text, query and temperatures (session state), so a redraw costs no model work."""

from __future__ import annotations

import streamlit as st

from components.present.text import plain, visible_token
from model_utils import Report, most_moved_head
from model_utils.core.report import HeadPick
from model_utils.verdicts import words


def head_pick_ui(report: Report, query: int, key_prefix: str) -> HeadPick | None:
    """The pick for `query`, set as the `{key_prefix}_layer` / `_head` choice when the (text, query) pair is new
    (not on a first run whose link names a layer or head). Call before layer_head_ui draws those widgets."""
    state = st.session_state
    pick = _memo(report, query, f"{key_prefix}_pick")
    pair, seen, last = (tuple(report.token_ids), query), f"{key_prefix}_picked_for", f"{key_prefix}_picked"
    keys = (f"{key_prefix}_layer", f"{key_prefix}_head")
    linked = seen not in state and ("layer" in st.query_params or "head" in st.query_params)
    untouched = last in state and tuple(state.get(key) for key in keys) == state[last]  # new T or mode: follow
    if pick is not None and (state.get(seen) != pair or untouched) and not linked:
        state[keys[0]], state[keys[1]] = state[last] = (pick.layer, pick.head)
    state[seen] = pair
    return pick


def _memo(report: Report, query: int, key: str) -> HeadPick | None:
    """most_moved_head(report, query), kept in the session for the request it was computed on."""
    asked = (report.model, report.mode, tuple(report.token_ids), tuple(report.labels), query)
    kept = st.session_state.get(key)
    if kept is None or kept[0] != asked:
        kept = (asked, most_moved_head(report, query))
        st.session_state[key] = kept
    return kept[1]


def head_pick_label(pick: HeadPick | None, report: Report, layer: int, head: int | None) -> None:
    """The pick's label under the pickers: what it is picked for, and whether the view shows it."""
    if pick is not None:
        token = visible_token(report.tokens[pick.query])
        st.caption(plain(words.head_pick_words(pick, token, shown=(layer, head) == (pick.layer, pick.head))))
