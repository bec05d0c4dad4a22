"""`load_plain_model`: a model by name ("bundled", "tiny-random", "gemma3-270m", a folder or a hub id) in eval mode
on a device, checked to be a causal decoder, without the temperature probe. It knows no engine:
model_utils.engine.plugin's `load_model` attaches the probe to what this returns."""

from __future__ import annotations

import threading
import time

import torch
import transformers

from model_utils.core.errors import ModelLoadError
from model_utils.core.names import BUNDLED, GEMMA, TINY_RANDOM
from model_utils.models.bundled import load_bundled
from model_utils.models.gemma import load_gemma
from model_utils.models.loaded import LoadedModel, OnProgress, report_loading
from model_utils.models.pretrained import load_pretrained
from model_utils.models.tiny import build_tiny_random

# from_pretrained swaps PreTrainedModel.tie_weights / init_weights and torch.nn.init for empty functions while it
# runs and puts back what it found: two threads loading at once can leave the empty ones installed for good, after
# which every load has an untied, uninitialised lm_head (transformers PR #44940). The app loads models in threads.
_BUILD_LOCK = threading.Lock()


def _finish(model: torch.nn.Module, name: str) -> torch.nn.Module:
    model.eval()
    model.requires_grad_(False)
    config = model.config.get_text_config()
    kind = f"model {name!r} ({config.model_type})"
    if getattr(model.config, "is_encoder_decoder", False):
        raise ModelLoadError(f"{kind} is an encoder-decoder model: its decoder also attends to the encoder "
                             "(cross-attention), which the explorer does not measure; use a decoder-only model")
    if getattr(config, "use_bidirectional_attention", False):
        raise ModelLoadError(f"{kind} attends in both directions; the explorer measures causal attention only")
    return model


def load_plain_model(name: str = BUNDLED, progress: OnProgress | None = None,
                     device: str | None = None) -> LoadedModel:
    """Load `name` (see the module docstring) in eval mode on `device` (default the CPU); raise ModelLoadError."""
    if not isinstance(name, str) or not name.strip():
        raise ModelLoadError("no model name given; use 'bundled', 'tiny-random' or a model folder")
    name = name.strip()
    started = time.perf_counter()
    transformers.logging.disable_progress_bar()  # progress goes through `progress`, not tqdm on stderr
    report_loading(progress, 0.0, f"Loading model {name}")
    with _BUILD_LOCK:
        if name == BUNDLED:
            model, tokenizer, source = load_bundled(progress)
        elif name == TINY_RANDOM:
            model, tokenizer, source = build_tiny_random()
        elif name == GEMMA:
            model, tokenizer, source = load_gemma(progress)
        else:
            model, tokenizer, source = load_pretrained(name)
    if device is not None:
        try:
            model = model.to(device)
        except (RuntimeError, AssertionError) as error:  # no such device, or torch without its support
            raise ModelLoadError(f"cannot put model {name!r} on device {device!r}: "
                                 f"{str(error).splitlines()[0]}") from None
    return LoadedModel(name=name, model=_finish(model, name), tokenizer=tokenizer, source=source,
                       load_seconds=time.perf_counter() - started)
