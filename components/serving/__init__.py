"""Serving: what one server process holds and shares among its visitors: the settings, the model and result caches,
the admission gate, the warm-up and its default views, and the server entry (`python -m components.serving.serve`).
It may import streamlit, the presenters and model_utils (`core`, and the lazy public API through which torch is
imported when first used); never widgets or pages, which are drawn on top of it."""
