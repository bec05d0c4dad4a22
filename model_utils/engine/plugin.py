"""Temperature inside attention through transformers' own plug-in point: `probed_attention` is registered as an
attention implementation (`AttentionInterface`) with SDPA's mask function (`AttentionMaskInterface`: without it a
custom name gets no causal mask), and `attach` switches a loaded model to it and checks that every layer goes
through it. Called without a probe, the function is exactly transformers' SDPA attention. A pass inside `mask_free()`
builds no [n, n] mask: its layers apply causality and windows themselves. How a layer runs (the fused kernel or the
torch path, in-model or isolated) is in docs/ARCHITECTURE.md."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar

import torch
from transformers import AttentionInterface, AttentionMaskInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import sdpa_mask

from model_utils.core.errors import AnalysisError, ModelLoadError
from model_utils.core.progress import OnProgress
from model_utils.core.report import LayerInputs
from model_utils.engine.probe import Probe
from model_utils.engine.rope import install as install_rope_hooks
from model_utils.engine.step import Step, step_attention
from model_utils.engine.torch_path import (
    DEFAULT_CHUNK_ELEMENTS,
    bucket_sums,
    last_row,
    remapped_attention,
    torch_output,
    torch_row_statistics,
)
from model_utils.models import LoadedModel, load_plain_model
from model_utils.models.loaded import report_loading

ATTENTION_NAME = "temperature_probe"
_REGISTERED = threading.Lock()
# Set around a pass whose every layer carries a probe (analyze): the kernel and the torch path apply causality and
# any sliding window themselves, so the model need not build its masks. A sliding-window mask is [n, n] booleans:
# 2.3 GB at 49,152 tokens, and building it takes three times that.
_MASK_FREE: ContextVar[bool] = ContextVar("mask_free", default=False)


def probed_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers attention function: attention at the probe's temperature, statistics collected on the way."""
    probe: Probe | None = kwargs.pop("attention_probe", None)
    row_multipliers = kwargs.pop("attention_multipliers", None)  # [B, q] or [B]: generation's, no probe
    step: Step | None = kwargs.pop("attention_step", None)  # a prefix read once or its continuation (engine.step)
    sliding, softcap = kwargs.get("sliding_window"), kwargs.get("softcap")
    scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
    if step is not None:
        return step_attention(module, query, key, value, scaling, sliding, softcap, step, kwargs).to(query.dtype), None
    if probe is None and row_multipliers is not None:
        return generation_output(module, query, key, value, attention_mask, scaling, row_multipliers, sliding,
                                 softcap, kwargs), None
    if probe is None:
        if softcap:  # SDPA cannot cap logits: the model's own forward runs the torch path at T = 1
            ones = torch.ones(query.shape[0], query.shape[2], device=query.device)
            return torch_output(module, query, key, value, attention_mask, scaling, ones, sliding, softcap,
                                DEFAULT_CHUNK_ELEMENTS, kwargs), None
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    layer = module.layer_idx
    multipliers = probe.multipliers_for(layer).to(query.device, torch.float32)
    edges = probe.distance_edges(query.shape[2])
    propagated = multipliers if probe.propagate else torch.ones_like(multipliers[:1])
    settings = {"softcap": softcap, "q_start": probe.q_start, "window": probe.window, "sliding": sliding,
                "edges": edges, "untrained_bin": probe.untrained_from}
    kernel = probe.layer_kernel(query)
    remap = None if probe.remap is None else probe.remap.layer(query, key)  # the far block of q and k
    if kernel is not None:
        output, sums = kernel.attention(query, key, value, multipliers, scaling, with_output=probe.propagate,
                                        bucket_size=probe.bucket_size, **settings)
        if output is None:  # isolated: statistics of every view, output at T = 1
            output, _ = kernel.attention(query, key, value, propagated, scaling, with_output=True,
                                         bucket_size=probe.bucket_size, **settings)
    elif remap is not None and probe.propagate:  # in-model: one scoring gives the output and the statistics
        output, rows = remapped_attention(query, key, value, scaling, multipliers, remap=remap,
                                          chunk_elements=probe.chunk_elements, **settings)
        sums = bucket_sums(rows, probe.q_start, probe.bucket_size)
    else:  # on the queries' device; Probe.move_to_host copies the sums once the pass is done
        rows = torch_row_statistics(query, key, scaling, multipliers, chunk_elements=probe.chunk_elements,
                                    remap=remap, **settings)
        sums = bucket_sums(rows, probe.q_start, probe.bucket_size)
        output = torch_output(module, query, key, value, attention_mask, scaling, propagated, sliding, softcap,
                              probe.chunk_elements, kwargs, remap)
    probe.sums[layer] = sums
    probe.last_rows[layer] = last_row(query, key, scaling, multipliers, sliding, softcap, remap)
    probe.sliding[layer] = sliding
    if layer in probe.keep_layers:
        probe.kept[layer] = LayerInputs(query=query.float().cpu().numpy(), key=key.float().cpu().numpy(),
                                        scaling=scaling, sliding=sliding, softcap=softcap,
                                        far_query=None if remap is None else remap.query.cpu().numpy(),
                                        far_key=None if remap is None else remap.key.cpu().numpy())
    if probe.on_layer is not None:
        probe.on_layer(layer)
    return output.to(query.dtype), None


def generation_output(module, query, key, value, attention_mask, scaling, row_multipliers, sliding, softcap,
                      kwargs) -> torch.Tensor:
    """A decoding step's attention output at a logit multiplier per batch row and query ([B, n_queries], or [B]
    for one per row), through the model's own mask and key-value cache (the queries may be fewer than the keys). A
    soft-capped layer's torch path aligns queries with keys by index, which a cached step breaks: such a model is
    refused (Gemma 2)."""
    if softcap:
        raise AnalysisError("this model soft-caps its attention logits; continuations at a temperature are not "
                            "supported for it")
    multipliers = row_multipliers.reshape(query.shape[0], -1).expand(query.shape[0], query.shape[2])  # [B, q]
    return torch_output(module, query, key, value, attention_mask, scaling, multipliers, sliding, softcap,
                        DEFAULT_CHUNK_ELEMENTS, kwargs)


def probe_mask(*args, **kwargs) -> torch.Tensor | None:
    """SDPA's mask function, or no mask inside `mask_free()`."""
    return None if _MASK_FREE.get() else sdpa_mask(*args, **kwargs)


@contextlib.contextmanager
def mask_free() -> Iterator[None]:
    """For the block, in this context only: the model builds no attention masks (every layer must carry a probe;
    the text has no padding, as the engine never pads)."""
    token = _MASK_FREE.set(True)
    try:
        yield
    finally:
        _MASK_FREE.reset(token)


def register() -> None:
    """Make `probed_attention` available to transformers under ATTENTION_NAME (idempotent)."""
    with _REGISTERED:
        AttentionInterface.register(ATTENTION_NAME, probed_attention)
        AttentionMaskInterface.register(ATTENTION_NAME, probe_mask)  # without one the custom name gets no causal mask


def attach(loaded: LoadedModel) -> LoadedModel:
    """Switch `loaded`'s attention to the probe and check it (self_check); raise ModelLoadError naming the fix."""
    register()
    install_rope_hooks(loaded)
    kind = f"model {loaded.name!r} ({loaded.text_config.model_type})"
    try:
        loaded.model.set_attn_implementation(ATTENTION_NAME)
    except (ValueError, NotImplementedError, AttributeError) as error:
        raise ModelLoadError(f"{kind} cannot take a custom attention function ({str(error).splitlines()[0]}), "
                             "so the explorer cannot apply a temperature inside it") from None
    self_check(loaded)
    return loaded


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Torch at one thread in the calling thread for the block, then back at its count (OpenMP keeps it per
    calling thread, as analyze.set_threads does)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def self_check(loaded: LoadedModel) -> None:
    """Run three tokens through the model once, before any user text: every layer's attention must pass through
    the probe, and the engine's way to the next-token logits (base model, then `next_token_logits`) must give the
    model's own logits. Raises ModelLoadError naming what differs.

    On one thread: three tokens give a second thread nothing to share, and on a machine whose cores are busy each of
    the passes' few hundred small operations would wait for it to be scheduled (bench/STARTUP.md)."""
    ids = torch.tensor([[1, 2, 3]], device=loaded.device) % loaded.text_config.vocab_size
    probe = Probe(view_multipliers=torch.ones(1, 3), window=1, q_start=1)
    with one_thread(), torch.inference_mode():  # both through the same attention: only the way to the logits differs
        hidden = loaded.model.base_model(input_ids=ids, use_cache=False, attention_probe=probe).last_hidden_state
        own = loaded.model(input_ids=ids, use_cache=False,
                           attention_probe=Probe(view_multipliers=torch.ones(1, 3), window=1,
                                                 q_start=1)).logits
        engines = loaded.next_token_logits(hidden)
    kind = f"model {loaded.name!r} ({loaded.text_config.model_type})"
    if len(probe.sums) != loaded.n_layers:
        raise ModelLoadError(f"{kind} sends {len(probe.sums)} of its {loaded.n_layers} layers' attention through "
                             "transformers' attention interface; the explorer needs all of them")
    if not torch.allclose(engines, own, atol=1e-4, rtol=1e-4):
        raise ModelLoadError(f"{kind} turns its hidden states into logits in a way the explorer does not "
                             "reproduce, so its loss would be wrong")


def load_model(name: str = "bundled", progress: OnProgress | None = None,
               device: str | None = None) -> LoadedModel:
    """A model by name (models.load_plain_model: "bundled", "tiny-random", a folder or a hub id) with the probe
    attached, on `device` (default the CPU, where the fused kernel runs; elsewhere the engine takes its torch path)."""
    loaded = attach(load_plain_model(name, progress, device))
    report_loading(progress, 1.0, f"Model {loaded.name} ready")
    return loaded
