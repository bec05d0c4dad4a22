"""The untrained-distance mass by layer type. Where a model mixes sliding-window layers with full-attention (global)
ones (Gemma 3 270M: 15 layers of 512 keys, 3 global), a sliding layer whose span is no longer than the trained
length never sees a key that far back, so the mass averaged over every layer hides where it really is: the verdict
gives it per type, for T = 1 and for each row of the decomposition. `LayerGroup` is what the verdict computes from
(a sweep's [bucket, layer, head] statistics), core.records.verdict.LayerTypeMass what it stores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model_utils.core.records.verdict import LayerTypeMass


@dataclass(frozen=True, kw_only=True)
class LayerGroup:
    """The layers of one attention type and their untrained-distance mass, mean over its layers and heads."""

    sliding_span: int | None  # the keys a query sees in these layers; None: full attention
    layers: tuple[int, ...]
    untrained_mass: np.ndarray  # [view, bucket]


def layer_groups(spans: Sequence[int | None] | None, untrained: Sequence[np.ndarray]) -> tuple[LayerGroup, ...]:
    """The layer types of a model with more than one (`spans`: per layer, its sliding span or None), each with its
    mass from `untrained` (per view, [bucket, layer, head]); none for a model of one type or unknown spans."""
    if spans is None or len(set(spans)) < 2:
        return ()
    by_span: dict[int | None, list[int]] = {}
    for layer, span in enumerate(spans):
        by_span.setdefault(span, []).append(layer)
    return tuple(LayerGroup(sliding_span=span, layers=tuple(layers),
                            untrained_mass=np.array([values[:, layers].mean(axis=(1, 2)) for values in untrained]))
                 for span, layers in by_span.items())


def layer_type_masses(groups: Sequence[LayerGroup], reference: int, past: list[int],
                      weights: np.ndarray) -> tuple[LayerTypeMass, ...] | None:
    """Each group's mass at the view `reference` over the `past` buckets (`weights`: [bucket] positions); None
    without groups."""
    if not groups:
        return None
    return tuple(LayerTypeMass(sliding_span=group.sliding_span, layers=group.layers,
                               untrained_mass=tuple(float(group.untrained_mass[reference, i]) for i in past),
                               untrained_mass_past=chosen_mass(group, [reference] * len(past), past, weights))
                 for group in groups)


def chosen_mass(group: LayerGroup, chosen: list[int], past: list[int], weights: np.ndarray) -> float:
    """The group's mass over the past buckets, each bucket's from the view chosen there."""
    return float(np.average([group.untrained_mass[v, i] for v, i in zip(chosen, past, strict=True)],
                            weights=weights[past]))
