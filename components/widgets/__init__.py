"""Widgets: groups of streamlit controls as `*_ui()` functions that return what a page needs (the shared sidebar,
the URL round trip, the model pages' opening, downloads, the Context length page's form and sections). A widget
reads and writes session and URL state and may call serving's caches, the presenters and model_utils' torch-free
modules (and the lazy API, for a check); it computes and judges nothing itself, and never imports a page."""
