"""What identifies a model for the caches: a hash of its name, config and weights (no torch import of its own)."""

from __future__ import annotations

import copy
import hashlib

from model_utils.models import LoadedModel


def model_fingerprints(loaded: LoadedModel) -> tuple[str, str]:
    """(plain, portable) fingerprints of the model: its name, config and first weights, what a cached pass depends
    on besides the text. Both from one pass over the weights (a float64 copy of the embedding: 226 MB for the
    bundled model). `architectures` and `dtype`, which saving a model writes into its live config, are left out; the
    portable one also leaves out `_name_or_path`, the folder the model was loaded from, so that the tuner can check
    its Ray workers on other machines with it (docs/ARCHITECTURE.md, the caches and their keys)."""
    first = next(iter(loaded.model.state_dict().values()))
    weights = f"{float(first.double().sum()):.12e}"
    config = copy.deepcopy(loaded.config)
    config.architectures, config.dtype = None, first.dtype
    plain = config.to_json_string(use_diff=False)
    config._name_or_path = ""
    return tuple(hashlib.sha256("\n".join([loaded.name, text, weights]).encode()).hexdigest()[:16]
                 for text in (plain, config.to_json_string(use_diff=False)))


def model_fingerprint(loaded: LoadedModel, *, portable: bool = False) -> str:
    """One of model_fingerprints(loaded)."""
    return model_fingerprints(loaded)[portable]
