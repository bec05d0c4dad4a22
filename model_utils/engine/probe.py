"""The `Probe`: one forward pass's logit multipliers, settings and the statistics it collects, passed to the
attention function as a keyword argument so that nothing about a call lives in shared state (one model serves
many threads with different temperatures at once)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from model_utils.core.statistics import ROW_FIELDS, distance_bins, untrained_bin
from model_utils.engine.kernel import FusedKernel, load_kernel

if TYPE_CHECKING:  # the probe fills them in; the report carries them
    from model_utils.engine.report import LayerInputs

# Elements in one chunk of logits [view, head, query, key] on the torch path: 4M floats = 16 MB per temporary.
DEFAULT_CHUNK_ELEMENTS = 1 << 22


@dataclass(kw_only=True)
class Probe:
    """One forward pass's temperatures and the statistics it collects (shapes: V views, B batch rows, n tokens).

    view_multipliers: [V, n] logit multiplier (1 / T, or a schedule) per view and query position.
    propagate: True for in-model mode: batch row v runs at view v's multiplier (needs B == V). False for isolated
        mode: the batch is one row run at T = 1, and each view re-softmaxes that row's scores at its multiplier.
    layers: where the multipliers apply; elsewhere every view uses m = 1.
    q_start, bucket_size: statistics for queries q_start..n-1, summed per query-position bucket (bucket_size
        wide, boundaries at its multiples; None: one bucket).
    edges: key-distance bin edges (statistics.distance_bins) whose masses are measured for every row.
    trained_length: the model's trained context L: an edge of the bins, from which on the untrained mass is measured
        (None: no untrained mass).
    kernel: the fused kernel (by default, when it can be built), or None for the torch path.
    """

    view_multipliers: torch.Tensor
    window: int
    q_start: int
    edges: torch.Tensor | None = None  # None: distance_bins of the text's length and the trained length
    trained_length: int | None = None
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
            self.edges = torch.from_numpy(distance_bins(n_tokens, self.trained_length))
        return self.edges

    @property
    def untrained_from(self) -> int:
        """The first distance bin of the untrained distances (the number of bins: none)."""
        return untrained_bin(self.edges.numpy(), self.trained_length)


def applies_to(layers, layer: int) -> bool:
    """Whether the temperature applies in `layer`, given the chosen `layers` (None: all)."""
    return layers is None or layer in layers


def multipliers_for(view_multipliers: torch.Tensor, layers, layer: int) -> torch.Tensor:
    """[V, n] multipliers of `layer`: the views' own where the temperature applies, else ones."""
    return view_multipliers if applies_to(layers, layer) else torch.ones_like(view_multipliers)

