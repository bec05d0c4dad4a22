"""Temperature inside attention, through transformers' own attention plug-in point, with statistics per layer.

`probed_attention` is registered as an attention implementation (`AttentionInterface`) together with a mask
function (`AttentionMaskInterface`): without the latter, a custom attention name silently gets no causal mask.
A forward pass carries its own `Probe` as the keyword argument `attention_probe`; nothing about a call lives in a
module variable, so one model object can serve many threads with different temperatures at once. Called without a
probe, the function is exactly transformers' SDPA attention.

In each layer the probe multiplies the logits by m = 1 / T (or a schedule's m per query position) in the chosen
layers and measures every attention row: in-model mode propagates that attention (batch row v runs at view v's
multipliers), isolated mode propagates T = 1 and measures each view's multipliers on the same T = 1 inputs.
The fused kernel (kernel.py, fused_attention.c) computes the layer's output and every row's statistics in one
pass, summed straight into the query-position buckets; without it the same numbers come from torch operations on
query chunks and PyTorch's SDPA, summed per bucket afterwards. Either way no layer's n x n maps are held, and only
the bucket sums, the last query's row and, for layers asked for, the queries and keys are kept.

Sliding-window layers (Gemma 3's local layers, Mistral) and Gemma 2's soft-capped logits are handled by the
kernel and the torch path alike: a key outside the window gets no weight, and the temperature divides the capped
score (softmax(c tanh(s / c) / T)). The engine never pads, so the mask is causal plus the layer's window.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from transformers import AttentionInterface, AttentionMaskInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import sdpa_mask

from model_utils.kernel import FusedKernel, load_kernel
from model_utils.metrics import ROW_FIELDS, bucket_bounds, distance_bins
from model_utils.row_statistics import row_statistics

ATTENTION_NAME = "temperature_probe"

# Elements in one chunk of logits [view, head, query, key] on the torch path: 4M floats = 16 MB per temporary.
DEFAULT_CHUNK_ELEMENTS = 1 << 22


@dataclass
class LayerInputs:
    """What rebuilds any attention map of one layer without running the model again."""

    query: torch.Tensor  # [B, H, n, d] after RoPE
    key: torch.Tensor  # [B, KV, n, d]
    scaling: float
    sliding: int | None  # the layer's sliding window, None for full attention
    softcap: float | None  # the layer's attention logit soft cap


@dataclass
class Probe:
    """One forward pass's temperatures and the statistics it collects (shapes: V views, B batch rows, n tokens).

    view_multipliers: [V, n] logit multiplier (1 / T, or a schedule) per view and query position.
    propagate: True for in-model mode: batch row v runs at view v's multiplier (needs B == V). False for isolated
        mode: the batch is one row run at T = 1, and each view re-softmaxes that row's scores at its multiplier.
    layers: where the multipliers apply; elsewhere every view uses m = 1.
    q_start, bucket_size: statistics for queries q_start..n-1, summed per query-position bucket (bucket_size
        wide, boundaries at its multiples; None: one bucket).
    edges: key-distance bin edges (metrics.distance_bins) whose masses are measured for every row.
    kernel: the fused kernel (by default, when it can be built), or None for the torch path.
    """

    view_multipliers: torch.Tensor
    window: int
    q_start: int
    edges: torch.Tensor | None = None  # None: distance_bins of the text's length
    kernel: FusedKernel | None = field(default_factory=load_kernel)
    propagate: bool = True
    layers: frozenset[int] | None = None
    keep_layers: frozenset[int] = frozenset()
    bucket_size: int | None = None
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS
    on_layer: Callable[[int], None] | None = None
    # filled in by the forward pass, keyed by layer index
    sums: dict[int, torch.Tensor] = field(default_factory=dict)  # [V, H, buckets, fields + bins] float64
    last_rows: dict[int, torch.Tensor] = field(default_factory=dict)  # [V, H, n] the last query's weights
    kept: dict[int, LayerInputs] = field(default_factory=dict)
    sliding: dict[int, int | None] = field(default_factory=dict)  # each layer's window, as the model passed it

    def applies_to(self, layer: int) -> bool:
        return applies_to(self.layers, layer)

    def multipliers_for(self, layer: int) -> torch.Tensor:
        return multipliers_for(self.view_multipliers, self.layers, layer)

    @property
    def row_width(self) -> int:
        return len(ROW_FIELDS) + len(self.edges) - 1

    def distance_edges(self, n_tokens: int) -> torch.Tensor:
        if self.edges is None:
            self.edges = torch.from_numpy(distance_bins(n_tokens))
        return self.edges


def applies_to(layers, layer: int) -> bool:
    """Whether the temperature applies in `layer`, given the chosen `layers` (None: all)."""
    return layers is None or layer in layers


def multipliers_for(view_multipliers: torch.Tensor, layers, layer: int) -> torch.Tensor:
    """[V, n] multipliers of `layer`: the views' own where the temperature applies, else ones."""
    return view_multipliers if applies_to(layers, layer) else torch.ones_like(view_multipliers)


def chunk_logits(query, key, scaling, multipliers, start, stop, sliding=None, softcap=None) -> torch.Tensor:
    """Masked attention logits of queries start..stop-1 against keys 0..stop-1, for every view.

    query [B, H, n, d], key [B, KV, n, d] (grouped-query: head h reads kv head h // (H / KV)), multipliers [V, n]
    with B == V or B == 1. Returns [V, H, stop - start, stop]; a key a query cannot see (a later one, or one
    outside a sliding window) holds the dtype's min.
    """
    heads, dim = query.shape[1], query.shape[3]
    kv_heads = key.shape[1]
    rows = stop - start
    factors = multipliers[:, None, start:stop, None].to(query)  # [V, 1, c, 1] on the queries' device
    pre = scaling if not softcap else scaling / softcap
    q = (query[:, :, start:stop] * (factors * pre if not softcap else pre)).reshape(
        -1, kv_heads, heads // kv_heads * rows, dim)  # [V or 1, KV, g*c, d]
    logits = torch.matmul(q, key[:, :, :stop].transpose(-1, -2))  # [V or 1, KV, g*c, k]
    logits = logits.view(-1, heads, rows, stop)  # [V or 1, H, c, k]
    if softcap:  # the temperature divides the capped score
        logits = torch.tanh(logits) * (factors * softcap)
    lowest = torch.finfo(logits.dtype).min
    queries = torch.arange(start, stop, device=query.device)[:, None]
    keys = torch.arange(stop, device=query.device)[None, :]
    hidden = keys > queries
    if sliding:
        hidden |= keys <= queries - sliding
    logits.masked_fill_(hidden, lowest)
    return logits


def chunk_rows(n_views: int, heads: int, n_tokens: int, budget: int) -> int:
    """Queries per chunk so that one [V, H, rows, n] block stays within `budget` elements."""
    return max(1, min(n_tokens, budget // max(1, n_views * heads * n_tokens)))


def torch_row_statistics(probe: Probe, query, key, scaling, multipliers, sliding, softcap) -> torch.Tensor:
    """[V, H, n - q_start, fields + bins] row statistics from torch operations on query chunks."""
    n_views, heads, n = multipliers.shape[0], query.shape[1], query.shape[2]
    rows = torch.empty(n_views, heads, n - probe.q_start, probe.row_width, dtype=torch.float64)
    step = chunk_rows(n_views, heads, n, probe.chunk_elements)
    for start in range(probe.q_start, n, step):
        stop = min(n, start + step)
        logits = chunk_logits(query, key, scaling, multipliers, start, stop, sliding, softcap)
        stats, _ = row_statistics(logits, start, probe.window, probe.edges.to(query.device), sliding)
        rows[:, :, start - probe.q_start : stop - probe.q_start] = stats.to("cpu", torch.float64)
    return rows


def torch_output(module, query, key, value, attention_mask, scaling, multipliers, sliding, softcap, chunk_elements,
                 sdpa_kwargs: dict) -> torch.Tensor:
    """The propagated output [B, n, H, dv] at `multipliers` [B, n], without the kernel: PyTorch's SDPA, or, for
    soft-capped logits (which SDPA cannot apply), softmax(logits) @ value in query chunks."""
    if not softcap:
        scaled = query * multipliers[:, None, :, None].to(query)  # logits * m == logits / T
        return sdpa_attention_forward(module, scaled, key, value, attention_mask, scaling=scaling, **sdpa_kwargs)[0]
    heads, n = query.shape[1], query.shape[2]
    values = value.repeat_interleave(heads // value.shape[1], dim=1)  # [B, H, n, dv]
    output = torch.empty(query.shape[0], heads, n, value.shape[-1], dtype=query.dtype, device=query.device)
    step = chunk_rows(query.shape[0], heads, n, chunk_elements)
    for start in range(0, n, step):
        stop = min(n, start + step)
        weights = torch.softmax(chunk_logits(query, key, scaling, multipliers, start, stop, sliding, softcap), -1)
        output[:, :, start:stop] = torch.matmul(weights, values[:, :, :stop])
    return output.transpose(1, 2).contiguous()


def bucket_sums(rows: torch.Tensor, q_start: int, bucket_size: int | None) -> torch.Tensor:
    """[V, H, R, W] values of queries q_start..q_start+R-1 -> [V, H, buckets, W] sums per bucket (bucket_bounds).
    Each bucket is summed from a view of the rows: no padded copy of the whole block."""
    bounds = bucket_bounds(q_start, q_start + rows.shape[2], bucket_size)
    return torch.stack([rows[:, :, start - q_start : stop - q_start].sum(dim=2) for start, stop in bounds], dim=2)


def last_row(query, key, scaling, multipliers, sliding, softcap) -> torch.Tensor:
    """[V, H, n] attention weights of the last query."""
    n = query.shape[2]
    return torch.softmax(chunk_logits(query, key, scaling, multipliers, n - 1, n, sliding, softcap)[:, :, 0], dim=-1)


def probed_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers attention function: attention at the probe's temperature, statistics collected on the way."""
    probe: Probe | None = kwargs.pop("attention_probe", None)
    sliding, softcap = kwargs.get("sliding_window"), kwargs.get("softcap")
    scaling = query.shape[-1] ** -0.5 if scaling is None else scaling
    if probe is None:
        if softcap:  # SDPA cannot cap logits: the model's own forward runs the torch path at T = 1
            ones = torch.ones(query.shape[0], query.shape[2], device=query.device)
            return torch_output(module, query, key, value, attention_mask, scaling, ones, sliding, softcap,
                                DEFAULT_CHUNK_ELEMENTS, kwargs), None
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    layer = module.layer_idx
    multipliers = probe.multipliers_for(layer).to(torch.float32)
    edges = probe.distance_edges(query.shape[2])
    propagated = multipliers if probe.propagate else torch.ones_like(multipliers[:1])
    if probe.kernel is not None and query.device.type == "cpu" and query.dtype == torch.float32:
        settings = {"softcap": softcap, "q_start": probe.q_start, "window": probe.window, "sliding": sliding,
                    "edges": edges, "bucket_size": probe.bucket_size}
        output, sums = probe.kernel.attention(query, key, value, multipliers, scaling, with_output=probe.propagate,
                                              **settings)
        if output is None:  # isolated: statistics of every view, output at T = 1
            output, _ = probe.kernel.attention(query, key, value, propagated, scaling, with_output=True, **settings)
    else:
        rows = torch_row_statistics(probe, query, key, scaling, multipliers, sliding, softcap)
        sums = bucket_sums(rows, probe.q_start, probe.bucket_size)
        output = torch_output(module, query, key, value, attention_mask, scaling, propagated, sliding, softcap,
                              probe.chunk_elements, kwargs)
    probe.sums[layer] = sums
    probe.last_rows[layer] = last_row(query, key, scaling, multipliers, sliding, softcap).cpu()
    probe.sliding[layer] = sliding
    if layer in probe.keep_layers:
        probe.kept[layer] = LayerInputs(query.cpu(), key.cpu(), scaling, sliding, softcap)
    if probe.on_layer is not None:
        probe.on_layer(layer)
    return output.to(query.dtype), None


AttentionInterface.register(ATTENTION_NAME, probed_attention)
AttentionMaskInterface.register(ATTENTION_NAME, sdpa_mask)  # without it the custom name gets no causal mask
