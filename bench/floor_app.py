"""The floor for bench/pages.py: the least a Streamlit page with plotly charts costs a browser on this machine. A
title and three plotly charts of three points each, nothing else; opened in a new browser session it pays what
every first page of the app pays (Streamlit's and plotly's JavaScript loaded, parsed and run) and nothing more."""

import plotly.graph_objects as go
import streamlit as st

st.title("Floor")
for chart in range(3):
    st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[chart, 2, 3])), key=f"floor_{chart}")
