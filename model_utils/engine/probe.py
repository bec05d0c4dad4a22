"""The `Probe`: one forward pass's logit multipliers, settings and the statistics it collects, passed to the
attention function as a keyword argument so that nothing about a call lives in shared state (one model serves
many threads with different temperatures at once)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from model_utils.core.report import LayerInputs
from model_utils.core.statistics import distance_bins, untrained_bin
from model_utils.engine.kernel import FusedKernel, load_kernel
from model_utils.engine.remap import Remap
from model_utils.engine.torch_path import DEFAULT_CHUNK_ELEMENTS

AUTO = "auto"  # Probe.kernel: the fused kernel where it can run, chosen at the pass's first layer


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
    kernel: AUTO (the fused kernel when the pass runs on the CPU and the kernel can be had; for a pass on any other
        device it is never built or loaded), a FusedKernel, or None for the torch path. `path` says which ran.
    remap: the pass's distance remapping (engine.remap), None for none; the fused kernel does not remap distances,
        so a pass with one takes the torch path.
    """

    view_multipliers: torch.Tensor
    window: int
    q_start: int
    edges: torch.Tensor | None = None  # None: distance_bins of the text's length and the trained length
    trained_length: int | None = None
    kernel: FusedKernel | str | None = AUTO
    propagate: bool = True
    layers: frozenset[int] | None = None
    keep_layers: frozenset[int] = frozenset()
    bucket_size: int | None = None
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS
    on_layer: Callable[[int], None] | None = None
    remap: Remap | None = None
    # filled in by the forward pass, keyed by layer index
    sums: dict[int, torch.Tensor] = field(default_factory=dict)  # [V, H, buckets, fields + bins] float64
    last_rows: dict[int, torch.Tensor] = field(default_factory=dict)  # [V, H, n] the last query's weights
    kept: dict[int, LayerInputs] = field(default_factory=dict)
    sliding: dict[int, int | None] = field(default_factory=dict)  # each layer's window, as the model passed it
    path: str | None = None  # "fused" when every layer ran the fused kernel, else "torch"

    def applies_to(self, layer: int) -> bool:
        return applies_to(self.layers, layer)

    def multipliers_for(self, layer: int) -> torch.Tensor:
        return multipliers_for(self.view_multipliers, self.layers, layer)

    def distance_edges(self, n_tokens: int) -> torch.Tensor:
        if self.edges is None:
            self.edges = torch.from_numpy(distance_bins(n_tokens, self.trained_length))
        return self.edges

    def layer_kernel(self, query: torch.Tensor) -> FusedKernel | None:
        """The fused kernel for a layer whose queries are `query`, or None for the torch path (recorded in `path`).
        The kernel is CPU code: for queries on any other device it is neither built nor loaded; nor for a distance
        remapping, which it does not compute."""
        if query.device.type != "cpu" or self.remap is not None:
            kernel = None
        else:
            if self.kernel == AUTO:
                self.kernel = load_kernel()
            kernel = self.kernel
        self.path = "fused" if kernel is not None and self.path in (None, "fused") else "torch"
        return kernel

    def move_to_host(self) -> None:
        """Copy what the pass collected on its device (every layer's sums, and last rows) to the host: one copy
        each per pass, after the pass. On the CPU nothing moves."""
        for collected in (self.sums, self.last_rows):
            layers = sorted(collected)
            if layers and collected[layers[0]].device.type != "cpu":
                on_host = torch.stack([collected[layer] for layer in layers]).cpu()
                collected.update(zip(layers, on_host.unbind(0), strict=True))

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

