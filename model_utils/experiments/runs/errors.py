"""The errors of a long run: one for a request refused before any work, one for a run that could not finish (what it
finished is kept)."""


class RunUsageError(ValueError):
    """A request refused before any work (other settings in the results folder, an unreachable Ray address); the
    command line prints it as one line and exits 2."""


class RunError(RuntimeError):
    """The run could not finish (a worker died more often than Ray restarts it, a cluster without room); the
    documents finished so far are kept, and a rerun computes only the rest."""
