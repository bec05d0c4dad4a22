"""The tuner's errors: one for a run that could not finish (what it finished is kept), one for a request refused
before any work."""


class TuneError(RuntimeError):
    """The run could not finish (a worker died more often than Ray restarts it, a cluster without room); the
    documents finished so far are kept, and a rerun computes only the rest."""


class TuneUsageError(ValueError):
    """A request the tuner refuses before any work (other settings in the folder, an unreachable Ray address)."""

