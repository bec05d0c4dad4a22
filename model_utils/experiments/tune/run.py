"""`tune`: the context-length sweep over every document of a corpus, in this process or on Ray workers, into a
results folder (rows/, one Parquet file per document) and its summary. Each document runs through the sweep's own
passes, so a document cut short resumes at its next pass; a rerun skips the documents already there."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from model_utils.core.errors import AnalysisError
from model_utils.core.machine import peak_rss_gb
from model_utils.core.records.tune import DocumentCut, PeakMemory, TuneSummary
from model_utils.core.views import as_view
from model_utils.engine.analyze import tokenize
from model_utils.experiments.corpus import Corpus, Document
from model_utils.experiments.cut_context import CutSettings, cut_context_pass
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.runs.pool import Placement, open_pool
from model_utils.experiments.runs.worker import WorkerSettings
from model_utils.experiments.sweep import Spec, SweepSettings, check_specs, check_text, pass_key, run_passes
from model_utils.experiments.tune.rows import (
    ROWS,
    TuneSettings,
    document_columns,
    finished_documents,
    upgrade_rows,
    write_document,
)
from model_utils.experiments.tune.summary import summarize_tune
from model_utils.models import LoadedModel

PASSES = ".passes"  # DIR/.passes/: the passes of documents not finished yet (the sweep's pass cache format)
SUMMARY = "summary.json"


@dataclass(kw_only=True)
class DocumentProgress:
    """What `on_document` receives once when the work starts (document None) and after each finished document."""

    done: int  # documents in the folder now, this one included
    total: int
    document: Document | None
    computed: int  # documents computed by this run so far
    seconds: float  # this document's compute time


@dataclass(kw_only=True)
class Writer:
    """The driver's side of a run: writes each finished document once and reports progress."""

    out: Path
    settings: TuneSettings
    present: int  # documents already in the folder when the run started
    total: int
    on_document: Callable[[DocumentProgress], None] | None
    computed: int = 0
    worker_peaks: list[float] = field(default_factory=list)

    def begin(self) -> None:  # once the workers are ready: a run refused or unable to start draws no progress
        if self.on_document is not None:
            self.on_document(DocumentProgress(done=self.present, total=self.total, document=None, computed=0,
                                              seconds=0.0))

    def finish(self, document: Document, result: dict) -> None:
        write_document(self.out, self.settings, document, result)
        self.computed += 1
        self.worker_peaks.append(result["peak_rss_gb"])
        if self.on_document is not None:
            self.on_document(DocumentProgress(done=self.present + self.computed, total=self.total, document=document,
                                              computed=self.computed, seconds=result["seconds"]))


def check_documents(loaded: LoadedModel, corpus: Corpus, specs: Sequence, settings: SweepSettings) -> list[int]:
    """Refuse the tune before any work, naming the document at fault; the number of tokens of each document."""
    if settings.bucket_size is None:
        raise AnalysisError("a tune compares documents bucket by bucket: give a bucket size")
    request = check_specs(loaded, specs, settings)
    tokens = []
    for document in corpus.documents:
        try:
            tokens.append(check_text(loaded, document.text, request, settings))
        except AnalysisError as error:
            raise AnalysisError(f"{document.name}: {error}") from None
    return tokens


def tune(loaded: LoadedModel, corpus: Corpus, specs: Sequence[Spec], settings: SweepSettings,
         out: Path, *, workers: int = 1, ray_address: str | None = None, threads: int | None = None,
         on_document: Callable[[DocumentProgress], None] | None = None,
         on_pass: Callable[[Document, str, int], None] | None = None, cache_dir: Path | None = None,
         cut: CutSettings | None = None) -> TuneSummary:
    """Run every document of `corpus` not yet in `out` and return the summary of all of them (see the module
    docstring); rows of the rows format before this one, made with the same settings, are upgraded first
    (upgrade_rows). workers=1 without ray_address runs in this process (`on_pass` hears of each pass); otherwise on
    Ray actors with `threads` torch threads each (default: this machine's cores // workers). Passes are kept in
    `cache_dir` (the sweep's pass cache, shared with `sweep` and `fit`) when given, else in OUT/.passes until their
    document is written. Raises AnalysisError or RunUsageError before any work, RunError when documents could not
    be finished (those finished are kept). With `cut`, each document's cut-context reference too (its windows from
    `cut.folder` where they are, else computed here), for the rise on the same tokens."""
    started = time.perf_counter()
    tokens = check_documents(loaded, corpus, specs, settings)
    fingerprint = model_fingerprint(loaded)
    views = [as_view(spec) for spec in specs]
    tune_settings = TuneSettings(model=loaded.name, fingerprint=fingerprint, specs=tuple(v.label for v in views),
                                 sweep=settings)
    upgrade_rows(out, tune_settings, views, cached_passes(loaded, corpus, specs, settings, cache_dir))
    done = finished_documents(out, tune_settings)
    pending = [document for document in corpus.documents if document.sha256 not in done]
    writer = Writer(out=out, settings=tune_settings, present=len(corpus.documents) - len(pending),
                    total=len(corpus.documents), on_document=on_document)
    placement = Placement(workers=workers, ray_address=ray_address, threads=threads)
    (out / ROWS).mkdir(parents=True, exist_ok=True)
    if pending:  # on a cluster the workers keep unfinished passes on their own disks (cache_root() / tune-passes)
        work = WorkerSettings(model=loaded, sweep=settings, specs=tuple(specs), columns=document_columns,
                              pass_dir=cache_dir or out / PASSES, keep_passes=cache_dir is not None)
        with open_pool(work, placement) as pool:
            writer.begin()
            pool.run(pending, writer.finish, on_pass)
    _remove_if_empty(out / PASSES)
    trained_length = settings.trained_length or loaded.max_positions
    cuts = None if cut is None else document_cuts(loaded, corpus, settings, trained_length, cut)
    driver = peak_rss_gb()
    return replace(
        summarize_tune(out, corpus, tokens, specs, tune_settings, trained_length, cuts=cuts,
                       layer_windows=tuple(loaded.sliding_windows())), workers=workers,
        threads_per_worker=placement.threads_each() or _torch_threads(), ray_address=ray_address,
        computed_documents=writer.computed, skipped_documents=writer.present,
        wall_seconds=round(time.perf_counter() - started, 1),
        peak_rss_gb=PeakMemory(driver=driver, workers=max(writer.worker_peaks, default=None),
                               max=max([driver, *writer.worker_peaks])))


def cached_passes(loaded: LoadedModel, corpus: Corpus, specs: Sequence[Spec], settings: SweepSettings,
                  cache_dir: Path | None) -> Callable[[str], list | None]:
    """For upgrade_rows: a document's passes (by sha256) where every one of them is in `cache_dir`, else None (an
    upgrade computes nothing); None for a model of one layer type, whose rows need no per-layer masses."""
    if cache_dir is None or len(set(loaded.sliding_windows())) < 2:
        return lambda sha: None
    by_sha = {document.sha256: document for document in corpus.documents}
    fingerprint = model_fingerprint(loaded, portable=True)

    def passes_of(sha: str) -> list | None:
        document = by_sha.get(sha)
        if document is None or not all((cache_dir / f"{pass_key(fingerprint, document.text, spec, settings)}.json")
                                       .is_file() for spec in specs):
            return None
        return run_passes(loaded, document.text, specs, settings, cache_dir, fingerprint=fingerprint)

    return passes_of


def document_cuts(loaded: LoadedModel, corpus: Corpus, settings: SweepSettings, trained_length: int,
                  cut: CutSettings) -> list[DocumentCut] | None:
    """Each document's cut-context reference, pooled (None when a document does not pass the trained length)."""
    found = []
    for document in corpus.documents:
        ids, _ = tokenize(loaded, document.text, settings.max_tokens)
        if len(ids) <= trained_length + 1:
            return None
        reference = cut_context_pass(loaded, ids, trained_length, cut.stride_for(trained_length), cut.folder)
        found.append(DocumentCut(sha256=document.sha256, nll_sum=round(float(reference.position_nll.sum()), 5),
                                 positions=len(reference.position_nll), stride=reference.stride,
                                 min_context=reference.min_context, lead=reference.lead))
    return found


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not there, or holds passes of a document another run is still computing
        folder.rmdir()


