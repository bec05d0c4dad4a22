"""A sweep whose passes run on a long run's workers (runs.open_pool: W Ray actors on this machine, or a cluster's),
one pass per job, so that W workers run W passes at once. The driver keeps the pass cache: it hands out only the
passes not in it, writes each record as it arrives (a local Ray's actors have written it there already; a cluster's
send it back) and then runs the in-process sweep, which finds every pass in the cache. So an interrupted run resumes,
a rerun computes nothing that finished, and the JSON is the in-process sweep's but for each pass's seconds and peak
memory (and their sum and maximum), which are where it ran."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from model_utils.core.files import write_atomic
from model_utils.core.paths import cache_root
from model_utils.core.records.sweep import SweepDocument, SweepPass
from model_utils.core.views import as_view
from model_utils.experiments.corpus import Document
from model_utils.experiments.cut_context import CutSettings
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.runs.pool import Placement, open_pool
from model_utils.experiments.runs.worker import WorkerSettings
from model_utils.experiments.sweep import Spec, SweepSettings, check_sweep, pass_path, sweep
from model_utils.models import LoadedModel


@dataclass(frozen=True, kw_only=True)
class PassEvent:
    """What `on_pass` hears: a pass taken by a worker (seconds None), or finished on it (its compute time)."""

    label: str
    worker: int  # 0 .. W - 1, in the order the pool started them
    done: int  # passes in the cache now, this one included once finished
    total: int
    seconds: float | None = None


def sweep_on_workers(loaded: LoadedModel, text: str, specs: Sequence[Spec], settings: SweepSettings,
                     placement: Placement, *, source: str = "text", cache_dir: Path | None = None,
                     on_pass: Callable[[PassEvent], None] | None = None,
                     cut: CutSettings | None = None, name: str | None = None) -> SweepDocument:
    """The sweep (experiments.sweep.sweep) with its missing passes run on `placement`'s workers first. Raises
    AnalysisError before any worker starts, RunUsageError for an address that is no Ray cluster, RunError when
    passes could not be finished (those finished are in the cache)."""
    check_sweep(loaded, text, specs, settings)
    folder = cache_dir or cache_root() / "sweeps"
    folder.mkdir(parents=True, exist_ok=True)
    fingerprint = model_fingerprint(loaded, portable=True)  # as run_passes keys them
    paths = {as_view(spec).label: pass_path(folder, fingerprint, text, spec, settings) for spec in specs}
    missing = [spec for spec in specs if not paths[as_view(spec).label].is_file()]
    done = len(specs) - len(missing)

    def started(spec: Spec, worker: int) -> None:
        if on_pass is not None:
            on_pass(PassEvent(label=as_view(spec).label, worker=worker, done=done, total=len(specs)))

    def finished(spec: Spec, record: SweepPass, worker: int) -> None:
        nonlocal done
        label = as_view(spec).label
        if not paths[label].is_file():  # a cluster's worker kept it on its own disk: this machine's cache gets it
            write_atomic(paths[label], json.dumps(record.to_dict(), allow_nan=False))
        done += 1
        if on_pass is not None:
            on_pass(PassEvent(label=label, worker=worker, done=done, total=len(specs), seconds=record.result.seconds))

    if missing:
        work = WorkerSettings(model=loaded, sweep=settings, pass_dir=folder, keep_passes=True)
        with open_pool(work, placement) as pool:
            pool.passes(Document(source, text), missing, finished, started)
    # the passes are in the cache now
    return sweep(loaded, text, specs, settings, source=source, cache_dir=folder, cut=cut, name=name)
