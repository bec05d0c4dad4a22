"""One view's points of a retrieval run, as a worker computes them (experiments.retrieval.run plans the jobs and
assembles the document). A view that reads by position reads each text once, the filler (every passage's unplanted
text) and then each passage's planted text, up to its latest missing repeat, and every repeat as a continuation of
that prefix (engine.retrieval.repeat_pass); a view that cannot reads every text whole. With --refine, distances are
then added inside the bracket of the view's mean curve by bisection (core.reach) until it is narrow: each is only
continuations of the prefixes already read, which the worker keeps (the filler's and every passage's). Every point
is written to the pass cache as it finishes, so a stopped job resumes from the points it has, and `refine_path`
replays the bisection from the cache alone."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from model_utils.core.files import write_atomic
from model_utils.core.reach import ReachOutcome, bracket, midpoint, narrow
from model_utils.core.retrieval import Layout, planted_prefix
from model_utils.core.views import View
from model_utils.engine.retrieval import read_once, repeat_pass, retrieval_pass
from model_utils.engine.step import Prefix
from model_utils.experiments.retrieval.grid import RetrievalRequest, Unit, layout, unit, unit_ids
from model_utils.models import LoadedModel


class MissingPointError(LookupError):
    """A point the pass cache does not hold (refine_path's replay stops at it)."""


@dataclass(frozen=True, kw_only=True)
class ViewTask:
    """One view's job: the texts as token ids, what the run measures, whether the view reads whole texts, whether
    to refine, the model's fingerprint (for the points' keys), the grid's missing points, and the losses of the
    points the driver found in the cache by key (a worker without the driver's disk reads them here)."""

    view: View
    filler: tuple[int, ...]
    passages: tuple[tuple[int, ...], ...]
    request: RetrievalRequest
    whole: bool
    refine: bool
    fingerprint: str
    missing: tuple[Unit, ...]
    known: dict[str, float] = field(default_factory=dict)

    @property
    def n_tokens(self) -> int:
        """About what it reads: each missing point's whole text, or each text's prefix once and every repeat."""
        if self.whole:
            return sum(point.n_tokens for point in self.missing)
        longest = {point.passage if point.planted else None: 0 for point in self.missing}
        for point in self.missing:
            text = point.passage if point.planted else None
            longest[text] = max(longest[text], point.repeat)
        return sum(longest.values()) + sum(point.n_tokens - point.repeat for point in self.missing)


def refine_path(grid: Sequence[int], mean_gain: Callable[[int], float],
                on_bracket: Callable[[tuple[int, int]], None] | None = None) -> list[int]:
    """The distances --refine adds to `grid` for one view: while the bracket of its mean curve is not narrow, its
    midpoint (core.reach). `mean_gain(d)` is the mean gain over the passages at d (MissingPointError where unknown);
    `on_bracket` hears each bracket before its midpoint is measured."""
    gains = {distance: mean_gain(distance) for distance in grid}
    added = []
    while True:
        distances = sorted(gains)
        outcome, between = bracket(distances, [gains[d] for d in distances])
        if outcome is not ReachOutcome.FOUND or narrow(between):
            return added
        if on_bracket is not None:
            on_bracket(between)
        middle = midpoint(between)
        gains[middle] = mean_gain(middle)
        added.append(middle)


class ViewPoints:
    """A worker's points of one view: from the task's known losses, the pass cache (`folder`) or computed, each
    computed one written there at once; the prefixes it has read, by text (None: the filler)."""

    def __init__(self, loaded: LoadedModel, task: ViewTask, folder: Path | None):
        self.loaded, self.task, self.folder = loaded, task, folder
        self.records: dict[str, dict] = {}  # computed by this job
        self.prefixes: dict[int | None, Prefix] = {}
        self.prefix_seconds: dict[int | None, float] = {}  # a prefix's pass, until a point takes it into its own
        self.read_to = 0  # while refining: the repeat of the bracket's far distance, which every midpoint is before

    def loss(self, passage: int, distance: int, planted: bool) -> float:
        task = self.task
        point = unit(task.filler, task.passages, passage, distance, task.view, planted, task.request,
                     task.fingerprint)
        if point.key in task.known:
            return task.known[point.key]
        if point.key not in self.records:
            path = None if self.folder is None else self.folder / f"{point.key}.json"
            if path is not None and path.is_file():
                return json.loads(path.read_text())["loss"]
            self.records[point.key] = self.compute(point)
            if path is not None:
                write_atomic(path, json.dumps(self.records[point.key], allow_nan=False))
        return self.records[point.key]["loss"]

    def compute(self, point: Unit) -> dict:
        task = self.task
        passage = task.passages[point.passage]
        place = layout(passage, point.distance, task.request)
        request = task.request
        if task.whole:
            ids = unit_ids(task.filler, passage, point.distance, point.planted, request)
            return retrieval_pass(self.loaded, ids, task.view, place, request.trained_length,
                                  request.beyond_trained).to_dict()
        text = point.passage if point.planted else None
        prefix = self.prefix(text, max(point.repeat, self.read_to))
        share = self.prefix_seconds.pop(text, 0.0)  # the first point read after a prefix carries its pass
        return repeat_pass(self.loaded, prefix, list(passage), place, share).to_dict()

    def prefix(self, text: int | None, tokens: int) -> Prefix:
        """The prefix of `text` (None: the filler), read to `tokens` unless one at least that long is kept; checked
        as the longest text it serves (its longest passage's repeat right after it)."""
        kept = self.prefixes.get(text)
        if kept is not None and kept.n_tokens >= tokens:
            return kept
        task, request = self.task, self.task.request
        ids = (list(task.filler[:tokens]) if text is None
               else planted_prefix(task.filler, task.passages[text], request.lead, tokens))
        served = task.passages if text is None else [task.passages[text]]
        longest = Layout(lead=request.lead, passage=max(len(p) for p in served), distance=tokens - request.lead)
        started = time.perf_counter()
        self.prefixes[text] = read_once(self.loaded, ids, task.view, longest, request.trained_length,
                                        request.beyond_trained)
        self.prefix_seconds[text] = time.perf_counter() - started
        return self.prefixes[text]

    def grid(self) -> None:
        """The grid's missing points, text by text (the filler first), each text's prefix read to its latest
        missing repeat and let go after its repeats unless the job refines."""
        for text in [None, *range(len(self.task.passages))]:
            mine = [p for p in self.task.missing if (p.passage if p.planted else None) == text]
            if mine and not self.task.whole:
                self.prefix(text, max(p.repeat for p in mine))
            for point in sorted(mine, key=lambda p: (p.distance, p.passage)):
                self.loss(point.passage, point.distance, point.planted)
            if not self.task.refine:
                self.prefixes.pop(text, None)

    def bracketed(self, between: tuple[int, int]) -> None:
        self.read_to = self.task.request.lead + between[1]

    def mean_gain(self, distance: int) -> float:
        count = len(self.task.passages)
        return sum(self.loss(i, distance, False) - self.loss(i, distance, True) for i in range(count)) / count


def compute_view(loaded: LoadedModel, task: ViewTask, folder: str | None) -> dict[str, dict]:
    """A worker's job: one view's missing grid points, then with task.refine its bisection, every point computed
    written to `folder` (where the worker shares the driver's disk) and all returned by key."""
    points = ViewPoints(loaded, task, None if folder is None else Path(folder))
    points.grid()
    if task.refine:
        grid = task.request.distances_for(task.view, max(len(passage) for passage in task.passages))
        refine_path(grid, points.mean_gain, points.bracketed)
    return points.records
