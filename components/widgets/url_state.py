"""The view <-> URL round trip: a value in the link seeds its widget on a session's first run, and the current view
is written back, so a shared link reproduces what the sender saw.

`linked_widget` does both for one widget; `seed` and `publish_to_url` are its two halves, for the few widgets whose
value goes to the URL only after it has been checked (the sidebar's temperatures, the lab's scores).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st


def seed(key: str, default, parse: Callable[[str], object] = str, url_key: str | None = None) -> None:
    """Give widget `key` its first value: the URL's (if it parses) on a session's first run, else `default`."""
    if key in st.session_state:
        return
    raw = st.query_params.get(url_key or key)
    value = default
    if raw is not None:
        try:
            value = parse(raw)
        except (ValueError, TypeError):
            value = default  # a mangled link falls back to the default view rather than failing
    st.session_state[key] = value


def publish_to_url(values: dict[str, object]) -> None:
    """Write the view into the URL (None removes a key), touching only what changed."""
    for key, value in values.items():
        if value is None:
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)


def linked_widget(widget: Callable, label: str, *, key: str, url_key: str, default,
                  parse: Callable[[str], object] = str, to_url: Callable[[object], object] = str,
                  keep_default: bool = False, **options):
    """Draw `widget` (st.selectbox, a column's text_input, ...) seeded from the link's `url_key`, and write its
    value back there (`to_url(value)`; left out of the link while it is the default, unless `keep_default`).
    Returns the widget's value."""
    seed(key, default, parse, url_key)
    value = widget(label, key=key, **options)
    publish_to_url({url_key: to_url(value) if keep_default or value != default else None})
    return value
