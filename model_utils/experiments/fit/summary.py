"""fit.json, as a FitSummary record: the fitted parameter over every document with its bootstrap interval over
documents (fit/spread.py), the value per fold, every evaluation, and the held-out
gains past the trained length (each document scored with the value fitted without it) against the model as
trained, the recipe's own default, the best published schedule and the best constant temperature (both chosen on
the training documents), with bootstrap intervals over the held-out documents; for a constant temperature on a
recipe, the logit multiplier set against YaRN's published law."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model_utils.core.bootstrap import BOOTSTRAP_RESAMPLES, CONFIDENCE, interval
from model_utils.core.records.base import DocumentEntry
from model_utils.core.records.fit import (
    Choice,
    FitBootstrap,
    FitSettings,
    FitSummary,
    Fold,
    Gain,
    HeldOut,
    HeldOutMethod,
    IntervalMethod,
    Multiplier,
    Optimizer,
)
from model_utils.core.schedules import yarn_multiplier
from model_utils.core.views import View
from model_utils.experiments.corpus import Corpus
from model_utils.experiments.fit.spread import WINDOW, document_curves, spread
from model_utils.experiments.fit.store import Store
from model_utils.experiments.sweep import SweepSettings
from model_utils.models import LoadedModel

SEED = 0


def _sums(store: Store, documents: Sequence[str], label: str) -> np.ndarray:
    """[document, 4]: past sum, past count, before sum, before count of `label` on each document."""
    rows = [store.get(sha, label) for sha in documents]
    return np.array([[row["past_sum"], row["past_count"], row["before_sum"], row["before_count"]] for row in rows])


def _pooled_past(sums: np.ndarray) -> float:
    """Mean NLL per token past the trained length, pooled over the documents of _sums."""
    return float(sums[:, 0].sum() / sums[:, 1].sum())


def _best_on(store: Store, documents: Sequence[str], views: Sequence[View]) -> View | None:
    """The view with the lowest pooled past NLL on `documents`."""
    if not views:
        return None
    return min(views, key=lambda view: _pooled_past(_sums(store, documents, view.label)))


def _gain(reference: np.ndarray, fitted: np.ndarray, rng: np.random.Generator) -> Gain:
    """NLL saved past the trained length (reference minus fitted, pooled per token; positive = better) with a
    bootstrap interval over the held-out documents (rows of the [document, 4] arrays)."""
    saved = (reference[:, 0].sum() - fitted[:, 0].sum()) / fitted[:, 1].sum()
    draws = rng.integers(0, len(fitted), size=(BOOTSTRAP_RESAMPLES, len(fitted)))
    samples = (reference[draws, 0].sum(axis=1) - fitted[draws, 0].sum(axis=1)) / fitted[draws, 1].sum(axis=1)
    return Gain(saved=float(saved), interval=tuple(interval(samples)))


def fit_summary(loaded: LoadedModel, corpus: Corpus, tokens: list[int], request, settings: SweepSettings,
                store: Store, folds: list[Fold], compared: list[View], trained_length: int) -> FitSummary:
    rng = np.random.default_rng(SEED)
    schedules = [view for view in compared if view.schedule is not None]
    grid = [view for view in compared if view.is_plain]
    choices, references = [], {"plain": [], "recipe": [], "recipe_at_1": [], "best_schedule": [],
                               "best_constant": []}
    fitted_rows = []
    for fold in folds:
        fitted_rows.append(_sums(store, fold.held_out, fold.view.label))
        chosen = {"plain": View(1.0), "best_schedule": _best_on(store, fold.training, schedules),
                  "best_constant": _best_on(store, fold.training, grid)}
        if request.rope is not None:
            chosen |= {"recipe": request.recipe_default(), "recipe_at_1": View(1.0, request.rope)}
        for name, view in chosen.items():
            if view is not None:
                references[name].append(_sums(store, fold.held_out, view.label))
        choices.append(Choice(fold=fold.fold, documents=fold.held_out, parameter=fold.parameter,
                              best_schedule=chosen["best_schedule"], best_constant=chosen["best_constant"]))
    fitted = np.concatenate(fitted_rows)
    plain = np.concatenate(references["plain"])
    fitted_value = _spread(store, folds, request, trained_length, rng)
    held_out = HeldOut(
        gains={name: _gain(np.concatenate(rows), fitted, rng) for name, rows in references.items() if rows},
        nll_past_plain=_pooled_past(plain), nll_past_fitted=_pooled_past(fitted),
        in_context_change=float((fitted[:, 2].sum() - plain[:, 2].sum()) / fitted[:, 3].sum()),
        choices=tuple(choices),
        method=HeldOutMethod.CROSS_FIT)
    return FitSummary(
        model=loaded.name, rope=request.rope, family=request.family.name,
        knob=request.family.knob, parameter=fitted_value.parameter, interval=fitted_value.interval,
        interval_method=IntervalMethod.CURVE_BOOTSTRAP,
        bootstrap=FitBootstrap(resamples=BOOTSTRAP_RESAMPLES, confidence=CONFIDENCE, seed=SEED, window=WINDOW),
        at_bound=any(fold.at_bound for fold in folds),  # the minimum may lie beyond the searched interval
        trained_length=trained_length, bounds=tuple(request.search), tolerance=request.xatol,
        optimizer=Optimizer.BOUNDED_BRENT,
        folds=tuple(folds), evaluations=sum(len(fold.evaluations) for fold in folds), held_out=held_out,
        documents=tuple(DocumentEntry(name=d.name, sha256=d.sha256, n_tokens=n, domain=d.domain)
                        for d, n in zip(corpus.documents, tokens, strict=True)),
        corpus=corpus.source, settings=FitSettings(max_tokens=settings.max_tokens, bucket_size=settings.bucket_size,
                                                   window=settings.window, q_start=settings.q_start),
        multiplier=_multiplier(request, fitted_value.parameter, fitted_value.interval),
        compared_temperatures=tuple(sorted(view.temperature for view in grid)))


def _spread(store: Store, folds: list[Fold], request, trained_length: int, rng: np.random.Generator):
    """The value over every document and its interval over documents, from the folds' evaluations (no pass)."""
    def nll(document: str, value: float) -> tuple[float, int]:
        row = store.get(document, request.view(value, trained_length).label)
        return row["past_sum"] / row["past_count"], row["past_count"]

    return spread(document_curves(folds, nll), request.search, rng)


def _multiplier(request, value: float, bounds: tuple[float, float]) -> Multiplier | None:
    """A constant temperature's logit multiplier 1 / T and its interval, against YaRN's law on yarn-rope."""
    if request.family.name != "constant":
        return None
    law = request.rope is not None and request.rope.kind == "yarn-rope"
    return Multiplier(fitted=1.0 / value, interval=(1.0 / bounds[1], 1.0 / bounds[0]),
                      yarn_law=float(yarn_multiplier(request.rope.factor)) if law else None,
                      scale=request.rope.factor if law else None)
