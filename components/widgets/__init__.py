"""Widgets: groups of streamlit controls as `*_ui()` functions that return what a page needs (the shared sidebar,
the URL round trip, the model pages' opening, downloads). A widget reads and writes session and URL state and may
call serving's caches, the presenters and model_utils' torch-free modules; it computes and judges nothing itself,
and never imports a page."""
