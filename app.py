"""Attention Temperature Explorer: the router. Page config, navigation, the shared sidebar, then the page."""

import streamlit as st

from components.pages import PAGES
from components.widgets.controls import large_type_ui, sidebar_ui
from components.widgets.url_state import keep_values

st.set_page_config(page_title="Attention Temperature Explorer", page_icon=":material/thermostat:", layout="wide")

page = st.navigation([st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path or "softmax",
                              default=not spec.url_path) for spec in PAGES])
spec = next(spec for spec in PAGES if spec.title == page.title)
# read by the pages through sidebar_choices(); only the controls that act on this page are drawn
opened = st.session_state.get("_page") != spec.url_path  # a page just opened shows what its link names
st.session_state["_page"] = spec.url_path
st.session_state["_sidebar"] = sidebar_ui(spec.controls, spec.controls_note, opened=opened)
large_type_ui()
try:
    page.run()
finally:  # also after a page stopped early: what the session typed survives a refused input
    keep_values()
