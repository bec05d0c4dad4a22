"""The engine of the Attention Temperature Explorer: load a model, run it with a softmax temperature inside
attention, and measure what the temperature does. Never imports streamlit or plotly.

    from model_utils import load_model, analyze
    report = analyze(load_model("bundled"), "Some text", temperatures=[0.5, 1, 2])

Names are imported on first use (PEP 562), so `import model_utils.metrics` or the errors cost no torch import.
"""

import contextlib
import gc
from collections.abc import Iterator
from importlib import import_module

_WHERE = {
    "AnalysisError": "model_utils.errors",
    "ModelLoadError": "model_utils.errors",
    "LoadedModel": "model_utils.loading",
    "load_model": "model_utils.loading",
    "Report": "model_utils.analysis",
    "TemperatureResult": "model_utils.analysis",
    "analyze": "model_utils.analysis",
    "set_threads": "model_utils.analysis",
    "Schedule": "model_utils.schedules",
}

__all__ = sorted([*_WHERE, "imports_without_collection"])


@contextlib.contextmanager
def imports_without_collection() -> Iterator[None]:
    """Import torch and transformers with the cyclic garbage collector off, then freeze what they made. Their
    imports create hundreds of thousands of objects that live as long as the process, and the collector kept
    scanning all of them: while they were made (0.6 s of a 3.2 s `import model_utils.__main__`), and in every full
    collection after (0.19 s each in the served app, which Streamlit runs after every script run). Frozen, they are
    left out of every later collection; the collector is back on for the code that follows."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'model_utils' has no attribute {name!r}")
    return getattr(import_module(_WHERE[name]), name)
