"""What a retrieval run measures (experiments.retrieval.run runs it): the request, its points (a passage at a
distance under a view, planted or not) and each point's cache key, which names what it computes (the tokens, the
recipe and the logit multipliers it runs), so two views that run the same multipliers on a text share one point, and
a point read as a continuation of a shared prefix, which computes what the whole pass does, shares the whole pass's
key."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model_utils.core.retrieval import LEAD_TOKENS, Layout, planted_ids, reads_by_position, unplanted_ids
from model_utils.core.views import View
from model_utils.experiments.retrieval.passages import Tokens

FORMAT = 1  # of a cached pass: bump when a pass's numbers would come out different
REFERENCE = View(1.0)  # T = 1 on the model's own positions: what every other view is compared with


@dataclass(frozen=True, kw_only=True)
class RetrievalRequest:
    """What a run measures besides its texts: the distances (tokens from a copy's start to its repeat's), the views,
    the trained length they are judged against, whether a text may run past it, and the filler before the copy."""

    distances: tuple[int, ...]
    views: tuple[View, ...]
    trained_length: int
    beyond_trained: bool = False
    lead: int = LEAD_TOKENS
    recipes_past_trained: bool = False  # past the trained length only the recipes and T = 1 are measured

    def distances_for(self, view: View, passage_tokens: int) -> tuple[int, ...]:
        """The distances `view` is measured at: every one, or with recipes_past_trained for a view on the model's
        own positions other than T = 1, those whose text (lead, distance, passage) fits the trained length."""
        if not self.recipes_past_trained or view.rope is not None or view == REFERENCE:
            return self.distances
        return tuple(d for d in self.distances if self.lead + d + passage_tokens <= self.trained_length)


@dataclass(frozen=True, kw_only=True)
class Unit:
    """One point: a passage (its index) at a distance under a view, planted or not, with its cache key."""

    passage: int
    distance: int
    view: View
    planted: bool
    key: str
    n_tokens: int
    repeat: int  # where the repeat starts: the text before it is the prefix a continuation reads


def layout(passage: Sequence[int], distance: int, request: RetrievalRequest) -> Layout:
    return Layout(lead=request.lead, passage=len(passage), distance=distance)


def unit_ids(filler: Sequence[int], passage: Sequence[int], distance: int, planted: bool,
             request: RetrievalRequest) -> list[int]:
    place = layout(passage, distance, request)
    return (planted_ids if planted else unplanted_ids)(filler, passage, place)


def unit_key(fingerprint: str, ids: Sequence[int], view: View, place: Layout, request: RetrievalRequest) -> str:
    """What a pass computes: the model, its tokens, the recipe (its canonical JSON) and the multipliers it runs (in
    float32, as the pass applies them: SSMax at L and log-n with base L are then one pass), where the copy and the
    repeat are, and the trained length (the untrained distances and a remapping depend on it)."""
    multipliers = np.asarray(view.multipliers(len(ids)), dtype=np.float32).tobytes()  # as the pass applies them
    parts = [str(FORMAT), fingerprint, hashlib.sha256(np.asarray(ids, dtype=np.int64).tobytes()).hexdigest(),
             "" if view.rope is None else view.rope.canonical(), hashlib.sha256(multipliers).hexdigest(),
             repr((place.lead, place.passage, place.distance)), str(request.trained_length)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def unit(filler: Sequence[int], passages: Sequence[Sequence[int]], index: int, distance: int, view: View,
         planted: bool, request: RetrievalRequest, fingerprint: str) -> Unit:
    passage = passages[index]
    place = layout(passage, distance, request)
    ids = unit_ids(filler, passage, distance, planted, request)
    return Unit(passage=index, distance=distance, view=view, planted=planted,
                key=unit_key(fingerprint, ids, view, place, request), n_tokens=len(ids), repeat=place.repeat[0])


def units(filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest, fingerprint: str,
          distances: Sequence[int] | None = None, views: Sequence[View] | None = None) -> list[Unit]:
    """Every point of the grid (or of `distances` under `views`), shortest first."""
    texts = [passage.ids for passage in passages]
    longest = max(len(text) for text in texts)
    return [unit(filler.ids, texts, index, distance, view, planted, request, fingerprint)
            for distance in (request.distances if distances is None else distances)
            for index in range(len(passages)) for view in (request.views if views is None else views)
            if distances is not None or distance in request.distances_for(view, longest)
            for planted in (True, False)]


def separate_views(passages: Sequence[Tokens], request: RetrievalRequest) -> list[View]:
    """The views that must read every text whole: their numbers depend on the text's length
    (core.retrieval.reads_by_position over the run's lengths)."""
    lengths = sorted({layout(p.ids, d, request).n_tokens for p in passages for d in request.distances}
                     | {request.lead + d for d in request.distances})
    return [view for view in request.views if not reads_by_position(view, lengths)]
