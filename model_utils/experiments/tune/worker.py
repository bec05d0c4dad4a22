"""The worker that turns documents into rows: the same class runs in the driver's process (one worker, no Ray) and
as a Ray actor, where it loads its own copy of the model and sets its own torch threads."""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from model_utils.core.machine import peak_rss_gb
from model_utils.core.paths import cache_root
from model_utils.engine.analyze import set_threads
from model_utils.engine.plugin import load_model
from model_utils.experiments.corpus import Document
from model_utils.experiments.fingerprint import model_fingerprints
from model_utils.experiments.sweep import Spec, SweepSettings, pass_key, region_nll, run_passes
from model_utils.experiments.tune.rows import document_columns
from model_utils.models import LoadedModel


class DocumentWorker:
    """Loads the model once and turns documents into rows. The same class runs in the driver's process and, wrapped
    by ray.remote, as an actor; an actor sets its torch threads first, so that W actors share the cores."""

    def __init__(self, model: str | LoadedModel, specs: Sequence[Spec], settings: SweepSettings,
                 pass_dir: str | None, threads: int | None = None, announce: bool = False, device: str | None = None,
                 keep_passes: bool = False):
        if threads is not None:
            set_threads(threads)
        # an actor loads its own copy, on `device` (e.g. "cuda": the engine then takes its torch path); in-process
        # the driver's own model is used
        self.loaded = load_model(model, device=device) if isinstance(model, str) else model
        self.specs = list(specs)
        self.settings = settings
        self.pass_dir = Path(pass_dir) if pass_dir else cache_root() / "tune-passes"
        self.announce = announce  # an actor prints each pass (Ray forwards it to the driver's terminal)
        self.keep_passes = keep_passes  # a shared pass cache (--cache-dir) keeps them; the tune's own .passes not
        self.fingerprint, self.portable_fingerprint = model_fingerprints(self.loaded)

    def describe(self) -> dict:
        import torch

        return {"pid": os.getpid(), "host": socket.gethostname(), "threads": torch.get_num_threads(),
                "fingerprint": self.portable_fingerprint}  # as the driver's, wherever the model is kept

    def evaluate(self, document: Document, specs: Sequence[Spec]) -> list[dict]:
        """The fitter's unit of work: each spec's pass on `document` (from the pass cache where it is), as its NLL
        summed inside the trained context and past it (sweep.region_nll)."""
        records = run_passes(self.loaded, document.text, list(specs), self.settings, self.pass_dir,
                             fingerprint=self.fingerprint)
        trained = self.settings.trained_length or self.loaded.max_positions
        return [region_nll(record, trained) | {"n_tokens": record["n_tokens"]} for record in records]

    def run(self, document: Document, on_pass: Callable[[str, int], None] | None = None) -> dict:
        """The document's rows (as columns), with the seconds it took and this process's peak memory."""
        started = time.perf_counter()
        if on_pass is None and self.announce:
            def on_pass(label: str, index: int) -> None:
                print(f"{document.name}: {label} ({index + 1}/{len(self.specs)})", file=sys.stderr, flush=True)
        records = run_passes(self.loaded, document.text, self.specs, self.settings, self.pass_dir, on_pass,
                             fingerprint=self.fingerprint)
        columns = document_columns(document, records)
        for spec in [] if self.keep_passes else self.specs:  # the rows hold what the passes were kept for
            (self.pass_dir / f"{pass_key(self.fingerprint, document.text, spec, self.settings)}.json").unlink(
                missing_ok=True)
        return {"sha256": document.sha256, "columns": columns, "seconds": round(time.perf_counter() - started, 1),
                "peak_rss_gb": peak_rss_gb(), "pid": os.getpid()}


