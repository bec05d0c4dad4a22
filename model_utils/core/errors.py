"""The two errors a user can cause, each with a message that says what to change. Light on purpose (no torch):
the pages and the command line catch them before anything heavy is imported."""


class AnalysisError(ValueError):
    """A request the engine refuses; the message says what to change."""


class ModelLoadError(ValueError):
    """A model name that cannot be loaded; the message says what was tried and how to fix it."""
