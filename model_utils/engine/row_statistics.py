"""The row statistics of model_utils/core/statistics.py (definitions in its docstring) on torch blocks of attention
logits `[..., query, key]`: the engine's torch path, when the fused kernel (fused_attention.c) is unavailable, and
`statistics_from_probabilities`, which runs them on full attention maps (the benchmark's peer, and checks).
"""

from __future__ import annotations

import numpy as np
import torch

from model_utils.core.statistics import first_stat_query
from model_utils.core.statistics import named_statistics as summarize
from model_utils.engine.remap import RemappedBlock


def band_masks(start: int, stop: int, low: int, window: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Boolean [query, key] masks over keys low..stop-1 for queries start..stop-1: the recent keys
    max(1, q - window + 1)..q and the distant keys 1..q - window."""
    keys = torch.arange(low, stop, device=device)[None, :]  # [1, key]
    queries = torch.arange(start, stop, device=device)[:, None]  # [query, 1]
    recent = (keys <= queries) & (keys > queries - window) & (keys >= 1)
    distant = (keys >= 1) & (keys <= queries - window)
    return recent, distant


def top_two(logits: torch.Tensor, block: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """Largest and second-largest value along the last axis (a tie counts twice), exactly as topk(2) gives them,
    several times faster on CPU for long rows: `amax` over blocks of `block` keys is vectorised where topk is not,
    so topk only runs over the block maxima (plus the ragged tail) and inside the winning block."""
    full = logits.shape[-1] // block * block
    n_blocks = full // block
    if n_blocks < 2:  # short rows: nothing to gain
        values = logits.topk(2, dim=-1).values
        return values[..., 0], values[..., 1]
    blocks = logits[..., :full].unflatten(-1, (n_blocks, block))  # [..., blocks, block], a view
    candidates = torch.cat([blocks.amax(dim=-1), logits[..., full:]], dim=-1)  # block maxima, then tail keys
    best, where = candidates.topk(2, dim=-1)
    in_block = where[..., 0] < n_blocks  # else the winner is a tail key, a group of its own
    winner = where[..., 0].clamp_max(n_blocks - 1)
    inside = blocks.gather(-2, winner[..., None, None].expand(*winner.shape, 1, block)).squeeze(-2)
    runner_up_inside = inside.topk(2, dim=-1).values[..., 1]
    second = torch.where(in_block, torch.maximum(best[..., 1], runner_up_inside), best[..., 1])
    return best[..., 0], second


def row_statistics(logits: torch.Tensor, start: int, window: int, edges: torch.Tensor | None = None,
                   sliding: int | None = None, untrained_from: int | None = None,
                   remapped: RemappedBlock | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row attention statistics of a block of logits, for queries start..start+rows-1 against keys
    0..start+rows-1 (so the block's last row is its last key's own query).

    logits: [..., rows, keys] at the wanted temperature (scores * multiplier), with a very negative number or -inf
    at keys a query cannot see (later keys; with a `sliding` window, keys before q - sliding + 1). Every row must
    see at least one key. `edges`: distance-bin edges (distance_bins), whose masses follow the ROW_FIELDS; the
    bins from `untrained_from` on (core.statistics.untrained_bin) make the untrained mass, 0 without them.
    `remapped`: under a distance remapping (engine.remap), how many keys each row sees and which lie at a remapped
    distance >= the trained length (the effective untrained mass; without a remapping it is the untrained mass).
    The block is CONSUMED (shifted in place), and so is its softmax, to save passes over memory.
    Returns stats [..., rows, len(ROW_FIELDS) + bins] and the attention weights of the block's last row [..., keys].
    """
    rows = logits.shape[-2]
    stop = start + rows
    first, second = top_two(logits)  # [..., rows] each
    shifted = logits.sub_(first[..., None])  # z = l - max(l) <= 0: exp cannot overflow, no cancellation below
    shifted.clamp_min_(torch.finfo(logits.dtype).min)  # a -inf mask would make 0 * z NaN; the dtype's min cannot
    probs = torch.softmax(shifted, dim=-1)
    bins = [] if edges is None else [mass_in_distance_bins(probs, start, edges)]
    low = max(1, start - window + 1)  # keys before `low` are distant for every row of the block
    recent_mask, distant_mask = band_masks(start, stop, low, window, logits.device)
    band = probs[..., low:stop]  # [..., rows, stop - low]: the only keys whose role differs between rows
    sink = probs[..., 0].clone()
    recent = (band * recent_mask).sum(dim=-1)
    distant = probs[..., 1:low].sum(dim=-1) + (band * distant_mask).sum(dim=-1)
    last_row = probs[..., -1, :].clone()
    top_prob = probs.amax(dim=-1)  # = e^0 / sum(e^z) = 1 / sum(e^z)
    effective = None if remapped is None else (probs * remapped.untrained).sum(dim=-1)  # before probs is consumed
    # H = ln(sum e^z) - sum p z, both terms >= 0 and free of the logits' magnitude (T may be tiny)
    entropy_nats = (-top_prob.log() - probs.mul_(shifted).sum(dim=-1)).clamp_min(0.0)
    positions = torch.arange(start, stop, dtype=torch.float64, device=logits.device)
    visible = positions + 1.0 if not sliding else torch.clamp(positions + 1.0, max=float(sliding))
    if remapped is not None:
        visible = remapped.visible.to(torch.float64)
    normalized = torch.where(visible > 1, entropy_nats / visible.log().clamp_min(1e-300).to(logits.dtype), 0.0)
    untrained = untrained_mass(bins[0] if bins else None, sink, positions, edges, untrained_from)
    effective = untrained if effective is None else effective
    stats = torch.stack((entropy_nats, normalized, sink, recent, distant, first - second, untrained, effective),
                        dim=-1)
    return torch.cat([stats, *bins], dim=-1), last_row


def untrained_mass(bins: torch.Tensor | None, sink: torch.Tensor, positions: torch.Tensor,
                   edges: torch.Tensor | None, first_bin: int | None) -> torch.Tensor:
    """[..., rows] the mass of the bins from `first_bin` on (distances >= the trained length) less the sink, which
    lies among them once the query's position q reaches their first edge (key 0 is at distance q)."""
    if bins is None or first_bin is None or first_bin >= bins.shape[-1]:
        return torch.zeros_like(sink)
    reached = positions.to(sink.device) >= edges[first_bin]  # a tensor comparison: no wait for the device
    return (bins[..., first_bin:].sum(dim=-1) - torch.where(reached, sink, 0.0)).clamp_min(0.0)


def mass_in_distance_bins(probs: torch.Tensor, start: int, edges: torch.Tensor) -> torch.Tensor:
    """[..., rows, bins]: the weight of the keys at distance edges[j] <= q - k < edges[j + 1] from each query
    q = start + row, as differences of the running sum over keys."""
    rows, keys = probs.shape[-2], probs.shape[-1]
    running = torch.cat([torch.zeros_like(probs[..., :1]), probs.cumsum(dim=-1)], dim=-1)  # [..., rows, keys + 1]
    queries = torch.arange(start, start + rows, device=probs.device)[:, None]  # [rows, 1]
    edges = edges.to(probs.device, torch.int64)
    last = (queries - edges[None, :-1]).clamp(min=-1, max=keys - 1)  # newest key of each bin, [rows, bins]
    first = (queries - edges[None, 1:] + 1).clamp(min=0, max=keys)  # oldest key of each bin
    upper = running.gather(-1, (last + 1).expand(*probs.shape[:-2], rows, -1))
    lower = running.gather(-1, first.clamp(max=keys).expand(*probs.shape[:-2], rows, -1))
    return torch.where(last >= first, upper - lower, 0.0)


def statistics_from_probabilities(probabilities: torch.Tensor, window: int) -> dict[str, np.ndarray]:
    """Head statistics from full attention maps [..., n, n] (rows sum to 1, zeros above the diagonal).

    The logits are taken as ln p, which softmax maps back to p and whose top-2 gap equals the score gap / T;
    a key with p = 0 (masked, or underflowed) gets the most negative float. Means are over q_start <= q < n.
    """
    n = probabilities.shape[-1]
    q_start = first_stat_query(n, window)
    rows = probabilities[..., q_start:, :]
    logits = torch.where(rows > 0, rows.clamp_min(torch.finfo(rows.dtype).tiny).log(), torch.finfo(rows.dtype).min)
    stats, _ = row_statistics(logits, q_start, window)
    return summarize(stats.mean(dim=-2).numpy())
