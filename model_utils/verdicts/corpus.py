"""The context-length verdict of a corpus summary (model_utils/experiments/tune/summary.py): the same numbers and
sentences as one text's (verdicts/context.py), with the held-out choice made across documents (leave one document
out: choose on the others, score on it) and intervals from documents resampled. summarize_tune computes the numbers
from each document's NLL sums and stores them under the summary's "verdict" key."""

from __future__ import annotations

import re

import numpy as np

from model_utils.core.bootstrap import BOOTSTRAP_RESAMPLES
from model_utils.core.rope import Rope
from model_utils.verdicts.context import SEED, ContextVerdict, corpus_scope, document_scope
from model_utils.verdicts.past import FORMAT, DocumentFolds, PastData, ViewInfo, length_numbers


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


def corpus_verdict(summary: dict) -> ContextVerdict | None:
    """The verdict of a corpus summary (headline() and sentences() as for one text): the numbers summarize_tune
    stored, or, for a summary without them, what its pooled NLL alone gives (no held-out gain, no intervals)."""
    stored = summary.get("verdict", {})
    if stored is None:
        return None
    if stored.get("format") == FORMAT:
        return ContextVerdict.from_dict(stored)
    trained = summary.get("trained_length")
    results = [result for result in summary["results"] if _rope(result) is not False]
    if trained is None or not any(r["temperature"] == 1.0 and r.get("rope") is None for r in results):
        return None
    weights = np.array([entry["positions"] for entry in summary["best"]], dtype=np.float64)
    nll = np.array([result["nll"] for result in results], dtype=np.float64)
    past = [i for i, (start, _) in enumerate(summary["buckets"]) if start >= trained]
    names = [name for name in ("entropy", "normalized_entropy", "sink_mass", "untrained_mass")
             if all(name in result.get("statistics", {}) for result in results)]
    data = PastData(scope=document_scope(summary), trained_length=trained, buckets=summary["buckets"],
                    weights=weights, views=[_view_info(result) for result in results], nll=nll,
                    statistics={name: np.array([r["statistics"][name] for r in results]) for name in names},
                    reported_best=summary["best"],
                    resamples=DocumentFolds(sums=(nll * weights)[None][:, :, past], counts=weights[past][None],
                                            weights=np.ones((1, 1)), bootstrap="none",
                                            missing="this summary carries no per-document verdict (rerun the "
                                                    "tune)"))
    numbers = length_numbers(data)
    return None if numbers is None else ContextVerdict.from_dict(numbers)


def _view_info(result: dict) -> ViewInfo:
    return ViewInfo(label=result["label"], temperature=result["temperature"], schedule=result["schedule"],
                    rope=_rope(result) or None)


def _rope(result: dict) -> Rope | bool | None:
    """A summary result's recipe from its label ('yarn-rope (s=2)'): None on the model's own positions, False
    when the label is not one Rope.label writes (such a view is left out rather than taken for a plain one)."""
    label = result.get("rope")
    if label is None:
        return None
    match = re.fullmatch(r"(\S+) \(s=([0-9.e+-]+)\)", label)
    try:
        return Rope(match.group(1), float(match.group(2))) if match else False
    except ValueError:
        return False
