"""Models, loaded offline: the bundled GGUF model and its self-checking cache, the tiny model built in code, a
user's folder or hub id. This floor knows no engine (the import contract in pyproject.toml says so)."""

from model_utils.models.load import load_model
from model_utils.models.loaded import LoadedModel, Progress

__all__ = ["LoadedModel", "Progress", "load_model"]
