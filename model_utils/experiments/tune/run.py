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
from model_utils.core.machine import peak_rss_gb, usable_cores
from model_utils.core.records.tune import PeakMemory, TuneSummary
from model_utils.core.views import as_view
from model_utils.experiments.corpus import Corpus, Document
from model_utils.experiments.fingerprint import model_fingerprints
from model_utils.experiments.sweep import Spec, SweepSettings, check_specs, check_text
from model_utils.experiments.tune.cluster import run_on_actors, start_actors, start_ray
from model_utils.experiments.tune.rows import ROWS, TuneSettings, finished_documents, upgrade_rows, write_document
from model_utils.experiments.tune.summary import summarize_tune
from model_utils.experiments.tune.worker import DocumentWorker
from model_utils.models import LoadedModel

PASSES = ".passes"  # DIR/.passes/: the passes of documents not finished yet (the sweep's pass cache format)
SUMMARY = "summary.json"


@dataclass(kw_only=True)
class Progress:
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
    on_document: Callable[[Progress], None] | None
    computed: int = 0
    worker_peaks: list[float] = field(default_factory=list)

    def begin(self) -> None:  # once the workers are ready: a run refused or unable to start draws no progress
        if self.on_document is not None:
            self.on_document(Progress(done=self.present, total=self.total, document=None, computed=0, seconds=0.0))

    def finish(self, document: Document, result: dict) -> None:
        write_document(self.out, self.settings, document, result)
        self.computed += 1
        self.worker_peaks.append(result["peak_rss_gb"])
        if self.on_document is not None:
            self.on_document(Progress(done=self.present + self.computed, total=self.total, document=document,
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


def run_in_process(worker: DocumentWorker, documents: list[Document], writer: Writer,
                   on_pass: Callable[[Document, str, int], None] | None) -> None:
    writer.begin()
    for document in documents:
        def announce(label: str, index: int, document: Document = document) -> None:
            on_pass(document, label, index)

        writer.finish(document, worker.run(document, None if on_pass is None else announce))


def run_on_ray(worker_args: tuple, documents: list[Document], writer: Writer, workers: int, threads: int,
               address: str | None, portable_fingerprint: str, device: str | None = None,
               keep_passes: bool = False) -> None:
    connected = start_ray(workers, address)  # imports ray: after the bounds it sets for joining a cluster
    import ray

    try:  # a local actor takes one of the W CPUs; on a cluster it reserves as many CPUs as it has threads
        actors = start_actors(workers, threads, 1 if address is None else threads, worker_args,
                              portable_fingerprint, device, keep_passes)
        writer.begin()
        run_on_actors(actors, documents, writer.finish)
    finally:
        if connected:
            ray.shutdown()


def tune(loaded: LoadedModel, corpus: Corpus, specs: Sequence[Spec], settings: SweepSettings,
         out: Path, *, workers: int = 1, ray_address: str | None = None, threads: int | None = None,
         on_document: Callable[[Progress], None] | None = None,
         on_pass: Callable[[Document, str, int], None] | None = None, cache_dir: Path | None = None) -> TuneSummary:
    """Run every document of `corpus` not yet in `out` and return the summary of all of them (see the module
    docstring); rows of the rows format before this one, made with the same settings, are upgraded first
    (upgrade_rows). workers=1 without ray_address runs in this process (`on_pass` hears of each pass); otherwise on
    Ray actors with `threads` torch threads each (default: this machine's cores // workers). Passes are kept in
    `cache_dir` (the sweep's pass cache, shared with `sweep` and `fit`) when given, else in OUT/.passes until their
    document is written. Raises AnalysisError
    or TuneUsageError before any work, TuneError when documents could not be finished (those finished are kept)."""
    started = time.perf_counter()
    tokens = check_documents(loaded, corpus, specs, settings)
    fingerprint, portable_fingerprint = model_fingerprints(loaded)
    views = [as_view(spec) for spec in specs]
    tune_settings = TuneSettings(model=loaded.name, fingerprint=fingerprint, specs=tuple(v.label for v in views),
                                 sweep=settings)
    upgrade_rows(out, tune_settings, views)
    done = finished_documents(out, tune_settings)
    pending = [document for document in corpus.documents if document.sha256 not in done]
    writer = Writer(out=out, settings=tune_settings, present=len(corpus.documents) - len(pending),
                    total=len(corpus.documents), on_document=on_document)
    use_ray = workers > 1 or ray_address is not None
    threads = threads or (max(1, usable_cores() // workers) if use_ray else None)
    (out / ROWS).mkdir(parents=True, exist_ok=True)
    keep = cache_dir is not None
    if pending and not use_ray:
        worker = DocumentWorker(loaded, specs, settings, str(cache_dir or out / PASSES), threads, keep_passes=keep)
        run_in_process(worker, pending, writer, on_pass)
    elif pending:  # a cluster's workers keep unfinished passes on their own disks (cache_root() / tune-passes)
        passes = str((cache_dir or out / PASSES).resolve()) if ray_address is None else None
        device = None if loaded.device.type == "cpu" else str(loaded.device)  # actors load on the same kind
        run_on_ray((loaded.name, list(specs), settings, passes), pending, writer, workers, threads, ray_address,
                   portable_fingerprint, device, keep)
    _remove_if_empty(out / PASSES)
    driver = peak_rss_gb()
    trained_length = settings.trained_length or loaded.max_positions
    return replace(
        summarize_tune(out, corpus, tokens, specs, tune_settings, trained_length), workers=workers,
        threads_per_worker=threads or _torch_threads(), ray_address=ray_address, computed_documents=writer.computed,
        skipped_documents=writer.present, wall_seconds=round(time.perf_counter() - started, 1),
        peak_rss_gb=PeakMemory(driver=driver, workers=max(writer.worker_peaks, default=None),
                               max=max([driver, *writer.worker_peaks])))


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not there, or holds passes of a document another run is still computing
        folder.rmdir()


