"""The untrained-distance mass by layer type. Where a model mixes sliding-window layers with full-attention (global)
ones (Gemma 3 270M: 15 layers of 512 keys, 3 global), a sliding layer whose window is no longer than the trained
length never sees a key that far back, so the mass averaged over every layer hides where it really is: the verdict
gives it per type, for T = 1 and for each row of the decomposition. `LayerGroup` is what the verdict computes from
(a sweep's [bucket, layer, head] statistics), `LayerTypeMass` what it stores in the JSON verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model_utils.core.records.base import Record, read

KIND = "context verdict"


@dataclass(frozen=True, kw_only=True)
class LayerGroup:
    """The layers of one attention type and their untrained-distance mass, mean over its layers and heads."""

    window: int | None  # the keys a query sees in these layers; None: full attention
    layers: list[int]
    untrained_mass: np.ndarray  # [view, bucket]


def layer_groups(windows: Sequence[int | None] | None, untrained: Sequence[np.ndarray]) -> list[LayerGroup]:
    """The layer types of a model with more than one (`windows`: per layer, its sliding window or None), each with
    its mass from `untrained` (per view, [bucket, layer, head]); none for a model of one type or unknown windows."""
    if windows is None or len(set(windows)) < 2:
        return []
    by_window: dict[int | None, list[int]] = {}
    for layer, window in enumerate(windows):
        by_window.setdefault(window, []).append(layer)
    return [LayerGroup(window=window, layers=layers,
                       untrained_mass=np.array([values[:, layers].mean(axis=(1, 2)) for values in untrained]))
            for window, layers in by_window.items()]


@dataclass(frozen=True, kw_only=True)
class LayerTypeMass(Record):
    """One layer type in the verdict: its window (None: full attention), its layers, and the untrained-distance mass
    at T = 1 on the model's own positions (sink excluded, as the kernel measures it), per past bucket and over the
    past region (weighted by positions)."""

    window: int | None
    layers: tuple[int, ...]
    untrained_mass: tuple[float, ...]  # [past bucket]
    untrained_mass_past: float

    @property
    def name(self) -> str:
        """'sliding-window layers of 512 keys' or 'global (full-attention) layers'."""
        return "global (full-attention) layers" if self.window is None else \
            f"sliding-window layers of {self.window:,} keys"

    @property
    def short(self) -> str:
        """The name in a table cell: 'sliding 512' or 'global'."""
        return "global" if self.window is None else f"sliding {self.window:,}"

    @classmethod
    def from_dict(cls, data: dict) -> LayerTypeMass:
        return read(cls, data, KIND, layers=tuple, untrained_mass=tuple)


def layer_type_masses(groups: list[LayerGroup], reference: int, past: list[int],
                      weights: np.ndarray) -> list[dict] | None:
    """LayerTypeMass.to_dict() of each group at the view `reference` over the `past` buckets (`weights`: [bucket]
    positions); None without groups."""
    if not groups:
        return None
    return [LayerTypeMass(window=group.window, layers=tuple(group.layers),
                          untrained_mass=tuple(float(group.untrained_mass[reference, i]) for i in past),
                          untrained_mass_past=chosen_mass(group, [reference] * len(past), past, weights)).to_dict()
            for group in groups]


def chosen_mass(group: LayerGroup, chosen: list[int], past: list[int], weights: np.ndarray) -> float:
    """The group's mass over the past buckets, each bucket's from the view chosen there."""
    return float(np.average([group.untrained_mass[v, i] for v, i in zip(chosen, past, strict=True)],
                            weights=weights[past]))
