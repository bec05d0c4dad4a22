"""`fit`: the temperature that minimizes the next-token NLL past the trained length, for one model, corpus, RoPE
recipe and family, found by scipy's bounded scalar minimization (Brent's method) on the training documents of each
fold and scored on that fold's held-out documents, against the model as trained, the recipe's own default and the
published schedules. Every evaluation is in-model passes (the sweep's, cached) run in this process or on Ray
workers (runs.open_pool, as the tuner's); its rows are written as it finishes, so a rerun replays the search
without recomputing."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from model_utils.core.errors import AnalysisError
from model_utils.core.progress import EVALUATION, OnProgress, Progress, report_progress
from model_utils.core.records.fit import Evaluation, FitSummary, Fold, Reused
from model_utils.core.rope import RECIPES, REMAPS, Rope
from model_utils.core.schedules import PositionSchedule
from model_utils.core.views import View, as_view
from model_utils.experiments.corpus import Corpus, Document
from model_utils.experiments.fit.families import Family
from model_utils.experiments.fit.reuse import TuneRows, check_reuse, reused_rows
from model_utils.experiments.fit.store import Store
from model_utils.experiments.runs.pool import Placement, Pool, open_pool
from model_utils.experiments.runs.worker import WorkerSettings
from model_utils.experiments.sweep import SweepSettings, check_specs, check_text
from model_utils.models import LoadedModel

FORMAT = 1  # of the rows' metadata (fit.json's is core.records.fit.FORMAT)
FIT = "fit.json"


@dataclass(frozen=True, kw_only=True)
class FitRequest:
    """What to fit: the family, on which recipe (None: the model's own positions), over how many folds, within which
    bounds and to which tolerance; what it is compared with on the held-out documents (the published schedules
    resolved for these documents, and a grid of constant temperatures on the plain model)."""

    family: Family
    rope: Rope | None
    folds: int = 2
    bounds: tuple[float, float] | None = None  # None: the family's
    tolerance: float | None = None
    max_evaluations: int = 20
    schedules: tuple[PositionSchedule, ...] = ()
    grid: tuple[float, ...] = (0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0)

    @property
    def search(self) -> tuple[float, float]:
        return self.bounds or self.family.bounds

    @property
    def xatol(self) -> float:
        return self.tolerance or self.family.tolerance

    def view(self, value: float, trained_length: int) -> View:
        return View(self.family.spec(round(float(value), 5), trained_length), self.rope)

    def recipe_default(self) -> View | None:
        """The recipe as published: YaRN with its own attention factor for yarn-rope, else the recipe at T = 1."""
        if self.rope is None:
            return None
        return View(1.0, Rope("yarn", self.rope.factor) if self.rope.kind == "yarn-rope" else self.rope)


def folds_of(documents: list[Document], folds: int) -> list[tuple[list[Document], list[Document]]]:
    """(training, held-out) documents of each fold: document i is held out in fold i % folds."""
    return [([d for i, d in enumerate(documents) if i % folds != k], [d for i, d in enumerate(documents)
                                                                        if i % folds == k]) for k in range(folds)]


@dataclass(kw_only=True)
class Fitter:
    """One run of the fit: the pool, the store, the settings, and how to report progress."""

    request: FitRequest
    pool: Pool
    store: Store
    trained_length: int
    progress: OnProgress | None = None

    def results(self, stage: str, documents: list[Document], views: list[View], fold: int = -1,
                evaluation: int = -1, parameter: float = math.nan) -> dict[tuple[str, str], dict]:
        """(document, label) -> region sums, from the store where it has them, else computed and stored."""
        missing = [(document, [view for view in views if self.store.get(document.sha256, view.label) is None])
                   for document in documents]
        missing = [(document, wanted) for document, wanted in missing if wanted]
        for (document, _), computed in zip(missing, self.pool.evaluate(missing), strict=True):
            for record in computed:
                self.store.found[(document.sha256, record["spec"])] = _row(stage, fold, evaluation, parameter,
                                                                           document, record)
        rows = {(d.sha256, v.label): self.store.get(d.sha256, v.label) for d in documents for v in views}
        self.store.write(stage, [_row(stage, fold, evaluation, parameter, next(d for d in documents
                                                                             if d.sha256 == sha), row)
                                 for (sha, _), row in rows.items()])
        return rows

    def reuse(self, tune: TuneRows, documents: list[Document], views: list[View]) -> Reused:
        """T = 1 computed on every document, then the other comparisons the tune holds read from its rows into the
        store (reuse.reused_rows); what was reused."""
        plain = View(1.0)
        own = self.results("compare-plain", documents, [plain])
        rows, largest = reused_rows(tune, {sha: row for (sha, _), row in own.items()}, documents, views)
        if rows:
            self.store.write("compare-reused", [_row("compare-reused", -1, -1, math.nan, document, record)
                                                for document, record in rows])
        return Reused(source=tune.source, reused=len(rows), comparisons=len(documents) * len(views), largest=largest)

    def search(self, fold: int, training: list[Document], held_out: list[Document]) -> Fold:
        """Brent's bounded minimization of the pooled past-region NLL over `training`; every evaluation recorded."""
        from scipy.optimize import minimize_scalar

        evaluations: list[Evaluation] = []
        started = time.perf_counter()

        def objective(value: float) -> float:
            value = round(float(value), 5)
            view = self.request.view(value, self.trained_length)
            index = len(evaluations) + 1
            rows = self.results(f"fold{fold}-e{index:03d}", training, [view], fold, index, value)
            nll = _pooled([rows[(d.sha256, view.label)] for d in training])
            evaluations.append(Evaluation(evaluation=index, parameter=value, nll_past=nll))
            self._report(fold, evaluations, started)
            return nll

        low, high = self.request.search
        found = minimize_scalar(objective, bounds=(low, high), method="bounded",
                                options={"xatol": self.request.xatol, "maxiter": self.request.max_evaluations})
        best = min(evaluations, key=lambda entry: entry.nll_past)
        # Brent's method cannot leave the bounds: a minimum found at one of them may lie beyond it
        at_bound = min(abs(best.parameter - low), abs(best.parameter - high)) <= 2 * self.request.xatol
        return Fold(fold=fold, training=tuple(d.sha256 for d in training), parameter=best.parameter,
                    nll_past=best.nll_past, converged=bool(found.success), at_bound=at_bound,
                    evaluations=tuple(evaluations), held_out=tuple(d.sha256 for d in held_out),
                    view=self.request.view(best.parameter, self.trained_length))

    def _report(self, fold: int, evaluations: list[Evaluation], started: float) -> None:
        """An EVALUATION event: evaluation i of at most `max_evaluations` in this fold, its value and the best."""
        best = min(evaluations, key=lambda entry: entry.nll_past)
        done, most, folds = len(evaluations), self.request.max_evaluations, self.request.folds
        each = (time.perf_counter() - started) / done
        knob = self.request.family.knob
        detail = (f"{knob} = {evaluations[-1].parameter:.4f} ({evaluations[-1].nll_past:.4f} nats), best so "
                  f"far {knob} = {best.parameter:.4f} ({best.nll_past:.4f})")
        event = Progress(stage=EVALUATION, fraction=(fold + min(1.0, done / most)) / folds, step=done, steps=most,
                         part=fold + 1, parts=folds, seconds_left=each * max(0, most - done), detail=detail)
        report_progress(self.progress, event)


def _row(stage, fold, evaluation, parameter, document: Document, record: dict) -> dict:
    return {"stage": stage, "fold": fold, "evaluation": evaluation, "parameter": parameter,
            "document": document.sha256, "name": document.name, "spec": record["spec"],
            "before_sum": record["before_sum"], "before_count": record["before_count"],
            "past_sum": record["past_sum"], "past_count": record["past_count"], "seconds": record["seconds"]}


def _pooled(rows: Sequence[dict]) -> float:
    return sum(row["past_sum"] for row in rows) / sum(row["past_count"] for row in rows)


def check_fit(loaded: LoadedModel, corpus: Corpus, request: FitRequest, settings: SweepSettings) -> list[int]:
    """Refuse a fit before any work, naming what to change; the documents' token counts."""
    if not corpus.documents:
        raise AnalysisError("the corpus holds no documents")
    if not 2 <= request.folds <= len(corpus.documents):
        raise AnalysisError(f"--folds must be between 2 and the number of documents ({len(corpus.documents)}), got "
                            f"{request.folds}: each fold holds out at least one document")
    low, high = request.search
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise AnalysisError(f"--bounds must be two finite numbers, the lower first; got {low:g} {high:g}")
    if request.rope is not None and request.rope.kind not in {**RECIPES, **REMAPS}:
        raise AnalysisError(f"unknown RoPE recipe {request.rope.kind!r}")
    trained = settings.trained_length or loaded.max_positions
    edges = [request.view(low, trained), request.view(high, trained)]
    specs = [View(1.0), *edges, *([request.recipe_default()] if request.rope is not None else [])]
    checked = check_specs(loaded, specs, settings)  # the recipe on this model, the temperatures, the settings
    tokens = []
    for document in corpus.documents:
        try:
            count = check_text(loaded, document.text, checked, settings)
        except AnalysisError as error:
            raise AnalysisError(f"{document.name}: {error}") from None
        if count <= trained:
            raise AnalysisError(f"{document.name} has {count:,} tokens, not more than the trained length of "
                                f"{trained:,}: a fit past the trained length needs documents longer than it")
        for view in edges:  # a family's bound may leave the temperatures the engine takes (log-length T)
            try:
                view.multipliers(count)
            except AnalysisError as error:
                raise AnalysisError(f"--bounds: {error}") from None
        tokens.append(count)
    return tokens


def fit(loaded: LoadedModel, corpus: Corpus, request: FitRequest, settings: SweepSettings, out, *, workers: int = 1,
        ray_address: str | None = None, threads: int | None = None, cache_dir=None,
        progress: OnProgress | None = None, reuse: TuneRows | None = None) -> FitSummary:
    """Fit, fold by fold, then score on the held-out documents (see the module docstring); returns fit.json's
    content (summary.fit_summary). With `reuse`, the comparisons a tune's rows hold are read from them (fit/reuse.py).
    Raises AnalysisError or RunUsageError before any work."""
    from model_utils.core.paths import cache_root
    from model_utils.experiments.fingerprint import model_fingerprint
    from model_utils.experiments.fit.summary import fit_summary

    started = time.perf_counter()
    tokens = check_fit(loaded, corpus, request, settings)
    trained = settings.trained_length or loaded.max_positions
    fingerprint = model_fingerprint(loaded)
    if reuse is not None:
        check_reuse(reuse, fingerprint, settings)
    metadata = {"format": FORMAT, "model": loaded.name, "model_fingerprint": fingerprint,
                "family": request.family.name, "rope": None if request.rope is None else request.rope.label,
                "folds": request.folds, "bounds": list(request.search), "tolerance": request.xatol,
                "max_evaluations": request.max_evaluations, "documents": [d.sha256 for d in corpus.documents],
                **asdict(settings)}
    store = Store(out=out, metadata=metadata)
    work = WorkerSettings(model=loaded, sweep=settings, pass_dir=Path(cache_dir or cache_root() / "sweeps"),
                          keep_passes=True)
    with open_pool(work, Placement(workers=workers, ray_address=ray_address, threads=threads)) as pool:
        fitter = Fitter(request=request, pool=pool, store=store, trained_length=trained, progress=progress)
        folds = []
        for fold, (training, held_out) in enumerate(folds_of(corpus.documents, request.folds)):
            found = fitter.search(fold, training, held_out)
            fitter.results(f"fold{fold}-held-out", held_out, [request.view(found.parameter, trained)], fold, 0,
                           found.parameter)
            folds.append(found)
        compared = comparison_views(request, trained)
        compared_from = None if reuse is None else fitter.reuse(reuse, corpus.documents, compared)
        fitter.results("compare", corpus.documents, compared)
    return replace(fit_summary(loaded, corpus, tokens, request, settings, store, folds, compared, trained),
                   wall_seconds=round(time.perf_counter() - started, 1), workers=workers, ray_address=ray_address,
                   compared_from=compared_from)


def comparison_views(request: FitRequest, trained_length: int) -> list[View]:
    """What the fitted value is scored against: T = 1 on the model's own positions, the recipe at T = 1 and as
    published, the published schedules, and the constant grid on the plain model."""
    views = [View(1.0)]
    if request.rope is not None:
        views += [View(1.0, request.rope), request.recipe_default()]
    views += [View(schedule) for schedule in request.schedules]
    views += [View(float(t)) for t in request.grid if t != 1.0]
    return list(dict.fromkeys(as_view(view) for view in views))
