"""A second copy of a loaded model's weights that runs transformers' own attention: what the engine is checked and
benchmarked against."""

from __future__ import annotations

import copy

import torch

from model_utils.models import LoadedModel


def reference_copy(loaded: LoadedModel, implementation: str) -> torch.nn.Module:
    """`loaded`'s weights in a model of the same class running `implementation` ("eager" or "sdpa")."""
    config = copy.deepcopy(loaded.config)
    config._attn_implementation = implementation
    model = type(loaded.model)(config)
    model.load_state_dict(loaded.model.state_dict())
    return model.eval().requires_grad_(False)
