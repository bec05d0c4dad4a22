"""The engine of the Attention Temperature Explorer: load a model, run it with a softmax temperature inside
attention, and measure what the temperature does. Never imports streamlit or plotly.

    from model_utils import load_model, analyze
    report = analyze(load_model("bundled"), "Some text", temperatures=[0.5, 1, 2])

Names are imported on first use (PEP 562), so `import model_utils.metrics` or the errors cost no torch import.
"""

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

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'model_utils' has no attribute {name!r}")
    return getattr(import_module(_WHERE[name]), name)
