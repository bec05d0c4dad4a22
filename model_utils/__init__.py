"""The engine of the Attention Temperature Explorer: load a model, run it with a softmax temperature inside
attention, and measure what the temperature does. Never imports streamlit or plotly.

    from model_utils import load_model, analyze
    report = analyze(load_model("bundled"), "Some text", temperatures=[0.5, 1, 2])

The names below are imported on first use (PEP 562): importing this package, or a module of `core`, costs no torch
import. It is the door through which the pages reach the engine (the import contract in pyproject.toml)."""

import contextlib
import gc
from collections.abc import Iterator
from importlib import import_module

_WHERE = {
    "AnalysisError": "model_utils.core.errors",
    "ModelLoadError": "model_utils.core.errors",
    "Schedule": "model_utils.core.schedules",
    "LoadedModel": "model_utils.models",
    "load_model": "model_utils.engine.plugin",
    "AnalysisRequest": "model_utils.engine.analyze",
    "analyze": "model_utils.engine.analyze",
    "answer_token": "model_utils.engine.analyze",
    "AnswerProbe": "model_utils.core.collapse",
    "AnswerRequest": "model_utils.engine.answer",
    "answer_probe": "model_utils.engine.answer",
    "collapse_limit": "model_utils.engine.answer",
    "set_threads": "model_utils.engine.analyze",
    "tokenize": "model_utils.engine.analyze",
    "attention_map": "model_utils.engine.maps",
    "most_moved_head": "model_utils.engine.maps",
    "effective_distances": "model_utils.engine.remap",
    "Generation": "model_utils.engine.generate",
    "GenerationRequest": "model_utils.engine.generate",
    "generate_continuations": "model_utils.engine.generate",
    "Report": "model_utils.core.report",
    "TemperatureResult": "model_utils.core.report",
    "RetrievalRequest": "model_utils.experiments.retrieval.run",
    "retrieval": "model_utils.experiments.retrieval.run",
    "retrieval_texts": "model_utils.experiments.retrieval.passages",
    "SweepSettings": "model_utils.experiments.sweep",
    "check_sweep": "model_utils.experiments.sweep",
    "sweep": "model_utils.experiments.sweep",
}

__all__ = sorted([*_WHERE, "imports_without_collection"])


@contextlib.contextmanager
def imports_without_collection() -> Iterator[None]:
    """Import torch and transformers with the cyclic garbage collector off, then freeze what they made: their
    hundreds of thousands of long-lived objects are then left out of every later collection (Streamlit runs one
    after every script run). The collector is back on for the code that follows."""
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
