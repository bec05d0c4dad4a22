"""Experiments built on the engine: the context-length sweep of one text, the corpus tuner, their texts and corpora."""
