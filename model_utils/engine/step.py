"""The attention side of a prefix read once and continued many times (engine.continuation drives the passes): a
`Step` travels with each pass as the keyword argument `attention_step`, which plugin.probed_attention hands to
`step_attention`. A prefix's pass keeps every layer's keys and values [1, KV, n, d] as the layer's attention met
them (rotated at their own positions) in a `Prefix`; a continuation's queries meet the kept keys up to its cut, then
their own, and the weights come from the torch path's own logits function (torch_path.remapped_logits), distance
remappings included."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from model_utils.core.views import View
from model_utils.engine.kernel import load_kernel
from model_utils.engine.remap import Remap
from model_utils.engine.torch_path import DEFAULT_CHUNK_ELEMENTS, chunk_rows, remapped_logits, torch_output

OnRows = Callable[[int, int, torch.Tensor], None]  # (layer, first query's position, weights [1, H, rows, keys])


@dataclass(kw_only=True)
class Prefix:
    """One view's pass over a prefix of `n_tokens`: every layer's keys and values [1, KV, n, d], on the model's
    device, and what the pass ran (the view, the trained length its recipe is anchored at)."""

    view: View
    trained_length: int
    n_tokens: int
    keys: dict[int, torch.Tensor] = field(default_factory=dict)
    values: dict[int, torch.Tensor] = field(default_factory=dict)


@dataclass(kw_only=True)
class Step:
    """What one pass of a prefix or a continuation hands the attention function: the prefix it continues (None:
    it is the prefix) cut at `start`, the view's multipliers [1, start + new tokens], the pass's remapping, where
    to keep the keys and values it ends with (the prefix being read, or the prefix a continuation extends), and who
    reads its weights."""

    prefix: Prefix | None
    start: int
    multipliers: torch.Tensor
    remap: Remap | None = None
    keep: Prefix | None = None
    on_rows: OnRows | None = None


def step_attention(module, query, key, value, scaling, sliding, softcap, step: Step, sdpa_kwargs: dict
                   ) -> torch.Tensor:
    """A layer's output [1, new, H, dv] for a Step: a prefix's as an analysis's pass computes it (`_read`), keeping
    its keys and values; a continuation's from its queries against the kept keys up to the cut and its own, in
    float32 query chunks, each chunk's weights handed to on_rows."""
    layer = module.layer_idx
    if step.prefix is not None:
        key = torch.cat([step.prefix.keys[layer][:, :, : step.start], key], dim=2)  # [1, KV, stop, d]
        value = torch.cat([step.prefix.values[layer][:, :, : step.start], value], dim=2)
    if step.keep is not None:  # a prefix read, or one a continuation extends (keep is its prefix)
        step.keep.keys[layer], step.keep.values[layer] = key, value
    multipliers = step.multipliers.to(query.device, torch.float32)
    if step.prefix is None and step.on_rows is None:
        return _read(module, query, key, value, scaling, sliding, softcap, step, multipliers, sdpa_kwargs)
    return _continued(layer, query, key, value, scaling, sliding, softcap, step, multipliers)


def _read(module, query, key, value, scaling, sliding, softcap, step: Step, multipliers, sdpa_kwargs: dict
          ) -> torch.Tensor:
    """A whole pass's output [1, n, H, dv] at `multipliers`: the fused kernel's where it runs (as an analysis's
    pass, with the statistics of the last query only), else the torch path's."""
    n = query.shape[2]
    kernel = load_kernel() if query.device.type == "cpu" and step.remap is None else None
    if kernel is not None:
        edges = torch.tensor([0, n], dtype=torch.int64)  # one distance bin: no statistic is read
        output, _ = kernel.attention(query, key, value, multipliers, scaling, softcap=softcap, q_start=n - 1,
                                     window=1, sliding=sliding, edges=edges, bucket_size=None, with_output=True)
        return output
    remap = None if step.remap is None else step.remap.layer(query, key)
    return torch_output(module, query, key, value, None, scaling, multipliers, sliding, softcap,
                        DEFAULT_CHUNK_ELEMENTS, sdpa_kwargs, remap)


def _continued(layer, query, key, value, scaling, sliding, softcap, step: Step, multipliers) -> torch.Tensor:
    """softmax(logits) @ values of queries start..stop-1 against keys 0..stop-1, in float32 chunks of queries."""
    start, stop = step.start, step.start + query.shape[2]
    heads = query.shape[1]
    remap = None if step.remap is None else step.remap.layer(query, key, start)
    query, key = query.float(), key.float()
    values = value.float().repeat_interleave(heads // value.shape[1], dim=1)  # [1, H, stop, dv]
    output = torch.empty(query.shape[0], heads, stop - start, value.shape[-1], dtype=torch.float32,
                         device=query.device)
    rows = chunk_rows(multipliers.shape[0], heads, stop, DEFAULT_CHUNK_ELEMENTS)
    for first in range(start, stop, rows):
        last = min(stop, first + rows)
        logits = remapped_logits(query, key, scaling, multipliers, first, last, sliding, softcap, remap,
                                 offset=start)  # [1, H, last - first, last]
        weights = torch.softmax(logits, dim=-1)
        output[:, :, first - start : last - start] = torch.matmul(weights, values[:, :, :last])
        if step.on_rows is not None:
            step.on_rows(layer, first, weights)
    return output.transpose(1, 2).contiguous()
