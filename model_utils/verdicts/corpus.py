"""The context-length verdict of a corpus summary (model_utils/experiments/tune/summary.py): the same numbers and
sentences as one text's (verdicts/context.py), with the held-out choice made across documents (leave one document
out: choose on the others, score on it) and intervals from documents resampled. summarize_tune computes the numbers
from each document's NLL sums and stores them in the summary record's `verdict`."""

from __future__ import annotations

import numpy as np

from model_utils.core.bootstrap import BOOTSTRAP_RESAMPLES
from model_utils.core.records import check_format
from model_utils.core.records.tune import TuneSummary
from model_utils.verdicts.context import SEED, ContextVerdict, corpus_scope
from model_utils.verdicts.past import FORMAT, OLDER_FORMATS, DocumentFolds, PastData, ViewInfo, length_numbers


def document_weights(documents: int, seed: int = SEED, resamples: int = BOOTSTRAP_RESAMPLES) -> np.ndarray:
    """[1 + resamples, document] how often each document is drawn: once each first, then resamples with
    replacement."""
    draws = np.random.default_rng(seed).integers(0, documents, size=(resamples, documents))
    counts = np.stack([np.bincount(row, minlength=documents) for row in draws]) if resamples else \
        np.zeros((0, documents))
    return np.concatenate([np.ones((1, documents)), counts]).astype(np.float64)


def corpus_numbers(*, views: list[ViewInfo], sums: np.ndarray, counts: np.ndarray, buckets: list[list[int]],
                   trained_length: int, statistics: dict[str, np.ndarray], reported_best: list[dict],
                   seed: int = SEED) -> dict | None:
    """The verdict's numbers of a corpus: `sums` [document, view, bucket] NLL sums and `counts` [document, bucket]
    positions of the buckets in `buckets` (each reached by some document), `statistics` name -> [view, bucket]
    pooled over documents. None without a bucket past the trained length or one inside it."""
    pooled = counts.sum(axis=0)  # [bucket]
    # rows written before a statistic existed (untrained_mass) hold none of it: NaN, left out
    statistics = {name: values for name, values in statistics.items() if np.isfinite(values).all()}
    past = [i for i, (start, _) in enumerate(buckets) if start >= trained_length]
    resamples = DocumentFolds(sums=sums[:, :, past], counts=counts[:, past],
                              weights=document_weights(len(sums), seed))
    data = PastData(scope=corpus_scope(len(sums)), trained_length=trained_length, buckets=buckets,
                    weights=pooled.astype(np.float64), views=views, nll=sums.sum(axis=0) / pooled,
                    statistics=statistics, reported_best=reported_best, resamples=resamples)
    return length_numbers(data)


def corpus_verdict(summary: TuneSummary) -> ContextVerdict | None:
    """The verdict of a corpus summary (headline() and sentences() as for one text), from the numbers
    summarize_tune stored; None when it stored none (no bucket past the trained length, or none inside it)."""
    if summary.verdict is None:
        return None
    check_format(summary.verdict, "corpus verdict", FORMAT, OLDER_FORMATS)
    return ContextVerdict.from_dict(summary.verdict)
