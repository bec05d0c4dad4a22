"""The worker of a long run: the same class runs in the driver's process (with the driver's model) and as a Ray
actor, where it loads its own copy of the model and sets its own torch threads. It runs a document's passes (the
sweep's, from the pass cache where they are) and returns what the run asked for: a tune's rows as columns, a fit's
NLL sums inside and past the trained length, or a sweep's pass records (SweepPass) whole."""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from model_utils.core.machine import peak_rss_gb
from model_utils.core.paths import cache_root
from model_utils.core.records.sweep import SweepPass
from model_utils.engine.analyze import set_threads
from model_utils.engine.plugin import load_model
from model_utils.experiments.corpus import Document
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.sweep import Spec, SweepSettings, pass_key, region_nll, run_passes
from model_utils.models import LoadedModel

Columns = Callable[[Document, list[SweepPass]], dict[str, list]]  # a document's passes -> its rows, as columns


@dataclass(frozen=True, kw_only=True)
class WorkerSettings:
    """What a worker is made with. The pool sends it to each Ray actor, so the model is a name there (the actor
    loads its own copy); in this process it is the driver's LoadedModel."""

    model: str | LoadedModel
    sweep: SweepSettings | None = None  # what passes(), evaluate() and run() share; None for apply() alone
    specs: tuple[Spec, ...] = ()  # the passes run() makes on each document (evaluate() is given its own)
    columns: Columns | None = None  # run(): what a document's passes become before they travel back
    pass_dir: Path | None = None  # the pass cache; None: cache_root() / "tune-passes" on the worker's machine
    keep_passes: bool = False  # a shared pass cache (--cache-dir) keeps them; run() deletes its own once in rows
    threads: int | None = None  # torch threads, set before the model loads; None: leave the process's as they are
    device: str | None = None  # where an actor loads its copy (e.g. "cuda": the engine then takes its torch path)
    announce: bool = False  # an actor prints each pass (Ray forwards it to the driver's terminal)


class DocumentWorker:
    """Loads the model once and runs documents' passes. The same class runs in the driver's process and, wrapped by
    ray.remote, as an actor; an actor sets its torch threads first, so that W actors share the cores."""

    def __init__(self, settings: WorkerSettings):
        if settings.threads is not None:
            set_threads(settings.threads)
        model = settings.model
        self.loaded = load_model(model, device=settings.device) if isinstance(model, str) else model
        self.settings = settings
        self.pass_dir = Path(settings.pass_dir) if settings.pass_dir else cache_root() / "tune-passes"
        self.fingerprint = model_fingerprint(self.loaded, portable=True)  # the driver's, and the pass cache's key

    def describe(self) -> dict:
        import torch

        return {"pid": os.getpid(), "host": socket.gethostname(), "threads": torch.get_num_threads(),
                "fingerprint": self.fingerprint}  # as the driver's, wherever the model is kept

    def apply(self, function: Callable, *args):
        """A run built on the pool hands its own unit of work (the retrieval probe's passes): function(the loaded
        model, *args), run here. Ray ships the function by reference: its module must be importable here."""
        return function(self.loaded, *args)

    def passes(self, document: Document, specs: Sequence[Spec]) -> list[SweepPass]:
        """A distributed sweep's unit of work: each spec's pass on `document`, from this worker's pass cache where
        it is, else computed and saved there."""
        return run_passes(self.loaded, document.text, list(specs), self.settings.sweep, self.pass_dir,
                          fingerprint=self.fingerprint)

    def evaluate(self, document: Document, specs: Sequence[Spec]) -> list[dict]:
        """The fitter's unit of work: each spec's pass on `document` (from the pass cache where it is), as its NLL
        summed inside the trained context and past it (sweep.region_nll)."""
        sweep = self.settings.sweep
        passes = run_passes(self.loaded, document.text, list(specs), sweep, self.pass_dir,
                            fingerprint=self.fingerprint)
        trained = sweep.trained_length or self.loaded.max_positions
        return [region_nll(passed, trained) | {"n_tokens": passed.n_tokens} for passed in passes]

    def run(self, document: Document, on_pass: Callable[[str, int], None] | None = None) -> dict:
        """The tuner's unit of work: the document's rows (settings.columns of its passes), with the seconds it took
        and this process's peak memory."""
        settings = self.settings
        if settings.columns is None:
            raise TypeError("DocumentWorker.run needs WorkerSettings.columns: what a document's passes become")
        started = time.perf_counter()
        specs = list(settings.specs)
        if on_pass is None and settings.announce:
            def on_pass(label: str, index: int) -> None:
                print(f"{document.name}: {label} ({index + 1}/{len(specs)})", file=sys.stderr, flush=True)
        passes = run_passes(self.loaded, document.text, specs, settings.sweep, self.pass_dir, on_pass,
                            fingerprint=self.fingerprint)
        columns = settings.columns(document, passes)
        for spec in [] if settings.keep_passes else specs:  # the rows hold what the passes were kept for
            (self.pass_dir / f"{pass_key(self.fingerprint, document.text, spec, settings.sweep)}.json").unlink(
                missing_ok=True)
        return {"sha256": document.sha256, "columns": columns, "seconds": round(time.perf_counter() - started, 1),
                "peak_rss_gb": peak_rss_gb(), "pid": os.getpid()}
