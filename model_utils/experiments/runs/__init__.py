"""What the long runs share (tune, fit and the sweep on workers): the worker that loads the model once and runs a
document's passes, one pool start-up (the worker in this process, or Ray actors on a local Ray or a cluster), and
the run errors. The rule: runs knows the sweep's passes and the floors below, never a run built on it (tune, fit,
sweep_workers), which hand it what is theirs (the specs, the function that turns a document's passes into rows); the
import contracts in pyproject.toml say so. The atomic write of a result file is core.files.write_atomic."""
