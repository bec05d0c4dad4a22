"""Models, loaded offline: the bundled GGUF model and its self-checking cache, the tiny model built in code, a
user's folder or hub id. This floor knows no engine (the import contract in pyproject.toml says so)."""

from model_utils.models.load import load_plain_model
from model_utils.models.loaded import LoadedModel

__all__ = ["LoadedModel", "load_plain_model"]
