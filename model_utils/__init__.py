"""The engine of the Attention Temperature Explorer: load a model, run it with a softmax temperature inside
attention, and measure what the temperature does. Never imports streamlit or plotly.

    from model_utils import load_model, analyze
    report = analyze(load_model("bundled"), "Some text", temperatures=[0.5, 1, 2])
"""

from model_utils.analysis import AnalysisError, Report, TemperatureResult, analyze
from model_utils.loading import LoadedModel, ModelLoadError, load_model
from model_utils.schedules import Schedule

__all__ = [
    "AnalysisError",
    "LoadedModel",
    "ModelLoadError",
    "Report",
    "Schedule",
    "TemperatureResult",
    "analyze",
    "load_model",
]
