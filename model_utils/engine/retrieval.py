"""The retrieval probe's passes (core.retrieval lays out their tokens): the model reads a planted or unplanted text
under one view, and a pass leaves the loss on the repeat and where the repeat's queries put their attention in every
layer (on the copy's keys, on the sink). `retrieval_pass` reads the whole text and rebuilds the weights from the kept
queries and keys by the engine's own logits function (engine.maps.query_rows), so no n x n map is ever held;
`read_once` reads a text up to the longest distance once and `repeat_pass` reads each distance's repeat as its
continuation (engine.continuation), the weights coming from the same logits function, chunk by chunk."""

from __future__ import annotations

import time

import numpy as np
import torch

from model_utils.core.machine import peak_rss_gb
from model_utils.core.records.retrieval import RetrievalPass
from model_utils.core.retrieval import Layout
from model_utils.core.views import View
from model_utils.engine.analyze import AnalysisRequest, analyze_tokens, check_length, position_nll, validate
from model_utils.engine.continuation import continue_prefix, read_prefix
from model_utils.engine.maps import query_rows
from model_utils.engine.step import Prefix
from model_utils.models import LoadedModel


def retrieval_request(view: View, layout: Layout, trained_length: int, beyond_trained: bool) -> AnalysisRequest:
    """The analysis of one probe: one view in every layer, every layer's queries and keys kept for the masses, the
    loss on the repeat only (Gemma's output layer over 262,144 words would take most of a pass over all tokens)."""
    return AnalysisRequest(temperatures=[view], mode="in-model", keep_maps="all", max_tokens=layout.n_tokens,
                           q_start=1, trained_length=trained_length, beyond_trained=beyond_trained,
                           loss_span=layout.scored)


def retrieval_pass(loaded: LoadedModel, ids: list[int], view: View, layout: Layout, trained_length: int,
                   beyond_trained: bool) -> RetrievalPass:
    """The probe's numbers from one pass over `ids` (planted_ids or unplanted_ids of `layout`)."""
    started = time.perf_counter()
    report = analyze_tokens(loaded, ids, retrieval_request(view, layout, trained_length, beyond_trained))
    first, stop = layout.scored
    token_nll = report.results[0].position_nll[first:stop]
    masses = np.stack([_mass_sums(query_rows(report, layer, 0, (first, stop))[None], layout, 0) / (stop - first)
                       for layer in range(loaded.n_layers)])  # [layer, 3, H]
    return _record(len(ids), token_nll, masses, time.perf_counter() - started, report.kernel, None)


def read_once(loaded: LoadedModel, ids: list[int], view: View, longest: Layout, trained_length: int,
              beyond_trained: bool) -> Prefix:
    """One pass of `view` over `ids`, the text before the repeat of the longest layout it serves (`longest`),
    keeping every layer's keys and values for repeat_pass; checked as retrieval_pass checks its text."""
    checked = validate(loaded, retrieval_request(view, longest, trained_length, beyond_trained))
    check_length(loaded, longest.n_tokens, checked)
    return read_prefix(loaded, ids, view, checked.trained_length)


def repeat_pass(loaded: LoadedModel, prefix: Prefix, passage: list[int], layout: Layout,
                prefix_seconds: float = 0.0) -> RetrievalPass:
    """The probe's numbers for `layout`, its repeat (`passage`) read as the continuation of the prefix's first
    layout.repeat[0] tokens: what retrieval_pass gives for the whole text. Its seconds: the continuation's and
    `prefix_seconds`, its share of the prefix's pass."""
    started = time.perf_counter()
    start = layout.repeat[0]
    first, stop = layout.scored
    sums = _MassSums(layout, loaded.n_layers)
    hidden = continue_prefix(loaded, prefix, start, passage, sums.add)
    nll, _, _ = position_nll(loaded, hidden, torch.tensor(passage, device=loaded.device), (0, stop - first))
    seconds = time.perf_counter() - started + prefix_seconds
    return _record(layout.n_tokens, nll[0, : stop - first].numpy(), sums.means(), seconds, "torch",
                   prefix.n_tokens)


class _MassSums:
    """The scored queries' masses [layer, 3, H] summed over the chunks of a continuation's weights, as on_rows
    hands them (engine.step)."""

    def __init__(self, layout: Layout, n_layers: int):
        self.layout, self.sums, self.rows = layout, {}, 0
        self.n_layers = n_layers

    def add(self, layer: int, first: int, weights: torch.Tensor) -> None:
        begin, end = self.layout.scored
        kept = weights[:, :, : max(0, end - first)]  # [1, H, rows, keys]: the scored rows of the chunk
        if kept.shape[2]:
            self.sums[layer] = self.sums.get(layer, 0.0) + _mass_sums(kept, self.layout, first - begin)

    def means(self) -> np.ndarray:
        begin, end = self.layout.scored
        return np.stack([self.sums[layer] for layer in range(self.n_layers)]) / (end - begin)


def _mass_sums(weights: torch.Tensor, layout: Layout, row: int) -> np.ndarray:
    """[3, H] from scored queries' weights [1, H, queries, keys] (the first being scored query number `row`), each
    summed over the queries: the mass on the copy's keys, on the one key an induction copy reads (the copy of the
    token each query is to predict, `distance` - 1 back), and on the first token."""
    start, stop = layout.copy
    probs = weights[0]
    rows = probs.shape[1]
    copy = probs[..., start:stop].double().sum(dim=(-1, -2))
    target = probs[:, np.arange(rows), start + 1 + row + np.arange(rows)].double().sum(dim=-1)
    sink = probs[..., 0].double().sum(dim=-1)
    return np.stack([part.cpu().numpy() for part in (copy, target, sink)])


def _record(n_tokens: int, token_nll: np.ndarray, masses: np.ndarray, seconds: float, kernel: str,
            prefix_tokens: int | None) -> RetrievalPass:
    copy, target, sink = masses[:, 0], masses[:, 1], masses[:, 2]  # [layer, H] each
    return RetrievalPass(n_tokens=n_tokens, loss=float(token_nll.mean()), token_nll=token_nll,
                         copy_mass=copy.mean(axis=1), copy_mass_top=copy.max(axis=1),
                         target_mass=target.mean(axis=1), target_mass_top=target.max(axis=1),
                         sink_mass=sink.mean(axis=1), seconds=round(seconds, 2), kernel=kernel,
                         peak_rss_gb=peak_rss_gb(), prefix_tokens=prefix_tokens)
