"""A retrieval run: every passage at every distance under every view, planted and not (engine.retrieval), then one
curve per view and the verdict (verdicts.retrieval). By default a view reads each text once: per view one pass over
the filler up to the longest distance, shared by every passage, and per passage one over its planted text, each
distance's repeat read as a continuation of that prefix cut at lead + d (a `SharedJob`). A view whose numbers depend
on the whole text's length (core.retrieval.reads_by_position) reads every text whole, one pass per `Unit`, as
`separate_passes` makes every view do. Either way each point is cached under what it computes (the tokens, the
recipe and the logit multipliers it runs; a continuation computes what the whole pass does), so two views that run
the same multipliers on a text (a schedule that is 1 inside the trained length, and T = 1) share one point, an
interrupted run resumes from the points it has (a shared job reads its prefix only as far as its missing repeats
need) and a rerun computes nothing. Jobs run in this process or on a long run's workers (runs.open_pool).

Cost on p passages, v views and distances d_1 < ... < d_k: separate, 2 p v passes of lead + d_i + passage tokens
for each i; shared, v passes of lead + d_k (the filler) and p v of lead + d_k (the planted texts), then 2 p v k
continuations of one passage's tokens each (their attention against up to lead + d_k keys). bench/RETRIEVAL.md has
the measured ratio."""

from __future__ import annotations

import hashlib
import json
import time
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
from model_utils.core.retrieval import (
    LEAD_TOKENS,
    Layout,
    check_layout,
    planted_ids,
    planted_prefix,
    reads_by_position,
    unplanted_ids,
)
from model_utils.core.views import View
from model_utils.engine.analyze import validate
from model_utils.engine.retrieval import read_once, repeat_pass, retrieval_pass, retrieval_request
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
    repeat: int  # where the repeat starts: the text before it is the prefix a continuation reads


@dataclass(frozen=True, kw_only=True)
class SharedJob:
    """One prefix read once and the repeats read as its continuations: a passage's planted text (its index) or the
    filler alone (None), under a view, up to `tokens` (the latest repeat's start), and the points it computes."""

    passage: int | None
    view: View
    tokens: int
    units: tuple[Unit, ...]

    @property
    def n_tokens(self) -> int:
        """What it reads: the prefix once and each repeat (its text past the prefix's cut)."""
        return self.tokens + sum(unit.n_tokens - unit.repeat for unit in self.units)


@dataclass(frozen=True, kw_only=True)
class UnitEvent:
    """What on_unit hears: a job taken by a worker (seconds None) or finished (its seconds), how many of the
    run's points and of the tokens its jobs read are done (the tokens tell the time left better: a pass costs about
    its length)."""

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
                                      key=unit_key(fingerprint, ids, view, place, request), n_tokens=len(ids),
                                      repeat=place.repeat[0]))
    return found


def compute_pass(loaded: LoadedModel, ids: list[int], view: View, place: Layout, trained_length: int,
                 beyond_trained: bool, path: str | None) -> dict:
    """A worker's job: one pass, written to `path` (the pass cache, where the worker shares the driver's disk) and
    returned as the cache holds it."""
    record = retrieval_pass(loaded, ids, view, place, trained_length, beyond_trained).to_dict()
    if path is not None:
        write_atomic(Path(path), json.dumps(record, allow_nan=False))
    return record


def compute_shared(loaded: LoadedModel, prefix_ids: list[int], view: View,
                   repeats: list[tuple[str, list[int], Layout]], trained_length: int, beyond_trained: bool,
                   folder: str | None) -> dict[str, dict]:
    """A worker's job: one prefix read once, then each repeat (its cache key, its passage, its layout) read as a
    continuation, each point written to `folder` as it finishes (where the worker shares the driver's disk) and all
    returned by key. The prefix's seconds are shared out over the points."""
    started = time.perf_counter()
    longest = max((place for _, _, place in repeats), key=lambda place: place.n_tokens)
    prefix = read_once(loaded, prefix_ids, view, longest, trained_length, beyond_trained)
    share = (time.perf_counter() - started) / len(repeats)
    records = {}
    for key, passage, place in repeats:
        records[key] = repeat_pass(loaded, prefix, passage, place, share).to_dict()
        if folder is not None:
            write_atomic(Path(folder) / f"{key}.json", json.dumps(records[key], allow_nan=False))
    return records


def separate_views(passages: Sequence[Tokens], request: RetrievalRequest) -> list[View]:
    """The views that must read every text whole: their numbers depend on the text's length
    (core.retrieval.reads_by_position over the run's lengths)."""
    lengths = sorted({layout(p, d, request).n_tokens for p in passages for d in request.distances}
                     | {request.lead + d for d in request.distances})
    return [view for view in request.views if not reads_by_position(view, lengths)]


def plan(missing: Sequence[Unit], passages: Sequence[Tokens], request: RetrievalRequest, separate_passes: bool
         ) -> tuple[list[Unit], list[SharedJob]]:
    """The missing points as whole-text passes (a view in separate_views, or every view with `separate_passes`)
    and shared jobs: per view one over the filler (every passage's unplanted points) and one per passage over its
    planted text, each reading its prefix as far as its latest missing repeat."""
    whole = set(request.views if separate_passes else separate_views(passages, request))
    alone = [unit for unit in missing if unit.view in whole]
    groups: dict[tuple, list[Unit]] = {}
    for unit in missing:
        if unit.view not in whole:
            groups.setdefault((unit.view, unit.passage if unit.planted else None), []).append(unit)
    jobs = [SharedJob(passage=passage, view=view, tokens=max(unit.repeat for unit in found), units=tuple(found))
            for (view, passage), found in groups.items()]
    return alone, jobs


def _pass_job(unit: Unit, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest,
              cache_dir: Path, local: bool) -> Job:
    return Job(name=_label(unit, passages), method="apply", item=unit, args=(
        compute_pass, unit_ids(filler, passages[unit.passage], unit.distance, unit.planted, request), unit.view,
        layout(passages[unit.passage], unit.distance, request), request.trained_length, request.beyond_trained,
        str(cache_dir / f"{unit.key}.json") if local else None))


def _shared_job(job: SharedJob, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest,
                cache_dir: Path, local: bool) -> Job:
    prefix = (list(filler.ids[: job.tokens]) if job.passage is None
              else planted_prefix(filler.ids, passages[job.passage].ids, request.lead, job.tokens))
    repeats = [(unit.key, list(passages[unit.passage].ids), layout(passages[unit.passage], unit.distance, request))
               for unit in job.units]
    return Job(name=_shared_label(job, passages), method="apply", item=job, args=(
        compute_shared, prefix, job.view, repeats, request.trained_length, request.beyond_trained,
        str(cache_dir) if local else None))


def run_units(loaded: LoadedModel, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest,
              cache_dir: Path, placement: Placement, on_unit: Callable[[UnitEvent], None] | None = None,
              fingerprint: str | None = None, separate_passes: bool = False) -> dict[str, RetrievalPass]:
    """Every point of the run by key, from the cache or computed (each distinct point once, shared prefixes as
    `plan` groups them) and saved there."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = fingerprint or model_fingerprint(loaded, portable=True)
    distinct = {unit.key: unit for unit in units(filler, passages, request, fingerprint)}
    missing = [unit for key, unit in distinct.items() if not (cache_dir / f"{key}.json").is_file()]
    alone, shared = plan(missing, passages, request, separate_passes)
    local = not placement.on_ray or placement.ray_address is None
    jobs = [_pass_job(unit, filler, passages, request, cache_dir, local) for unit in alone]
    jobs += [_shared_job(job, filler, passages, request, cache_dir, local) for job in shared]
    jobs.sort(key=lambda job: job.item.n_tokens)  # shortest first, so the first results come soon
    progress = _Progress(jobs, len(missing), on_unit)

    def finish(job: Job, record: dict, worker: int) -> None:
        found = record if isinstance(job.item, SharedJob) else {job.item.key: record}
        for key, each in found.items():
            path = cache_dir / f"{key}.json"
            if not path.is_file():  # a cluster's worker sends it back
                write_atomic(path, json.dumps(each, allow_nan=False))
        progress.finished(job, sum(each["seconds"] for each in found.values()), worker, len(found))

    if jobs:
        with open_pool(WorkerSettings(model=loaded), placement) as pool:
            pool.each(jobs, finish, progress.started)
    return {key: RetrievalPass.from_dict(json.loads((cache_dir / f"{key}.json").read_text())) for key in distinct}


class _Progress:
    """Counts the run's points and the tokens its jobs read for on_unit."""

    def __init__(self, jobs: list[Job], points: int, on_unit: Callable[[UnitEvent], None] | None):
        self.on_unit, self.done, self.tokens_done = on_unit, 0, 0
        self.total, self.tokens_total = points, sum(job.item.n_tokens for job in jobs)

    def started(self, job: Job, worker: int) -> None:
        self._tell(job, worker, None)

    def finished(self, job: Job, seconds: float, worker: int, points: int) -> None:
        self.done += points
        self.tokens_done += job.item.n_tokens
        self._tell(job, worker, seconds)

    def _tell(self, job: Job, worker: int, seconds: float | None) -> None:
        if self.on_unit is not None:
            self.on_unit(UnitEvent(label=job.name, worker=worker, done=self.done, total=self.total,
                                   tokens_done=self.tokens_done, tokens_total=self.tokens_total, seconds=seconds))


def _label(unit: Unit, passages: Sequence[Tokens]) -> str:
    state = "planted" if unit.planted else "nothing planted"
    return f"{passages[unit.passage].name} at {unit.distance:,}, {unit.view.label}, {state}"


def _shared_label(job: SharedJob, passages: Sequence[Tokens]) -> str:
    text = "the filler" if job.passage is None else f"{passages[job.passage].name} planted"
    return f"{text} read once to {job.tokens:,} tokens, {job.view.label}, {len(job.units)} repeats after it"


def retrieval(loaded: LoadedModel, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest, *,
              cache_dir: Path, placement: Placement | None = None, on_unit: Callable[[UnitEvent], None] | None = None,
              run: RunInfo | None = None, separate_passes: bool = False) -> RetrievalDocument:
    """Check, run (or read from the cache) every point, and assemble the document with its curves and verdict."""
    check_retrieval(loaded, filler, passages, request)
    fingerprint = model_fingerprint(loaded, portable=True)
    found = run_units(loaded, filler, passages, request, cache_dir, placement or Placement(), on_unit, fingerprint,
                      separate_passes)
    by_unit = {(u.passage, u.distance, u.view, u.planted): found[u.key]
               for u in units(filler, passages, request, fingerprint)}
    points = tuple(RetrievalPoint(passage=passage.name, distance=distance, view=view.label,
                                  planted=by_unit[(index, distance, view, True)],
                                  unplanted=by_unit[(index, distance, view, False)])
                   for distance in request.distances for index, passage in enumerate(passages)
                   for view in request.views)
    separate = request.views if separate_passes else separate_views(passages, request)
    return document(loaded, filler, passages, request, points, found, run, tuple(view.label for view in separate))


def document(loaded: LoadedModel, filler: Tokens, passages: Sequence[Tokens], request: RetrievalRequest,
             points: tuple[RetrievalPoint, ...], found: dict[str, RetrievalPass], run: RunInfo | None,
             separate: tuple[str, ...] = ()) -> RetrievalDocument:
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
        seconds=round(sum(p.seconds for p in found.values()), 1), peak_rss_gb=max(peaks, default=None), run=run,
        separate_views=separate)
