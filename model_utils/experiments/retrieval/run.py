"""A retrieval run: every passage at every distance under every view, planted and not, one pass each (engine.retrieval),
then one curve per view and the verdict (verdicts.retrieval). A pass is cached under what it computes (the tokens,
the recipe and the logit multipliers it runs), so two views that run the same multipliers on a text (a schedule that
is 1 inside the trained length, and T = 1) share one pass, an interrupted run resumes and a rerun computes nothing.
The passes run in this process or on a long run's workers (runs.open_pool), one pass per job."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model_utils.core.errors import AnalysisError
from model_utils.core.files import write_atomic
from model_utils.core.records.retrieval import (
    FORMAT as DOCUMENT_FORMAT,
)
from model_utils.core.records.retrieval import (
    PassageEntry,
    RetrievalDocument,
    RetrievalPass,
    RetrievalPoint,
    ViewEntry,
)
from model_utils.core.records.run import RunInfo
from model_utils.core.retrieval import LEAD_TOKENS, Layout, check_layout, planted_ids, unplanted_ids
from model_utils.core.views import View
from model_utils.engine.analyze import validate
from model_utils.engine.retrieval import retrieval_pass, retrieval_request
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.retrieval.passages import Tokens
from model_utils.experiments.runs.pool import Job, Placement, open_pool
from model_utils.experiments.runs.worker import WorkerSettings
from model_utils.models import LoadedModel
from model_utils.verdicts.retrieval import curve, retrieval_verdict

FORMAT = 1  # of a cached pass: bump when a pass's numbers would come out different
REFERENCE = View(1.0)  # T = 1 on the model's own positions: what every other view is compared with


@dataclass(frozen=True, kw_only=True)
class RetrievalRequest:
    """What a run measures besides its texts: the distances (tokens from a copy's start to its repeat's), the views,
    the trained length they are judged against, whether a text may run past it, and the filler before the copy."""

    distances: tuple[int, ...]
    views: tuple[View, ...]
    trained_length: int
    beyond_trained: bool = False
    lead: int = LEAD_TOKENS


@dataclass(frozen=True, kw_only=True)
class Unit:
    """One pass: a passage (its index) at a distance under a view, planted or not, with its cache key."""

    passage: int
    distance: int
    view: View
    planted: bool
    key: str
    n_tokens: int


@dataclass(frozen=True, kw_only=True)
class UnitEvent:
    """What on_unit hears: a pass taken by a worker (seconds None) or finished (its seconds), how many of the
    run's passes and of their tokens are done (the tokens tell the time left better: a pass costs about its length)."""

    label: str
    worker: int
    done: int
    total: int
    tokens_done: int
    tokens_total: int
    seconds: float | None = None


def check_retrieval(loaded: LoadedModel, filler: Tokens, passages: Sequence[Tokens],
                    request: RetrievalRequest) -> None:
    """Refuse a run before any pass (AnalysisError with the fix): no passage, distances not ascending, no T = 1,
    a view twice, a view the engine refuses, or a layout that cannot be built or was not allowed."""
    if not passages:
        raise AnalysisError("no passage to plant; name one or more, or give a passage file")
    if not request.distances or list(request.distances) != sorted(set(request.distances)) or \
            request.distances[0] < 1:
        raise AnalysisError("give the distances as positive whole numbers of tokens, each once, shortest first")
    labels = [view.label for view in request.views]
    if REFERENCE not in request.views:
        raise AnalysisError("the probe compares every view with T = 1: include 1 in the temperatures")
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise AnalysisError(f"{', '.join(twice)} listed twice; list each temperature, schedule or recipe once")
    for passage in passages:
        for distance in request.distances:
            check_layout(layout(passage, distance, request), len(filler.ids), request.trained_length,
                         request.beyond_trained)
    longest = layout(passages[0], request.distances[-1], request)
    for view in request.views:
        validate(loaded, retrieval_request(view, longest, request.trained_length, request.beyond_trained))


def layout(passage: Tokens, distance: int, request: RetrievalRequest) -> Layout:
    return Layout(lead=request.lead, passage=len(passage.ids), distance=distance)


def unit_ids(filler: Tokens, passage: Tokens, distance: int, planted: bool, request: RetrievalRequest) -> list[int]:
    place = layout(passage, distance, request)
    return (planted_ids if planted else unplanted_ids)(filler.ids, passage.ids, place)


def unit_key(fingerprint: str, ids: Sequence[int], view: View, place: Layout, request: RetrievalRequest) -> str:
    """What a pass computes: the model, its tokens, the recipe and the multipliers it runs (in float32, as the pass
    applies them: SSMax at L and log-n with base L are then one pass), where the copy and the repeat are, and the
    trained length (the untrained distances and a remapping depend on it)."""
    multipliers = np.asarray(view.multipliers(len(ids)), dtype=np.float32).tobytes()  # as the pass applies them
    parts = [str(FORMAT), fingerprint, hashlib.sha256(np.asarray(ids, dtype=np.int64).tobytes()).hexdigest(),
             "" if view.rope is None else view.rope.label, hashlib.sha256(multipliers).hexdigest(),
             repr((place.lead, place.passage, place.distance)), str(request.trained_length)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def units(filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest, fingerprint: str) -> list[Unit]:
    """Every pass of the run, shortest first (so the first results come soon)."""
    found = []
    for distance in request.distances:
        for index, passage in enumerate(passages):
            place = layout(passage, distance, request)
            for view in request.views:
                for planted in (True, False):
                    ids = unit_ids(filler, passage, distance, planted, request)
                    found.append(Unit(passage=index, distance=distance, view=view, planted=planted,
                                      key=unit_key(fingerprint, ids, view, place, request), n_tokens=len(ids)))
    return found


def compute_pass(loaded: LoadedModel, ids: list[int], view: View, place: Layout, trained_length: int,
                 beyond_trained: bool, path: str | None) -> dict:
    """A worker's job: one pass, written to `path` (the pass cache, where the worker shares the driver's disk) and
    returned as the cache holds it."""
    record = retrieval_pass(loaded, ids, view, place, trained_length, beyond_trained).to_dict()
    if path is not None:
        write_atomic(Path(path), json.dumps(record, allow_nan=False))
    return record


def run_units(loaded: LoadedModel, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest,
              cache_dir: Path, placement: Placement, on_unit: Callable[[UnitEvent], None] | None = None,
              fingerprint: str | None = None) -> dict[str, RetrievalPass]:
    """Every pass of the run by key, from the cache or computed (each distinct pass once) and saved there."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = fingerprint or model_fingerprint(loaded, portable=True)
    distinct = {unit.key: unit for unit in units(filler, passages, request, fingerprint)}
    missing = [unit for key, unit in distinct.items() if not (cache_dir / f"{key}.json").is_file()]
    progress = _Progress(missing, on_unit)
    local = not placement.on_ray or placement.ray_address is None
    jobs = [Job(name=_label(unit, passages), method="apply", item=unit, args=(
        compute_pass, unit_ids(filler, passages[unit.passage], unit.distance, unit.planted, request), unit.view,
        layout(passages[unit.passage], unit.distance, request), request.trained_length, request.beyond_trained,
        str(cache_dir / f"{unit.key}.json") if local else None)) for unit in missing]

    def finish(job: Job, record: dict, worker: int) -> None:
        path = cache_dir / f"{job.item.key}.json"
        if not path.is_file():  # a cluster's worker sends it back
            write_atomic(path, json.dumps(record, allow_nan=False))
        progress.finished(job, record["seconds"], worker)

    if jobs:
        with open_pool(WorkerSettings(model=loaded), placement) as pool:
            pool.each(jobs, finish, progress.started)
    return {key: RetrievalPass.from_dict(json.loads((cache_dir / f"{key}.json").read_text())) for key in distinct}


class _Progress:
    """Counts the run's passes and their tokens for on_unit."""

    def __init__(self, missing: list[Unit], on_unit: Callable[[UnitEvent], None] | None):
        self.on_unit, self.done, self.tokens_done = on_unit, 0, 0
        self.total, self.tokens_total = len(missing), sum(unit.n_tokens for unit in missing)

    def started(self, job: Job, worker: int) -> None:
        self._tell(job, worker, None)

    def finished(self, job: Job, seconds: float, worker: int) -> None:
        self.done += 1
        self.tokens_done += job.item.n_tokens
        self._tell(job, worker, seconds)

    def _tell(self, job: Job, worker: int, seconds: float | None) -> None:
        if self.on_unit is not None:
            self.on_unit(UnitEvent(label=job.name, worker=worker, done=self.done, total=self.total,
                                   tokens_done=self.tokens_done, tokens_total=self.tokens_total, seconds=seconds))


def _label(unit: Unit, passages: Sequence[Tokens]) -> str:
    state = "planted" if unit.planted else "nothing planted"
    return f"{passages[unit.passage].name} at {unit.distance:,}, {unit.view.label}, {state}"


def retrieval(loaded: LoadedModel, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest, *,
              cache_dir: Path, placement: Placement | None = None, on_unit: Callable[[UnitEvent], None] | None = None,
              run: RunInfo | None = None) -> RetrievalDocument:
    """Check, run (or read from the cache) every pass, and assemble the document with its curves and verdict."""
    check_retrieval(loaded, filler, passages, request)
    fingerprint = model_fingerprint(loaded, portable=True)
    found = run_units(loaded, filler, passages, request, cache_dir, placement or Placement(), on_unit, fingerprint)
    by_unit = {(u.passage, u.distance, u.view, u.planted): found[u.key]
               for u in units(filler, passages, request, fingerprint)}
    points = tuple(RetrievalPoint(passage=passage.name, distance=distance, view=view.label,
                                  planted=by_unit[(index, distance, view, True)],
                                  unplanted=by_unit[(index, distance, view, False)])
                   for distance in request.distances for index, passage in enumerate(passages)
                   for view in request.views)
    return document(loaded, filler, passages, request, points, found, run)


def document(loaded: LoadedModel, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest,
             points: tuple[RetrievalPoint, ...], found: dict[str, RetrievalPass],
             run: RunInfo | None) -> RetrievalDocument:
    names = [passage.name for passage in passages]
    views = tuple(ViewEntry(label=view.label, temperature=view.temperature,
                            schedule=None if view.schedule is None else view.schedule.label, rope=view.rope)
                  for view in request.views)
    curves = tuple(curve(points, view.label, names, request.distances) for view in views)
    verdict = retrieval_verdict(points, views, curves, names, request.distances, REFERENCE.label,
                                request.trained_length)
    peaks = [p.peak_rss_gb for p in found.values() if p.peak_rss_gb is not None]
    return RetrievalDocument(
        format=DOCUMENT_FORMAT, model=loaded.name, trained_length=request.trained_length,
        beyond_trained=request.beyond_trained, filler_source=filler.source, filler_sha256=filler.sha256,
        filler_tokens=len(filler.ids), lead=request.lead,
        passages=tuple(PassageEntry(name=p.name, source=p.source, sha256=p.sha256, tokens=p.labels)
                       for p in passages),
        distances=request.distances, views=views, points=points, curves=curves, verdict=verdict,
        seconds=round(sum(p.seconds for p in found.values()), 1), peak_rss_gb=max(peaks, default=None), run=run)
