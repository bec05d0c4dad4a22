"""Pure figure functions: numbers in, plotly `go.Figure` out, by kind of chart: softmax.py (the Softmax lab),
maps.py (attention maps, grids and per-layer lines: the Attention maps and Collapse inspector pages), schedules.py
(the Length schedules page), context.py (the Context length page's charts by position, best temperatures and fits)
and decomposition.py (a verdict's levers on the scale of the loss rise); base.py holds what they share. No
streamlit import, no model access.

Every function that compares temperatures draws them side by side with one colour per temperature (the same colour
on every chart of the app) and, where the quantity is a weight, one shared colour scale. Text that comes from the
user (tokens) goes through `display_token`, which escapes HTML, so it is always shown as literal text."""

# Plotly looks pandas up in sys.modules without the import lock (`get_module("pandas", should_load=False)`): while
# one session's thread was still importing pandas (Streamlit imports it for st.dataframe), another session's figure
# found the half-made module and failed with "partially initialized module 'pandas' has no attribute 'Series'" (the
# load test, 8 sessions at once). Importing pandas with this package closes that window: every figure module is
# imported through it before any figure is built, and an import in progress makes other importers wait.
import pandas  # noqa: F401
