"""One pass of the retrieval probe (core.retrieval lays out its tokens): the model reads a planted or unplanted
text under one view, and the pass leaves the loss on the repeat and where the repeat's queries put their attention
in every layer (on the copy's keys, on the sink), rebuilt from the kept queries and keys by the engine's own logits
function (engine.maps.query_rows), so no n x n map is ever held."""

from __future__ import annotations

import time

import numpy as np

from model_utils.core.machine import peak_rss_gb
from model_utils.core.records.retrieval import RetrievalPass
from model_utils.core.retrieval import Layout
from model_utils.core.views import View
from model_utils.engine.analyze import AnalysisRequest, analyze_tokens
from model_utils.engine.maps import query_rows
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
    masses = np.stack([_masses(query_rows(report, layer, 0, (first, stop)), layout)
                       for layer in range(loaded.n_layers)])  # [layer, 3, H]
    copy, target, sink = masses[:, 0], masses[:, 1], masses[:, 2]
    return RetrievalPass(n_tokens=len(ids), loss=float(token_nll.mean()), token_nll=token_nll,
                         copy_mass=copy.mean(axis=1), copy_mass_top=copy.max(axis=1),
                         target_mass=target.mean(axis=1), target_mass_top=target.max(axis=1),
                         sink_mass=sink.mean(axis=1), seconds=round(time.perf_counter() - started, 2),
                         kernel=report.kernel, peak_rss_gb=peak_rss_gb())


def _masses(probs, layout: Layout) -> np.ndarray:
    """[3, H] from the scored queries' weights [H, queries, keys], each averaged over the queries: the mass on the
    copy's keys, on the one key an induction copy reads (the copy of the token each query is to predict, `distance`
    - 1 back), and on the first token."""
    start, stop = layout.copy
    rows = probs.shape[1]
    copy = probs[..., start:stop].sum(dim=-1).mean(dim=-1)
    target = probs[:, np.arange(rows), start + 1 + np.arange(rows)].mean(dim=-1)
    sink = probs[..., 0].mean(dim=-1)
    return np.stack([part.double().numpy() for part in (copy, target, sink)])
