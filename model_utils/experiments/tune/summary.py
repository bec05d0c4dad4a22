"""The tuner's summary: per bucket and view, the NLL pooled over documents with a bootstrap interval over
documents, the best constant temperature per bucket on the plain model, each schedule's and each recipe's saving
against T = 1, the same past the trained length per domain (tune/domains.py), and the corpus verdict's numbers
(verdicts.corpus: chosen on some documents, scored on the one left out), as a TuneSummary record (its table for the
terminal is verdicts.words.tune_table)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from model_utils.core.bootstrap import BOOTSTRAP_RESAMPLES, CONFIDENCE, MIN_FOR_INTERVAL, best_temperature
from model_utils.core.bootstrap import bounds as spread_bounds
from model_utils.core.records.base import DocumentEntry
from model_utils.core.records.spread import Spread, SpreadMethod
from model_utils.core.records.tune import (
    Compared,
    CorpusBest,
    CorpusBootstrap,
    CorpusEntry,
    DocumentCut,
    Saving,
    TuneResult,
    TuneSummary,
)
from model_utils.core.records.verdict import SameTokenRise
from model_utils.core.statistics import REPORTED_STATISTICS, bucket_bounds
from model_utils.core.views import View, as_view, reference_index
from model_utils.experiments.corpus import Corpus
from model_utils.experiments.runs.errors import RunError
from model_utils.experiments.sweep import multipliers
from model_utils.experiments.tune.domains import domain_savings
from model_utils.experiments.tune.rows import BY_LAYER, ROWS, TuneSettings, read_rows
from model_utils.verdicts.corpus import corpus_verdict
from model_utils.verdicts.layers import layer_groups
from model_utils.verdicts.past import ViewInfo
from model_utils.verdicts.rise import corpus_rise

SEED = 0  # of the bootstrap over documents: the same dataset always gives the same summary


def _arrays(table, hashes: list[str], labels: list[str], n_buckets: int):
    """[document, spec, bucket] NLL sums, counts and queries, per statistic the values, and per statistic of
    BY_LAYER its values per layer [document, spec, bucket, layer] (None where a row has none); checks that the rows
    hold every (document, spec, bucket) of the corpus exactly once."""
    columns = {name: table.column(name).to_pylist() for name in ("document", "spec", "bucket")}
    document_index = {sha: i for i, sha in enumerate(hashes)}
    spec_index = {label: i for i, label in enumerate(labels)}
    shape = (len(hashes), len(labels), n_buckets)
    seen = np.zeros(shape, dtype=np.int64)
    sums, counts, queries = np.zeros(shape), np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    stats = {name: np.full(shape, np.nan) for name in REPORTED_STATISTICS}
    values = {name: table.column(name).to_numpy(zero_copy_only=False) for name in
              ("nll_sum", "nll_count", "start", "stop", *REPORTED_STATISTICS)}
    layered = {name: table.column(f"{name}_by_layer").to_pylist() for name in BY_LAYER}
    complete = all(value is not None for values in layered.values() for value in values) and table.num_rows > 0
    layers = {name: np.full((*shape, len(values[0])), np.nan) for name, values in layered.items()} if complete \
        else None
    for row, (sha, label, bucket) in enumerate(zip(columns["document"], columns["spec"], columns["bucket"],
                                                   strict=True)):
        at = (document_index[sha], spec_index[label], bucket)
        seen[at] += 1
        sums[at], counts[at] = values["nll_sum"][row], values["nll_count"][row]
        queries[at] = values["stop"][row] - values["start"][row]
        for name in REPORTED_STATISTICS:
            stats[name][at] = values[name][row]
        for name in layers or ():
            layers[name][at] = layered[name][row]
    return seen, sums, counts, queries, stats, layers


def summarize_tune(out: Path, corpus: Corpus, tokens: list[int], specs: Sequence, settings: TuneSettings,
                   trained_length: int, seed: int = SEED, cuts: Sequence[DocumentCut] | None = None,
                   layer_windows: Sequence[int | None] | None = None) -> TuneSummary:
    """Per bucket and spec, the NLL pooled over documents (sum / count) with its spread over documents (a 95%
    bootstrap interval, documents resampled with replacement; below MIN_FOR_INTERVAL documents, their range);
    per bucket, the best constant temperature with its spread and the NLL it saves against T = 1; each schedule's
    saving alongside; and the corpus verdict's numbers under "verdict", its rise on the same tokens where `cuts`
    (each document's cut-context reference) are given, its untrained-distance mass per layer type where
    `layer_windows` (each layer's sliding span) name more than one and the rows hold the masses per layer."""
    sweep = settings.sweep
    hashes = sorted(document.sha256 for document in corpus.documents)  # the bootstrap's order: not the corpus's
    n_tokens = dict(zip((d.sha256 for d in corpus.documents), tokens, strict=True))
    bounds = bucket_bounds(sweep.q_start, max(tokens), sweep.bucket_size)
    expected = np.array([[len(bucket_bounds(sweep.q_start, n_tokens[sha], sweep.bucket_size))] for sha in hashes])
    labels = list(settings.specs)
    seen, sums, counts, queries, stats, layered = _arrays(read_rows(out, hashes), hashes, labels, len(bounds))
    wanted = (np.arange(len(bounds))[None, None, :] < expected[:, :, None]).astype(np.int64)  # [doc, 1, bucket]
    if not np.array_equal(seen, np.broadcast_to(wanted, seen.shape)):
        missing, twice = int(((seen == 0) & (wanted == 1)).sum()), int((seen > 1).sum())
        raise RunError(f"the rows in {out / ROWS} are incomplete ({missing} missing, {twice} duplicated); "
                       "rerun the same command to compute what is missing")
    views = [as_view(spec) for spec in specs]
    constant = [i for i, view in enumerate(views) if view.is_plain]
    temperatures = np.array([views[i].temperature for i in constant])
    reference = reference_index(views)
    rng = np.random.default_rng(seed)
    nll, nll_interval = [[] for _ in views], [[] for _ in views]  # [view][bucket reached]
    means_of = {name: [[] for _ in views] for name in REPORTED_STATISTICS}  # name -> [view][bucket reached]
    by_layer = {name: [[] for _ in views] for name in layered or ()}  # name -> [view][bucket reached] -> [layer]
    compared = [i for i, view in enumerate(views) if not view.is_plain]  # schedules, and every view on a recipe
    savings: dict[int, list[Saving]] = {i: [] for i in compared}
    best, reached = [], []
    for bucket, (start, stop) in enumerate(bounds):
        reaching = np.flatnonzero(counts[:, reference, bucket] > 0)  # documents with positions in this bucket
        if len(reaching) == 0:
            continue
        reached.append(bucket)
        bucket_sums, bucket_counts = sums[reaching, :, bucket], counts[reaching, :, bucket]  # [doc, spec]
        means = bucket_sums.sum(axis=0) / bucket_counts.sum(axis=0)  # [spec]
        spread = Spread.RANGE if len(reaching) < MIN_FOR_INTERVAL else Spread.INTERVAL_95
        draws = np.eye(len(reaching), dtype=bool) if spread is Spread.RANGE else \
            rng.integers(0, len(reaching), size=(BOOTSTRAP_RESAMPLES, len(reaching)))  # each document alone
        samples = np.stack([bucket_sums[draw].sum(axis=0) / bucket_counts[draw].sum(axis=0) for draw in draws])
        weights = queries[reaching, :, bucket]
        for i in range(len(views)):
            nll[i].append(float(means[i]))
            nll_interval[i].append(tuple(spread_bounds(samples[:, i], spread)))
            for name in REPORTED_STATISTICS:
                means_of[name][i].append(float(np.average(stats[name][reaching, i, bucket], weights=weights[:, i])))
            for name, values in by_layer.items():
                values[i].append(np.average(layered[name][reaching, i, bucket], axis=0, weights=weights[:, i]))
        where = {"bucket": (int(start), int(stop)), "documents": len(reaching),
                 "positions": int(bucket_counts[:, reference].sum())}
        best.append(_best_entry(where, best_temperature(temperatures, means[constant], samples[:, constant],
                                                        constant.index(reference), spread)))
        for i in compared:
            saved = samples[:, reference] - samples[:, i]
            savings[i].append(Saving(**where, nll=float(means[i]), saved=float(means[reference] - means[i]),
                                     saved_interval=tuple(spread_bounds(saved, spread))))
    seconds = _document_seconds(out, hashes)
    verdict = corpus_verdict(
        views=[ViewInfo(view=view, multipliers=multipliers(view, max(tokens), trained_length, sweep.q_start))
               for view in views],
        sums=sums[:, :, reached], counts=counts[:, reference, reached], buckets=[bounds[b] for b in reached],
        trained_length=trained_length, reported_best={entry.bucket[0]: entry.temperature_interval for entry in best},
        seed=seed, statistics={name: np.array(values) for name, values in means_of.items()},
        layer_types=layer_groups(layer_windows, *(np.array(by_layer[name]) for name in BY_LAYER)) if by_layer
        else (), layer_spans=None if layer_windows is None else tuple(layer_windows),
        same_token_rise=None if not cuts else _same_token_rise(cuts, hashes, sums[:, reference], counts[:, reference],
                                                               bounds, trained_length))
    return TuneSummary(
        model=settings.model, model_fingerprint=settings.fingerprint, settings=settings.record(),
        trained_length=trained_length, corpus=_corpus_entry(corpus, tokens),
        buckets=tuple(entry.bucket for entry in best),
        results=tuple(TuneResult(view=view, nll=tuple(nll[i]), nll_interval=tuple(nll_interval[i]),
                                 statistics={name: tuple(values[i]) for name, values in means_of.items()})
                      for i, view in enumerate(views)), best=tuple(best),
        schedules=tuple(Compared(view=views[i], buckets=tuple(savings[i])) for i in compared if views[i].rope is None),
        recipes=tuple(Compared(view=views[i], buckets=tuple(savings[i])) for i in compared
                      if views[i].rope is not None),
        bootstrap=CorpusBootstrap(resamples=BOOTSTRAP_RESAMPLES, confidence=CONFIDENCE, seed=seed,
                                  method=SpreadMethod.DOCUMENT_BOOTSTRAP if len(hashes) >= MIN_FOR_INTERVAL
                                  else SpreadMethod.RANGE),
        compute_seconds=round(sum(seconds), 1), rows=str(out / ROWS), verdict=verdict,
        domains=_domains(corpus, hashes, views, sums[:, :, reached], counts[:, reference, reached],
                         reference, [i for i, b in enumerate(reached) if bounds[b][0] >= trained_length]),
        cut_context=None if not cuts else tuple(cuts),
        layer_windows=None if layer_windows is None else tuple(layer_windows))


def _same_token_rise(cuts: Sequence[DocumentCut], hashes: list[str], sums: np.ndarray, counts: np.ndarray,
                     bounds: Sequence[tuple[int, int]], trained_length: int) -> SameTokenRise:
    """The corpus's rise on the same tokens: T = 1's NLL past the trained length per document (`sums`, `counts`
    [document, bucket] of the reference view) against each document's cut context."""
    by_sha = {cut.sha256: cut for cut in cuts}
    if set(by_sha) != set(hashes):
        raise RunError("the cut-context references do not cover the corpus's documents: rerun the tune")
    past = [b for b, (start, _) in enumerate(bounds) if start >= trained_length]
    t1_sums, t1_counts = sums[:, past].sum(axis=1), counts[:, past].sum(axis=1)
    ordered = [by_sha[sha] for sha in hashes]
    if [int(c) for c in t1_counts] != [cut.positions for cut in ordered]:
        raise RunError("a document's cut-context reference scores other positions than its rows: rerun the tune")
    return corpus_rise(t1_sums, np.array([cut.nll_sum for cut in ordered]), t1_counts.astype(np.float64),
                       stride=ordered[0].stride, min_context=ordered[0].min_context)


def _domains(corpus: Corpus, hashes: list[str], views: list[View], sums: np.ndarray, counts: np.ndarray,
             reference: int, past: list[int]):
    domain_of = {document.sha256: document.domain for document in corpus.documents}
    return domain_savings(sums=sums, counts=counts, views=views, domains=[domain_of[sha] for sha in hashes],
                          hashes=hashes, reference=reference, past=past)


def _best_entry(where: dict, best: dict) -> CorpusBest:
    return CorpusBest(**where, **best | {"temperature_interval": tuple(best["temperature_interval"]),
                                       "saved_interval": tuple(best["saved_interval"])})


def _corpus_entry(corpus: Corpus, tokens: list[int]) -> CorpusEntry:
    return CorpusEntry(source=corpus.source, documents=len(corpus.documents), tokens=tuple(tokens),
                       duplicates_skipped=tuple(corpus.duplicates),
                       listed=tuple(DocumentEntry(name=d.name, sha256=d.sha256, n_tokens=n, domain=d.domain)
                                    for d, n in zip(corpus.documents, tokens, strict=True)))


def _document_seconds(out: Path, hashes: Sequence[str]) -> list[float]:
    import pyarrow.parquet as pq

    seconds = []
    for sha in hashes:
        metadata = pq.read_schema(out / ROWS / f"{sha}.parquet").metadata or {}
        seconds.append(float(json.loads(metadata.get(b"tune_document", b"{}")).get("seconds", math.nan)))
    return seconds
