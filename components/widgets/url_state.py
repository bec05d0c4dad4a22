"""The view's state: what a session typed and chose, kept while it moves between pages, and the view <-> URL round
trip, so that a shared link reproduces what the sender saw.

A widget's value lives in st.session_state under its key only while the widget is drawn: a page switch, or a run that
stops before the widget (a refused input above it), drops it. So every widget seeded here is also kept under KEPT, a
plain dict of the session that no widget owns, at the end of every run (`keep_values`, called by app.py), and a widget
that comes back is seeded from the link first (a link is what its sender saw), then from what was kept, then from its
default.

`linked_widget` does all of it for one widget; `seed` and `publish_to_url` are its halves, for the few widgets whose
value goes to the URL only after it has been checked (the sidebar's temperatures, the lab's scores).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import streamlit as st

KEPT = "_kept"  # st.session_state[KEPT]: widget key -> its last value, whatever page is open


def _kept() -> dict:
    if KEPT not in st.session_state:
        st.session_state[KEPT] = {}
    return st.session_state[KEPT]


def seed(key: str, default, parse: Callable[[str], object] = str, url_key: str | None = None,
         allowed: Collection | None = None, link_wins: bool = False) -> None:
    """Give widget `key` its value when it is (re)drawn without one: the link's (if it parses), else the value the
    session last had (if still `allowed`), else `default`. `link_wins`: the link's value replaces the one the widget
    has (a page just opened from a link, e.g. a lesson step, shows what the link names)."""
    kept = _kept()
    kept.setdefault(key, default)  # registers the key with keep_values
    if key in st.session_state and not (link_wins and st.query_params.get(url_key or key) is not None):
        return
    raw = st.query_params.get(url_key or key) if url_key is not False else None
    if raw is not None:
        try:
            st.session_state[key] = parse(raw)
            return
        except (ValueError, TypeError):
            pass  # a mangled link falls back to what the session had, or the default, rather than failing
    value = kept[key]
    st.session_state[key] = value if allowed is None or value in allowed else default


def keep_values() -> None:
    """At the end of a run (stopped or not): keep the value of every seeded widget that has one now, so that a page
    switch or a refused input does not lose it."""
    kept = _kept()
    for key in kept:
        if key in st.session_state:
            kept[key] = st.session_state[key]


def forget(key: str, url_key: str | None = None) -> None:
    """Drop a widget's value everywhere it is kept (state, the kept copy, the link): it starts again at its default."""
    st.session_state.pop(key, None)
    _kept().pop(key, None)
    st.query_params.pop(url_key or key, None)


def publish_to_url(values: dict[str, object]) -> None:
    """Write the view into the URL (None removes a key), touching only what changed."""
    for key, value in values.items():
        if value is None:
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)


def linked_widget(widget: Callable, label: str, *, key: str, url_key: str | None, default,
                  parse: Callable[[str], object] = str, to_url: Callable[[object], object] = str,
                  keep_default: bool = False, **options):
    """Draw `widget` (st.selectbox, a column's text_input, ...) seeded from the link's `url_key`, or from what the
    session last had, and write its value back to the link (`to_url(value)`; left out while it is the default, unless
    `keep_default`). `url_key=None`: kept for the session, never in the link. Returns the widget's value."""
    seed(key, default, parse, url_key if url_key is not None else False, allowed=options.get("options"))
    value = widget(label, key=key, **options)
    if url_key is not None:
        publish_to_url({url_key: to_url(value) if keep_default or value != default else None})
    return value
