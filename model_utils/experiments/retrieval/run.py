"""A retrieval run: every passage at every distance under every view, planted and not, then one curve per view and
the verdict (verdicts.retrieval). One job per view: by default it reads the filler and each planted text once, up to
the longest distance, and each repeat as a continuation of that prefix (a view whose numbers depend on the whole
text's length reads every text whole, as `separate_passes` makes every view do); `refine` then bisects each reach's
bracket. Points are cached under what they compute, so a run resumes. Layout: docs/ARCHITECTURE.md (The
retrieval probe); the cost model and its measured ratio: bench/RETRIEVAL.md."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

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
)
from model_utils.core.records.run import RunInfo
from model_utils.core.retrieval import check_layout
from model_utils.core.views import View
from model_utils.engine.analyze import validate
from model_utils.engine.retrieval import retrieval_request
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.retrieval.grid import (
    REFERENCE,
    RetrievalRequest,
    Unit,
    layout,
    separate_views,
    unit,
    units,
)
from model_utils.experiments.retrieval.passages import Tokens
from model_utils.experiments.retrieval.points import MissingPointError, ViewTask, compute_view, refine_path
from model_utils.experiments.runs.pool import Job, Placement, open_pool
from model_utils.experiments.runs.worker import WorkerSettings
from model_utils.models import LoadedModel
from model_utils.verdicts.retrieval import curve, retrieval_verdict

__all__ = ["RetrievalRequest", "Unit", "UnitEvent", "check_retrieval", "retrieval", "run_units", "separate_views",
           "units"]


@dataclass(frozen=True, kw_only=True)
class UnitEvent:
    """What on_unit hears: a view's job taken by a worker (seconds None) or finished (its seconds), how many of the
    run's points and of the tokens its jobs read are done (the tokens tell the time left better: a pass costs about
    its length). A refined run's total grows as its jobs add distances."""

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
            check_layout(layout(passage.ids, distance, request), len(filler.ids), request.trained_length,
                         request.beyond_trained)
    longest = layout(passages[0].ids, request.distances[-1], request)
    for view in request.views:
        validate(loaded, retrieval_request(view, longest, request.trained_length, request.beyond_trained))


def _cached(cache_dir: Path, key: str) -> RetrievalPass | None:
    path = cache_dir / f"{key}.json"
    return RetrievalPass.from_dict(json.loads(path.read_text())) if path.is_file() else None


def refined(filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest, view: View, fingerprint: str,
            cache_dir: Path) -> list[int]:
    """The distances --refine added for `view`, replayed from the pass cache (MissingPointError where a point of
    the bisection is not there yet)."""
    texts = [p.ids for p in passages]

    def loss(index: int, distance: int, planted: bool) -> float:
        found = _cached(cache_dir, unit(filler.ids, texts, index, distance, view, planted, request, fingerprint).key)
        if found is None:
            raise MissingPointError(f"{view.label} at {distance:,}")
        return found.loss

    def mean_gain(distance: int) -> float:
        return sum(loss(i, distance, False) - loss(i, distance, True) for i in range(len(texts))) / len(texts)

    return refine_path(request.distances_for(view, max(len(text) for text in texts)), mean_gain)


def _needs_refining(filler, passages, request, view, fingerprint, cache_dir) -> bool:
    try:
        refined(filler, passages, request, view, fingerprint, cache_dir)
    except MissingPointError:
        return True
    return False


def view_tasks(filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest, cache_dir: Path,
               fingerprint: str, separate_passes: bool, refine: bool) -> list[ViewTask]:
    """One task per view with a missing grid point (or, refining, a missing point of its bisection); each view
    computes its own points, so a key two views share may be computed twice when both miss it."""
    whole = set(request.views if separate_passes else separate_views(passages, request))
    tasks = []
    for view in request.views:
        mine = units(filler, passages, request, fingerprint, views=[view])
        known = {point.key: found.loss for point in mine if (found := _cached(cache_dir, point.key)) is not None}
        missing = tuple(point for point in mine if point.key not in known)
        if missing or (refine and _needs_refining(filler, passages, request, view, fingerprint, cache_dir)):
            tasks.append(ViewTask(view=view, filler=filler.ids, passages=tuple(p.ids for p in passages),
                                  request=request, whole=view in whole, refine=refine, fingerprint=fingerprint,
                                  missing=missing, known=known))
    return tasks


def run_units(loaded: LoadedModel, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest,
              cache_dir: Path, placement: Placement, on_unit: Callable[[UnitEvent], None] | None = None,
              fingerprint: str | None = None, separate_passes: bool = False,
              refine: bool = False) -> dict[str, RetrievalPass]:
    """Every point of the run by key (the grid's, and with `refine` those its bisection added), from the cache or
    computed by one job per view (points.compute_view) and saved there."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = fingerprint or model_fingerprint(loaded, portable=True)
    tasks = view_tasks(filler, passages, request, cache_dir, fingerprint, separate_passes, refine)
    local = not placement.on_ray or placement.ray_address is None
    jobs = [Job(name=_label(task), method="apply", item=task,
                args=(compute_view, task, str(cache_dir) if local else None)) for task in tasks]
    jobs.sort(key=lambda job: job.item.n_tokens)  # the smallest first, so the first results come soon
    progress = _Progress(jobs, on_unit)

    def finish(job: Job, records: dict, worker: int) -> None:
        for key, record in records.items():
            path = cache_dir / f"{key}.json"
            if not path.is_file():  # a cluster's worker sends it back
                write_atomic(path, json.dumps(record, allow_nan=False))
        progress.finished(job, sum(record["seconds"] for record in records.values()), worker, len(records))

    if jobs:
        with open_pool(WorkerSettings(model=loaded), placement) as pool:
            pool.each(jobs, finish, progress.started, noun="views")
    return {point.key: _cached(cache_dir, point.key) for point in _every_point(filler, passages, request,
                                                                             fingerprint, cache_dir, refine)}


def _every_point(filler, passages, request, fingerprint, cache_dir, refine) -> list[Unit]:
    found = units(filler, passages, request, fingerprint)
    if refine:
        for view in request.views:
            added = refined(filler, passages, request, view, fingerprint, cache_dir)
            found += units(filler, passages, request, fingerprint, distances=added, views=[view])
    return found


class _Progress:
    """Counts the run's points and the tokens its jobs read for on_unit."""

    def __init__(self, jobs: list[Job], on_unit: Callable[[UnitEvent], None] | None):
        self.on_unit, self.done, self.tokens_done = on_unit, 0, 0
        self.total = sum(len(job.item.missing) for job in jobs)
        self.tokens_total = sum(job.item.n_tokens for job in jobs)

    def started(self, job: Job, worker: int) -> None:
        self._tell(job, worker, None)

    def finished(self, job: Job, seconds: float, worker: int, points: int) -> None:
        self.done += points
        self.total += max(0, points - len(job.item.missing))  # the points its bisection added
        self.tokens_done += job.item.n_tokens
        self._tell(job, worker, seconds)

    def _tell(self, job: Job, worker: int, seconds: float | None) -> None:
        if self.on_unit is not None:
            self.on_unit(UnitEvent(label=job.name, worker=worker, done=self.done, total=self.total,
                                   tokens_done=self.tokens_done, tokens_total=self.tokens_total, seconds=seconds))


def _label(task: ViewTask) -> str:
    how = "every text whole" if task.whole else "each text once"
    refine = ", then refining its reach" if task.refine else ""
    return f"{task.view.label}: {len(task.missing)} points, {how}{refine}"


def retrieval(loaded: LoadedModel, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest, *,
              cache_dir: Path, placement: Placement | None = None, on_unit: Callable[[UnitEvent], None] | None = None,
              run: RunInfo | None = None, separate_passes: bool = False, refine: bool = False) -> RetrievalDocument:
    """Check, run (or read from the cache) every point, and assemble the document with its curves and verdict."""
    check_retrieval(loaded, filler, passages, request)
    fingerprint = model_fingerprint(loaded, portable=True)
    found = run_units(loaded, filler, passages, request, cache_dir, placement or Placement(), on_unit, fingerprint,
                      separate_passes, refine)
    every = _every_point(filler, passages, request, fingerprint, cache_dir, refine)
    by_unit = {(u.passage, u.distance, u.view, u.planted): found[u.key] for u in every}
    cells = sorted({(u.distance, u.passage, u.view) for u in every},
                   key=lambda cell: (cell[0], cell[1], request.views.index(cell[2])))
    points = tuple(RetrievalPoint(passage=passages[index].name, distance=distance, view=view,
                                  planted=by_unit[(index, distance, view, True)],
                                  unplanted=by_unit[(index, distance, view, False)])
                   for distance, index, view in cells)
    separate = request.views if separate_passes else separate_views(passages, request)
    return document(loaded, filler, passages, request, points, found, run, tuple(separate))


def document(loaded: LoadedModel, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest,
             points: tuple[RetrievalPoint, ...], found: dict[str, RetrievalPass], run: RunInfo | None,
             separate: tuple[View, ...] = ()) -> RetrievalDocument:
    names = [passage.name for passage in passages]
    curves = tuple(curve(points, view, names) for view in request.views)
    verdict = retrieval_verdict(request.views, curves, REFERENCE, request.trained_length)
    peaks = [p.peak_rss_gb for p in found.values() if p.peak_rss_gb is not None]
    return RetrievalDocument(
        format=DOCUMENT_FORMAT, model=loaded.name, trained_length=request.trained_length,
        beyond_trained=request.beyond_trained, filler_source=filler.source, filler_sha256=filler.sha256,
        filler_tokens=len(filler.ids), lead=request.lead,
        passages=tuple(PassageEntry(name=p.name, source=p.source, sha256=p.sha256, tokens=p.labels)
                       for p in passages),
        distances=request.distances, views=request.views, points=points, curves=curves, verdict=verdict,
        seconds=round(sum(p.seconds for p in found.values()), 1), peak_rss_gb=max(peaks, default=None), run=run,
        separate_views=separate)
