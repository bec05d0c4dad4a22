"""The engine's torch path: masked logits of query chunks, their row statistics, and the layer's output through
PyTorch's SDPA (or chunked softmax for soft-capped logits). Used where the fused kernel is not: a GPU, no C
compiler, a kernel that failed its checks, ATTN_KERNEL=torch; tests hold the two paths together. Everything stays on
the queries' device (nothing is copied to the host here), and the statistics are computed in float32 whatever the
model's dtype. Under a distance remapping (engine.remap) every block of logits is taken from two: the near one and
the far one."""

from __future__ import annotations

from types import SimpleNamespace

import torch
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from model_utils.core.statistics import ROW_FIELDS, bucket_bounds
from model_utils.engine.remap import LayerRemap, RemappedBlock
from model_utils.engine.row_statistics import row_statistics

# Elements in one chunk of logits [view, head, query, key] on the torch path: 4M floats = 16 MB per temporary.
DEFAULT_CHUNK_ELEMENTS = 1 << 22


def chunk_logits(query, key, scaling, multipliers, start, stop, sliding=None, softcap=None, low: int = 0,
                 offset: int = 0) -> torch.Tensor:
    """Masked attention logits of queries start..stop-1 against keys low..stop-1, for every view.

    query [B, H, n - offset, d] holds positions offset..n-1 (a continuation's queries; 0: all), key [B, KV, n, d]
    (grouped-query: head h reads kv head h // (H / KV)), multipliers [V, n] with B == V or B == 1. Returns
    [V, H, stop - start, stop - low] in the queries' dtype; a key a query cannot see (a later one, or one outside a
    sliding window) holds the dtype's min.
    """
    heads, dim = query.shape[1], query.shape[3]
    kv_heads = key.shape[1]
    rows = stop - start
    factors = multipliers[:, None, start:stop, None].to(query)  # [V, 1, c, 1] on the queries' device
    pre = scaling if not softcap else scaling / softcap
    q = (query[:, :, start - offset : stop - offset] * (factors * pre if not softcap else pre)).reshape(
        -1, kv_heads, heads // kv_heads * rows, dim)  # [V or 1, KV, g*c, d]
    logits = torch.matmul(q, key[:, :, low:stop].transpose(-1, -2))  # [V or 1, KV, g*c, k]
    logits = logits.view(-1, heads, rows, stop - low)  # [V or 1, H, c, k]
    if softcap:  # the temperature divides the capped score
        logits = torch.tanh(logits) * (factors * softcap)
    lowest = torch.finfo(logits.dtype).min
    queries = torch.arange(start, stop, device=query.device)[:, None]
    keys = torch.arange(low, stop, device=query.device)[None, :]
    hidden = keys > queries
    if sliding:
        hidden |= keys <= queries - sliding
    logits.masked_fill_(hidden, lowest)
    return logits


def remapped_logits(query, key, scaling, multipliers, start, stop, sliding=None, softcap=None,
                    remap: LayerRemap | None = None, block: RemappedBlock | None = None, offset: int = 0
                    ) -> torch.Tensor:
    """chunk_logits, under a distance remapping: each pair's logit from the near block (q, k at their own
    positions) or, at distance >= W, from the far block (q, k at their far positions), and no weight where the
    recipe hides a key (`block`: the chunk's, if already made). Without a remapping, chunk_logits itself. The far
    block is scored against every key, the near one only against the keys within W of some query of the chunk.
    `offset`: the first position the queries (and the far block's queries) hold, as in chunk_logits."""
    if remap is None:
        return chunk_logits(query, key, scaling, multipliers, start, stop, sliding, softcap, offset=offset)
    logits = chunk_logits(remap.query, remap.key, scaling, multipliers, start, stop, sliding, softcap, offset=offset)
    block = remap.layout.block(start, stop, sliding) if block is None else block
    low = max(0, start - remap.layout.rope.window + 1)  # every key before it is W or more from every query
    near = chunk_logits(query, key, scaling, multipliers, start, stop, sliding, softcap, low, offset)
    band = logits[..., low:]  # [V, H, c, stop - low], a view
    band.copy_(torch.where(block.far[:, low:].to(logits.device), band, near))
    return logits.masked_fill_(block.hidden.to(logits.device), torch.finfo(logits.dtype).min)


def chunk_rows(n_views: int, heads: int, n_tokens: int, budget: int) -> int:
    """Queries per chunk so that one [V, H, rows, n] block stays within `budget` elements."""
    return max(1, min(n_tokens, budget // max(1, n_views * heads * n_tokens)))


def _prepared(query, key, multipliers, edges, q_start: int):
    """Float32 queries, keys and multipliers, the distance edges on the queries' device, and an empty float64
    [V, H, n - q_start, fields + bins] buffer for the rows' statistics."""
    query, key = query.float(), key.float()
    multipliers = multipliers.to(query.device, torch.float32)
    edges = edges.to(query.device)
    rows = torch.empty(multipliers.shape[0], query.shape[1], query.shape[2] - q_start,
                       len(ROW_FIELDS) + len(edges) - 1, dtype=torch.float64, device=query.device)
    return query, key, multipliers, edges, rows


def torch_row_statistics(query, key, scaling, multipliers, *, q_start: int, window: int, edges: torch.Tensor,
                         untrained_bin: int | None = None, sliding: int | None = None, softcap: float | None = None,
                         chunk_elements: int = DEFAULT_CHUNK_ELEMENTS, remap: LayerRemap | None = None) -> torch.Tensor:
    """[V, H, n - q_start, fields + bins] row statistics (float64, on the queries' device) of queries q_start..n-1,
    from float32 logits of query chunks; the arguments as FusedKernel.attention's, and a layer's distance
    remapping."""
    query, key, multipliers, edges, rows = _prepared(query, key, multipliers, edges, q_start)
    n_views, heads, n = multipliers.shape[0], query.shape[1], query.shape[2]
    step = chunk_rows(n_views, heads, n, chunk_elements)
    for start in range(q_start, n, step):
        stop = min(n, start + step)
        remapped = None if remap is None else remap.layout.block(start, stop, sliding)
        logits = remapped_logits(query, key, scaling, multipliers, start, stop, sliding, softcap, remap, remapped)
        stats, _ = row_statistics(logits, start, window, edges, sliding, untrained_bin, remapped)
        rows[:, :, start - q_start : stop - q_start] = stats
    return rows


def remapped_attention(query, key, value, scaling, multipliers, *, remap: LayerRemap, q_start: int, window: int,
                       edges: torch.Tensor, untrained_bin: int | None = None, sliding: int | None = None,
                       softcap: float | None = None, chunk_elements: int = DEFAULT_CHUNK_ELEMENTS
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """In-model mode under a distance remapping: each chunk's logits give both the layer's output [B, n, H, dv]
    (float32 softmax @ V) and its rows' statistics (as torch_row_statistics), so no pair is scored again for the
    output (SDPA cannot take two blocks)."""
    query, key, multipliers, edges, rows = _prepared(query, key, multipliers, edges, q_start)
    n_views, heads, n = multipliers.shape[0], query.shape[1], query.shape[2]
    output = torch.empty(n_views, heads, n, value.shape[-1], dtype=torch.float32, device=query.device)
    values = value.float().repeat_interleave(heads // value.shape[1], dim=1)  # [B, H, n, dv]
    step = chunk_rows(n_views, heads, n, chunk_elements)
    for start in range(0, n, step):
        stop = min(n, start + step)
        block = remap.layout.block(start, stop, sliding)
        logits = remapped_logits(query, key, scaling, multipliers, start, stop, sliding, softcap, remap, block)
        output[:, :, start:stop] = torch.matmul(torch.softmax(logits, -1), values[:, :, :stop])
        first = max(start, q_start)  # the chunk's first query whose statistics are measured
        if first < stop:
            stats, _ = row_statistics(logits[..., first - start :, :], first, window, edges, sliding, untrained_bin,
                                      block.rows(first - start))
            rows[:, :, first - q_start : stop - q_start] = stats
    return output.transpose(1, 2).contiguous(), rows


def band_mask(n: int, sliding: int, device=None) -> torch.Tensor:
    """[1, 1, n, n] SDPA mask (True: attended) of a sliding-window layer: query q sees keys q - sliding < k <= q."""
    queries = torch.arange(n, device=device)[:, None]
    keys = torch.arange(n, device=device)[None, :]
    return ((keys <= queries) & (keys > queries - sliding))[None, None]


def torch_output(module, query, key, value, attention_mask, scaling, multipliers, sliding, softcap, chunk_elements,
                 sdpa_kwargs: dict, remap: LayerRemap | None = None) -> torch.Tensor:
    """The propagated output [B, n, H, dv] at `multipliers` [B, n], without the kernel, in the queries' dtype:
    PyTorch's SDPA (causality and any sliding window from `attention_mask`, as the model passes it; a mask-free pass
    passes none, and a sliding window's band is built here), or, for soft-capped logits or a distance remapping
    (which SDPA cannot apply), softmax(logits) @ value in float32 query chunks."""
    if not softcap and remap is None:  # logits * m == logits / T; the product in float32, rounded once
        if attention_mask is None and sliding and query.shape[2] > sliding:  # a mask-free pass; shorter: causal
            attention_mask = band_mask(query.shape[2], sliding, query.device)
        scaled = (query.float() * multipliers[:, None, :, None].to(query.device, torch.float32)).to(query.dtype)
        return sdpa_attention_forward(module, scaled, key, value, attention_mask, scaling=scaling, **sdpa_kwargs)[0]
    heads, n = query.shape[1], query.shape[2]
    output = torch.empty(query.shape[0], heads, n, value.shape[-1], dtype=query.dtype, device=query.device)
    query, key = query.float(), key.float()
    values = value.float().repeat_interleave(heads // value.shape[1], dim=1)  # [B, H, n, dv]
    step = chunk_rows(query.shape[0], heads, n, chunk_elements)
    for start in range(0, n, step):
        stop = min(n, start + step)
        logits = remapped_logits(query, key, scaling, multipliers, start, stop, sliding, softcap, remap)
        output[:, :, start:stop] = torch.matmul(torch.softmax(logits, -1), values[:, :, :stop])
    return output.transpose(1, 2).contiguous()


def torch_attention(query, key, value, multipliers, scaling, *, softcap, q_start, window, sliding, edges,
                    bucket_size, with_output, untrained_bin=None) -> tuple[torch.Tensor | None, torch.Tensor]:
    """The torch path with FusedKernel.attention's arguments and results (the output in float32, the bucket sums),
    for the kernel's self-test and the tests; SDPA's mask (causal, and any sliding window) is built here, where a
    model's layer would pass its own."""
    rows = torch_row_statistics(query, key, scaling, multipliers, q_start=q_start, window=window, edges=edges,
                                untrained_bin=untrained_bin, sliding=sliding, softcap=softcap)
    output = None
    if with_output:
        n = query.shape[2]
        distance = torch.arange(n, device=query.device)[:, None] - torch.arange(n, device=query.device)[None, :]
        mask = ((distance >= 0) & (distance < sliding))[None, None] if sliding else None  # None: SDPA's causal
        module = SimpleNamespace(num_key_value_groups=query.shape[1] // key.shape[1], is_causal=True)
        output = torch_output(module, query, key, value, mask, scaling, multipliers, sliding, softcap,
                              DEFAULT_CHUNK_ELEMENTS, {}).float()
    return output, bucket_sums(rows, q_start, bucket_size)


def bucket_sums(rows: torch.Tensor, q_start: int, bucket_size: int | None) -> torch.Tensor:
    """[V, H, R, W] values of queries q_start..q_start+R-1 -> [V, H, buckets, W] sums per bucket (bucket_bounds).
    Each bucket is summed from a view of the rows: no padded copy of the whole block."""
    bounds = bucket_bounds(q_start, q_start + rows.shape[2], bucket_size)
    return torch.stack([rows[:, :, start - q_start : stop - q_start].sum(dim=2) for start, stop in bounds], dim=2)


def last_row(query, key, scaling, multipliers, sliding, softcap, remap: LayerRemap | None = None) -> torch.Tensor:
    """[V, H, n] attention weights of the last query (float32)."""
    n = query.shape[2]
    logits = remapped_logits(query.float(), key.float(), scaling, multipliers, n - 1, n, sliding, softcap, remap)
    return torch.softmax(logits[:, :, 0], dim=-1)
