"""The untrained-distance mass by layer type. Where a model mixes sliding-window layers with full-attention (global)
ones (Gemma 3 270M: 15 layers of 512 keys, 3 global), a sliding layer whose span is no longer than the trained
length never sees a key that far back, so the mass averaged over every layer hides where it really is: the verdict
gives it per type, for T = 1 and for each row of the decomposition, with its share of the type's non-sink mass
against what uniform attention over the keys that type sees would give (verdicts.past.uniform_share). `LayerGroup`
is what the verdict computes from (a sweep's [bucket, layer, head] statistics, or a corpus's per-layer rows),
core.records.verdict.LayerTypeMass what it stores."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from model_utils.core.records.verdict import LayerTypeMass

# A share of the non-sink mass on untrained distances counts as above uniform attention's only at this many times it
# or more: a share within a tenth of uniform's (0.307 against 0.304) is a tie, not "more than their number". The
# verdict stores where the share first passes uniform's at all (beyond_uniform_from); the words judge by this margin,
# on the shares it stores per bucket, so a verdict written before reads by the same rule.
ABOVE_UNIFORM = 1.1


def first_above_uniform(shares: Sequence[float], uniform: Sequence[float]) -> int | None:
    """The index of the first past bucket whose share of the non-sink mass on untrained distances is at least
    ABOVE_UNIFORM times what uniform attention over the visible keys would give there (and above 0); None where no
    bucket's is: where the words say that the far keys draw more than their number."""
    return next((i for i, (own, even) in enumerate(zip(shares, uniform, strict=True))
                 if own > 0 and own >= ABOVE_UNIFORM * even), None)


@dataclass(frozen=True, kw_only=True)
class LayerGroup:
    """The layers of one attention type and their untrained-distance mass, mean over its layers and heads."""

    sliding_span: int | None  # the keys a query sees in these layers; None: full attention
    layers: tuple[int, ...]
    untrained_mass: np.ndarray  # [view, bucket]
    sink_mass: np.ndarray | None = None  # [view, bucket]; None where it was not measured per layer


def layer_groups(spans: Sequence[int | None] | None, untrained: Sequence[np.ndarray],
                 sink: Sequence[np.ndarray] | None = None) -> tuple[LayerGroup, ...]:
    """The layer types of a model with more than one (`spans`: per layer, its sliding span or None), each with its
    mass from `untrained` and `sink` (per view, [bucket, layer, head], or [bucket, layer] already averaged over
    heads); none for a model of one type or unknown spans."""
    if spans is None or len(set(spans)) < 2:
        return ()
    by_span: dict[int | None, list[int]] = {}
    for layer, span in enumerate(spans):
        by_span.setdefault(span, []).append(layer)

    def mean(values: Sequence[np.ndarray], layers: list[int]) -> np.ndarray:
        return np.array([np.asarray(per_view)[:, layers].reshape(len(per_view), -1).mean(axis=1)
                         for per_view in values])  # [view, bucket]

    return tuple(LayerGroup(sliding_span=span, layers=tuple(layers), untrained_mass=mean(untrained, layers),
                            sink_mass=None if sink is None else mean(sink, layers))
                 for span, layers in by_span.items())


def layer_type_masses(groups: Sequence[LayerGroup], reference: int, past: list[int], weights: np.ndarray,
                      starts: Sequence[int],
                      uniform: Callable[[int | None], list[float]]) -> tuple[LayerTypeMass, ...] | None:
    """Each group's mass at the view `reference` over the `past` buckets (`weights`: [bucket] positions; `starts`:
    each past bucket's first position), and where its sink mass was measured, its share of the non-sink mass per
    past bucket against `uniform(sliding_span)` (per past bucket, what uniform attention over the keys such a layer
    sees would give) and the first bucket start where it is above at all (the words say so only by a margin:
    first_above_uniform); None without groups."""
    if not groups:
        return None
    found = []
    for group in groups:
        mass = tuple(float(group.untrained_mass[reference, i]) for i in past)
        share = uniform_at = beyond = None
        if group.sink_mass is not None:
            share = tuple(m / max(1e-12, 1 - float(group.sink_mass[reference, i])) for m, i in zip(mass, past,
                                                                                                     strict=True))
            uniform_at = tuple(uniform(group.sliding_span))
            beyond = next((column for column, (own, even) in enumerate(zip(share, uniform_at, strict=True))
                           if own > even), None)
        found.append(LayerTypeMass(sliding_span=group.sliding_span, layers=group.layers, untrained_mass=mass,
                                   untrained_mass_past=chosen_mass(group, [reference] * len(past), past, weights),
                                   share=share, uniform_share=uniform_at,
                                   beyond_uniform_from=None if beyond is None else int(starts[beyond])))
    return tuple(found)


def chosen_mass(group: LayerGroup, chosen: list[int], past: list[int], weights: np.ndarray) -> float:
    """The group's mass over the past buckets, each bucket's from the view chosen there."""
    return float(np.average([group.untrained_mass[v, i] for v, i in zip(chosen, past, strict=True)],
                            weights=weights[past]))
