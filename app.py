"""Attention Temperature Explorer: the router. Page config, navigation, the shared sidebar, then the page."""

import streamlit as st

from components.controls import sidebar_ui

st.set_page_config(page_title="Attention Temperature Explorer", page_icon=":material/thermostat:", layout="wide")

PAGES = [
    st.Page("components/pages/softmax_lab.py", title="Softmax lab", icon=":material/functions:",
            url_path="softmax", default=True),
    st.Page("components/pages/attention_maps.py", title="Attention maps", icon=":material/grid_on:",
            url_path="maps"),
    st.Page("components/pages/collapse_inspector.py", title="Collapse inspector", icon=":material/query_stats:",
            url_path="collapse"),
    st.Page("components/pages/length_schedules.py", title="Length schedules", icon=":material/straighten:",
            url_path="schedules"),
    st.Page("components/pages/context_length.py", title="Context length", icon=":material/timeline:",
            url_path="context"),
]

page = st.navigation(PAGES)
st.session_state["_sidebar"] = sidebar_ui()  # read by the pages through sidebar_choices()
page.run()
