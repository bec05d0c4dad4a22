"""The context-length verdict of a corpus (model_utils/experiments/tune/summary.py): the same numbers as one text's
(verdicts/past.py), with the held-out choice made across documents (leave one document out: choose on the others,
score on it) and intervals from documents resampled. summarize_tune computes it from each document's NLL sums and
stores it as the summary record's `verdict`. Also the corpus's best published schedule per bucket (`best_schedule`),
for the words' terminal table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from model_utils.core.bootstrap import BOOTSTRAP_RESAMPLES, MIN_FOR_INTERVAL
from model_utils.core.records.spread import Spread
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import Bucket, ContextVerdict, Interval, SameTokenRise
from model_utils.verdicts.context import SEED
from model_utils.verdicts.layers import LayerGroup
from model_utils.verdicts.past import DocumentFolds, PastData, ViewInfo, length_verdict
from model_utils.verdicts.rise import with_same_token_rise


def document_weights(documents: int, seed: int = SEED, resamples: int = BOOTSTRAP_RESAMPLES) -> np.ndarray:
    """[1 + resamples, document] how often each document is drawn: once each first, then resamples with
    replacement; below MIN_FOR_INTERVAL documents, [1 + documents, document]: all, then each one alone."""
    if documents < MIN_FOR_INTERVAL:
        return np.concatenate([np.ones((1, documents)), np.eye(documents)])
    draws = np.random.default_rng(seed).integers(0, documents, size=(resamples, documents))
    counts = np.stack([np.bincount(row, minlength=documents) for row in draws]) if resamples else \
        np.zeros((0, documents))
    return np.concatenate([np.ones((1, documents)), counts]).astype(np.float64)


def corpus_verdict(*, views: Sequence[ViewInfo], sums: np.ndarray, counts: np.ndarray, buckets: Sequence[Bucket],
                   trained_length: int, statistics: Mapping[str, np.ndarray], reported_best: Mapping[int, Interval],
                   seed: int = SEED, same_token_rise: SameTokenRise | None = None,
                   layer_types: tuple[LayerGroup, ...] = (),
                   layer_spans: tuple[int | None, ...] | None = None) -> ContextVerdict | None:
    """The verdict of a corpus: `sums` [document, view, bucket] NLL sums and `counts` [document, bucket] positions
    of the buckets in `buckets` (each reached by some document), `statistics` name -> [view, bucket] pooled over
    documents, `reported_best` bucket start -> the interval of its best temperature, `layer_types` the masses per
    layer type pooled the same way (where the model has several) and `layer_spans` each layer's sliding span (None
    for a global layer). None without a bucket past the trained length or one inside it."""
    pooled = counts.sum(axis=0)  # [bucket]
    # rows written before a statistic existed (untrained_mass) hold none of it: NaN, left out
    statistics = {name: values for name, values in statistics.items() if np.isfinite(values).all()}
    past = [i for i, (start, _) in enumerate(buckets) if start >= trained_length]
    resamples = DocumentFolds(sums=sums[:, :, past], counts=counts[:, past],
                              weights=document_weights(len(sums), seed),
                              spread=Spread.RANGE if len(sums) < MIN_FOR_INTERVAL else Spread.INTERVAL_95)
    data = PastData(documents=len(sums), trained_length=trained_length, buckets=tuple(map(tuple, buckets)),
                    weights=pooled.astype(np.float64), views=tuple(views), nll=sums.sum(axis=0) / pooled,
                    statistics=statistics, reported_best=reported_best, resamples=resamples,
                    layer_types=layer_types, layer_spans=layer_spans)
    verdict = length_verdict(data)
    return verdict if verdict is None or same_token_rise is None else with_same_token_rise(verdict, same_token_rise)


def best_schedule(summary: TuneSummary, bucket: int) -> tuple[str, float] | None:
    """The published schedule that saves the most in the summary's bucket of index `bucket`: (its label, what it
    saves), the first on a tie; None without schedules."""
    savings = [(entry.label, entry.buckets[bucket].saved) for entry in summary.schedules]
    return max(savings, key=lambda pair: pair[1], default=None)
