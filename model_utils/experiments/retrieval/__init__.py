"""The retrieval probe over a grid (core.retrieval lays out one probe, engine.retrieval runs one pass): built-in
passages and fillers, and the run of every passage x distance x view, planted and not, each pass cached as it
finishes and handed to a long run's workers (runs.open_pool)."""
