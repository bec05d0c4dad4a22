"""Temperature inside attention, through transformers' own attention plug-in point, with statistics per layer.

`probed_attention` is registered as an attention implementation (`AttentionInterface`) together with a mask
function (`AttentionMaskInterface`): without the latter, a custom attention name silently gets no causal mask.
A forward pass carries its own `Probe` as the keyword argument `attention_probe`; nothing about a call lives in a
module variable, so one model object can serve many threads with different temperatures at once. Called without a
probe, the function is exactly transformers' SDPA attention.

For each layer the probe (1) scales the queries by the logit multiplier m = 1 / T in the chosen layers, so the
propagated output is PyTorch's SDPA kernel at temperature T (in-model mode; isolated mode propagates T = 1), and
(2) computes the statistics of metrics.row_statistics for every view (one per temperature) in query chunks, so no
layer's full n x n maps are ever held. Only the last query's row, and q / k of layers asked for, are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from transformers import AttentionInterface, AttentionMaskInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import sdpa_mask

from model_utils.metrics import ROW_FIELDS, row_statistics

ATTENTION_NAME = "temperature_probe"

# Elements in one chunk of logits [view, head, query, key]: 4M floats = 16 MB per temporary, a handful alive at once.
DEFAULT_CHUNK_ELEMENTS = 1 << 22


@dataclass
class Probe:
    """One forward pass's temperatures and the statistics it collects (shapes: V views, B batch rows, n tokens).

    view_multipliers: [V, n] logit multiplier (1 / T, or a schedule) per view and query position.
    propagate: True for in-model mode: batch row v runs at view v's multiplier (needs B == V). False for isolated
        mode: the batch is one row run at T = 1, and each view re-softmaxes that row's scores at its multiplier.
    layers: where the multipliers apply; elsewhere every view uses m = 1.
    """

    view_multipliers: torch.Tensor
    window: int
    q_start: int
    propagate: bool = True
    layers: frozenset[int] | None = None
    keep_layers: frozenset[int] = frozenset()
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS
    on_layer: Callable[[int], None] | None = None
    # filled in by the forward pass, keyed by layer index
    sums: dict[int, torch.Tensor] = field(default_factory=dict)  # [V, H, len(ROW_FIELDS)] float64 sums over queries
    last_rows: dict[int, torch.Tensor] = field(default_factory=dict)  # [V, H, n] the last query's weights
    kept: dict[int, tuple[torch.Tensor, torch.Tensor, float]] = field(default_factory=dict)  # q, k, scaling

    def applies_to(self, layer: int) -> bool:
        return applies_to(self.layers, layer)

    def multipliers_for(self, layer: int) -> torch.Tensor:
        return multipliers_for(self.view_multipliers, self.layers, layer)


def applies_to(layers, layer: int) -> bool:
    """Whether the temperature applies in `layer`, given the chosen `layers` (None: all)."""
    return layers is None or layer in layers


def multipliers_for(view_multipliers: torch.Tensor, layers, layer: int) -> torch.Tensor:
    """[V, n] multipliers of `layer`: the views' own where the temperature applies, else ones."""
    return view_multipliers if applies_to(layers, layer) else torch.ones_like(view_multipliers)


def chunk_logits(query, key, scaling, multipliers, start, stop, attention_mask=None) -> torch.Tensor:
    """Masked attention logits of queries start..stop-1 against keys 0..stop-1, for every view.

    query [B, H, n, d], key [B, KV, n, d] (grouped-query: head h reads kv head h // (H / KV)), multipliers [V, n]
    with B == V or B == 1. Returns [V, H, stop - start, stop]; a key a query cannot see holds the dtype's min.
    """
    heads, dim = query.shape[1], query.shape[3]
    kv_heads = key.shape[1]
    rows = stop - start
    factors = (multipliers[:, None, start:stop, None] * scaling).to(query.dtype)  # [V, 1, c, 1]
    q = (query[:, :, start:stop] * factors).reshape(-1, kv_heads, heads // kv_heads * rows, dim)  # [V, KV, g*c, d]
    logits = torch.matmul(q, key[:, :, :stop].transpose(-1, -2))  # [V, KV, g*c, k]
    logits = logits.view(-1, heads, rows, stop)  # [V, H, c, k]
    lowest = torch.finfo(logits.dtype).min
    future = torch.ones(rows, rows, dtype=torch.bool, device=query.device).triu(1)  # [c, c] in the diagonal block
    logits[..., start:stop].masked_fill_(future, lowest)
    if attention_mask is not None:  # padding: bool (True = visible) or additive float (large negative = hidden)
        window = attention_mask[:, :, start:stop, :stop]
        hidden = ~window if window.dtype == torch.bool else window < torch.finfo(window.dtype).min / 2
        logits.masked_fill_(hidden, lowest)
    return logits


def chunk_rows(n_views: int, heads: int, n_tokens: int, budget: int) -> int:
    """Queries per chunk so that one [V, H, rows, n] block stays within `budget` elements."""
    return max(1, min(n_tokens, budget // max(1, n_views * heads * n_tokens)))


def collect_statistics(probe: Probe, layer: int, query, key, attention_mask, scaling: float) -> None:
    """Fill probe.sums / last_rows (and kept) for `layer` from its post-RoPE query [B, H, n, d] and key."""
    multipliers = probe.multipliers_for(layer).to(query.dtype)
    n_views, heads, n = multipliers.shape[0], query.shape[1], query.shape[2]
    step = chunk_rows(n_views, heads, n, probe.chunk_elements)
    sums = torch.zeros(n_views, heads, len(ROW_FIELDS), dtype=torch.float64)
    for start in range(probe.q_start, n, step):
        stop = min(n, start + step)
        logits = chunk_logits(query, key, scaling, multipliers, start, stop, attention_mask)
        stats, last_row = row_statistics(logits, start, probe.window)
        sums += stats.sum(dim=-2, dtype=torch.float64)
        if stop == n:
            probe.last_rows[layer] = last_row  # [V, H, n]
    probe.sums[layer] = sums
    if layer in probe.keep_layers:
        probe.kept[layer] = (query, key, scaling)


def probed_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers attention function: SDPA at the probe's temperature, statistics collected on the way."""
    probe: Probe | None = kwargs.pop("attention_probe", None)
    if probe is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    if kwargs.get("sliding_window") or kwargs.get("softcap"):
        raise ValueError("models with sliding-window or soft-capped attention are not supported by the explorer")
    layer = module.layer_idx
    scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
    collect_statistics(probe, layer, query, key, attention_mask, scaling)
    if probe.propagate and probe.applies_to(layer):
        query = query * probe.view_multipliers[:, None, :, None].to(query.dtype)  # logits * m == logits / T
    output = sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                    **kwargs)
    if probe.on_layer is not None:
        probe.on_layer(layer)
    return output


AttentionInterface.register(ATTENTION_NAME, probed_attention)
AttentionMaskInterface.register(ATTENTION_NAME, sdpa_mask)  # without it the custom name gets no causal mask
