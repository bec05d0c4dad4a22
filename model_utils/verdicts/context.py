"""The context-length verdict of one text: from a sweep's results and each pass's per-position NLL (which the sweep
document leaves out), the numbers of verdicts/past.py with the held-out choice cross-fit on alternate blocks of
positions, computed once when the sweep is written and stored as the document's `verdict` (a ContextVerdict
record): a page, the README and FINDINGS read it and never judge again. verdicts/words/ words it. Also
`entropy_with_length(document)`, the entropy trend at T = 1 of any sweep document, for the published entropy
argument next to what the sweep measured."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from model_utils.core.bootstrap import BOOTSTRAP_BLOCK, fold_sums
from model_utils.core.records.sweep import BestEntry, SweepDocument, SweepResult
from model_utils.core.records.verdict import Bucket, ContextVerdict, EntropyTrend, RowKind, SameTokenRise
from model_utils.core.views import View, reference_index
from model_utils.verdicts.layers import layer_groups
from model_utils.verdicts.past import (
    PastData,
    PositionFolds,
    ViewInfo,
    entropy_trend,
    inside_saving,
    length_verdict,
)
from model_utils.verdicts.rise import with_same_token_rise

SEED = 0  # of the verdict's resamples: the same sweep always gives the same verdict
STATISTICS = ("entropy", "normalized_entropy", "sink_mass", "untrained_mass")  # what the verdict reads


def _scored(results: Sequence[SweepResult]) -> list[int]:
    """The buckets with a loss at T = 1 (the last token alone predicts nothing)."""
    return [i for i, nll in enumerate(results[reference_index(results)].nll) if nll is not None]


def entropy_with_length(document: SweepDocument) -> EntropyTrend | None:
    """The entropy trend at T = 1 of a sweep document, to show next to the published argument that entropy grows
    like ln n; None with fewer than two buckets inside the trained context."""
    reference = document.reference()
    scored = _scored(document.results)
    entropy, normalized = (np.asarray(_bucket_statistic(reference, name))[scored]
                           for name in ("entropy", "normalized_entropy"))
    return entropy_trend(None, tuple(document.buckets[i] for i in scored), document.trained_length, entropy,
                         normalized)


def _bucket_statistic(result: SweepResult, name: str) -> np.ndarray:
    """[bucket] a statistic's mean over layers and heads."""
    return result.heads[name].mean(axis=(1, 2))


def sweep_verdict(*, results: Sequence[SweepResult], buckets: Sequence[Bucket], n_tokens: int, trained_length: int,
                  best: Sequence[BestEntry], layer_spans: Sequence[int | None] | None,
                  position_nll: Mapping[View, Sequence[float]], seed: int = SEED,
                  same_token_rise: SameTokenRise | None = None) -> ContextVerdict | None:
    """The verdict of one text's sweep: its results (one per pass), buckets, best temperature per bucket and each
    layer's sliding span, with each pass's per-position NLL (view -> [n - 1]) for the held-out gains and their
    intervals, and the rise on the same tokens where the cut context was measured (verdicts/rise.py). None when the
    text does not reach past the trained length with a bucket that has a loss, or no bucket lies wholly before it."""
    scored = _scored(results)
    chosen = tuple(tuple(buckets[i]) for i in scored)
    weights = np.array([max(0, min(stop, n_tokens - 1) - start) for start, stop in chosen], dtype=np.float64)
    nll = np.array([[result.nll[i] for i in scored] for result in results], dtype=np.float64)
    names = [name for name in STATISTICS if all(name in result.heads for result in results)]
    statistics = {name: np.array([_bucket_statistic(result, name)[scored] for result in results]) for name in names}
    if "untrained_mass" in statistics:  # NaN where a pass predates it (it remapped nothing: past.effective_untrained)
        statistics["effective_untrained_mass"] = np.array([
            _bucket_statistic(result, "effective_untrained_mass")[scored] if "effective_untrained_mass" in result.heads
            else np.full(len(scored), np.nan) for result in results])
    past = [i for i, (start, _) in enumerate(chosen) if start >= trained_length]
    with_sink = all("sink_mass" in result.heads for result in results)
    layer_types = layer_groups(layer_spans, [result.heads["untrained_mass"][scored] for result in results],
                               [result.heads["sink_mass"][scored] for result in results] if with_sink else None) \
        if all("untrained_mass" in result.heads for result in results) else ()
    data = PastData(documents=None, trained_length=trained_length, buckets=chosen, weights=weights,
                    views=tuple(_view_info(result) for result in results), nll=nll, statistics=statistics,
                    reported_best={entry.bucket[0]: entry.temperature_interval for entry in best},
                    resamples=position_folds(position_nll, [result.view for result in results],
                                             [chosen[i] for i in past], n_tokens, seed), layer_types=layer_types,
                    layer_spans=None if layer_spans is None else tuple(layer_spans))
    verdict = length_verdict(data)
    return verdict if verdict is None or same_token_rise is None else with_same_token_rise(verdict, same_token_rise)


def position_folds(position_nll: Mapping[View, Sequence[float]], views: list[View], buckets: list[Bucket],
                   n_tokens: int, seed: int = SEED) -> PositionFolds:
    """Each bucket's positions in alternating blocks (core.bootstrap.fold_sums), every view on the same blocks."""
    rng = np.random.default_rng(seed)
    losses = np.array([np.asarray(position_nll[view], dtype=np.float64) for view in views])  # [view, n - 1]
    folds = [fold_sums(losses[:, start : min(stop, n_tokens - 1)], rng) for start, stop in buckets]
    if not folds:  # a text within the trained length: nothing to resample
        return PositionFolds(sums=np.zeros((1, 0, 2, len(views))), counts=np.zeros((0, 2)), block=BOOTSTRAP_BLOCK)
    return PositionFolds(sums=np.stack([sums for sums, _ in folds], axis=1),
                         counts=np.array([counts for _, counts in folds]), block=BOOTSTRAP_BLOCK)


def _view_info(result: SweepResult) -> ViewInfo:
    return ViewInfo(view=result.view, multipliers=result.multipliers)


def with_schedule_costs(verdict: ContextVerdict, results: Sequence[SweepResult], buckets: Sequence[Bucket],
                        n_tokens: int) -> ContextVerdict:
    """A verdict stored before the schedules' savings inside the trained context were measured, with them, from
    its sweep's bucket means (past.inside_saving, as sweep_verdict computes them)."""
    scored = _scored(results)
    inside = [i for i in scored if buckets[i][1] <= verdict.trained_length]
    weights = np.array([max(0, min(stop, n_tokens - 1) - start) for start, stop in (buckets[i] for i in inside)],
                       dtype=np.float64)
    by_view = {result.view: result for result in results}
    reference = results[reference_index(results)]

    def costed(row):
        if row.kind is not RowKind.SCHEDULE or row.saved_inside is not None or not inside:
            return row
        view = by_view[row.view]
        return replace(row, saved_inside=inside_saving([reference.nll[i] for i in inside],
                                                       [view.nll[i] for i in inside], weights))

    rows = tuple(costed(row) for row in verdict.decomposition.rows)
    return replace(verdict, decomposition=replace(verdict.decomposition, rows=rows))
