"""The context-length sweep: loss and attention by query position on one long text, one in-model pass per view (a
temperature or schedule, on the model's own positions or on a RoPE recipe; each pass cached as it finishes, so a
sweep resumes), and the best constant temperature per position bucket with a bootstrap interval, on the plain
model and on each recipe, and the verdict (verdicts.context), computed once here. `sweep_document` is the record
(core.records.sweep) the command line writes and the page reads; the pass cache holds each pass as
SweepPass.to_dict() writes it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from model_utils.core.bootstrap import (
    BOOTSTRAP_BLOCK,
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    best_temperature,
    block_bootstrap,
)
from model_utils.core.errors import AnalysisError
from model_utils.core.files import write_atomic
from model_utils.core.machine import peak_rss_gb
from model_utils.core.paths import cache_root
from model_utils.core.progress import OnProgress
from model_utils.core.records.cut_context import CutContextPass
from model_utils.core.records.spread import SpreadMethod
from model_utils.core.records.sweep import (
    BestEntry,
    Bootstrap,
    Multipliers,
    SweepDocument,
    SweepPass,
    SweepResult,
    applied_fields,
    read_pass,
)
from model_utils.core.report import Report
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.statistics import REPORTED_STATISTICS
from model_utils.core.views import View, as_view, reference_index
from model_utils.engine.analyze import AnalysisRequest, CheckedRequest, analyze, check_length, tokenize, validate
from model_utils.experiments.cut_context import CutSettings, cut_context_pass
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.texts import text_digest
from model_utils.models import LoadedModel
from model_utils.verdicts.context import sweep_verdict
from model_utils.verdicts.rise import one_text_rise

FORMAT = 4  # bump when a cached pass would come out different (4: the untrained mass and the RoPE recipe)
# A pass cached before the distance remappings lacks effective_untrained_mass: it remapped nothing, so its effective
# untrained mass is its untrained mass, and FORMAT stays (the remapped passes are new labels, never cached before).
Spec = float | Schedule | View  # what a sweep runs: a temperature or schedule on the plain model, or a View


@dataclass(frozen=True, kw_only=True)
class SweepSettings:
    """What every pass of a sweep shares besides its temperature (part of each pass's cache key)."""

    max_tokens: int
    bucket_size: int
    q_start: int = 1
    window: int = 32
    trained_length: int | None = None
    beyond_trained: bool = False


def pass_request(spec: Spec, settings: SweepSettings) -> AnalysisRequest:
    """One pass of a sweep: an in-model analysis of one view, per bucket of positions."""
    return AnalysisRequest(temperatures=[spec], mode="in-model", window=settings.window,
                           max_tokens=settings.max_tokens, bucket_size=settings.bucket_size, q_start=settings.q_start,
                           trained_length=settings.trained_length, beyond_trained=settings.beyond_trained)


def pass_key(fingerprint: str, text: str, spec: Spec, settings: SweepSettings) -> str:
    """What a pass computes: the model, the text, the view (its canonical JSON) and the settings."""
    return _key(fingerprint, text, as_view(spec).canonical(), settings)


def _key(fingerprint: str, text: str, view: str, settings: SweepSettings) -> str:
    parts = [str(FORMAT), fingerprint, text_digest(text), view, repr(settings)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def pass_path(folder: Path, fingerprint: str, text: str, spec: Spec, settings: SweepSettings) -> Path:
    """Where the pass of `spec` is cached in `folder`. A pass cached under its view's label (keys before they hashed
    the view's canonical JSON; the label rounds to 6 digits) is moved to its key first, so older caches, the
    committed ones among them, are found whole."""
    path = folder / f"{pass_key(fingerprint, text, spec, settings)}.json"
    older = folder / f"{_key(fingerprint, text, as_view(spec).label, settings)}.json"
    if not path.is_file() and older.is_file():
        with contextlib.suppress(FileNotFoundError):  # another worker moved it first
            older.replace(path)
    return path


def pass_record(report: Report) -> SweepPass:
    """What one pass contributes to a sweep, rounded as the pass cache stores it."""
    result = report.results[0]
    return SweepPass(
        result=SweepResult(
            view=result.view, **applied_fields(result.applied_rope), loss=result.loss,
            nll=tuple(None if math.isnan(v) else float(v) for v in result.bucket_nll),
            heads={name: np.round(result.bucket_heads[name], 5) for name in REPORTED_STATISTICS},
            distance_profile=np.round(result.distance_profile.mean(axis=1), 6),  # [bucket, bin]
            distance_profile_layers=np.round(result.distance_profile, 6),  # [bucket, layer, bin]
            distance_bins=tuple(int(edge) for edge in report.distance_edges), seconds=report.seconds,
            kernel=report.kernel, peak_rss_gb=peak_rss_gb(), multipliers=None),  # peak memory so far
        n_tokens=report.n_tokens, trained_length=report.trained_length, q_start=report.q_start,
        buckets=tuple(tuple(bounds) for bounds in report.buckets),
        position_nll=np.array([round(float(v), 5) for v in result.position_nll], dtype=np.float64))


def run_passes(loaded: LoadedModel, text: str, specs: Sequence[Spec], settings: SweepSettings,
               cache_dir: Path | None = None, on_start: Callable[[str, int], None] | None = None,
               progress: OnProgress | None = None, fingerprint: str | None = None) -> list[SweepPass]:
    """One pass record per spec, from the cache where present, else computed and saved at once (both read back
    from the cache's JSON form, so a pass is the same numbers whether computed now or found). `fingerprint` is
    model_fingerprint(loaded, portable=True), for a caller that runs many texts on one model and has it already:
    the key leaves out the folder the model was loaded from, so that passes committed or copied from another
    machine are found wherever its model cache is."""
    folder = (cache_dir or cache_root() / "sweeps")
    folder.mkdir(parents=True, exist_ok=True)
    fingerprint = fingerprint or model_fingerprint(loaded, portable=True)
    records = []
    for index, spec in enumerate(specs):
        path = pass_path(folder, fingerprint, text, spec, settings)
        if path.is_file():
            records.append(read_pass(json.loads(path.read_text()), as_view(spec)))
            continue
        if on_start is not None:
            on_start(as_view(spec).label, index)
        report = analyze(loaded, text, pass_request(spec, settings), progress=progress)
        record = pass_record(report).to_dict()
        write_atomic(path, json.dumps(record, allow_nan=False))  # a pass is in the cache whole or not at all
        records.append(read_pass(record, as_view(spec)))
    return records


def check_sweep(loaded: LoadedModel, text: str, specs: Sequence, settings: SweepSettings) -> int:
    """Refuse a sweep before any pass, as its first pass would refuse it (a bad bucket size, a text past the
    trained length without beyond_trained, ...), and without a T = 1 to compare with. Returns the number of
    tokens the passes will run on (the text cut to max_tokens)."""
    return check_text(loaded, text, check_specs(loaded, specs, settings), settings)


def check_specs(loaded: LoadedModel, specs: Sequence, settings: SweepSettings) -> CheckedRequest:
    """The checks of a sweep that do not depend on the text: T = 1 on the plain model present, nothing twice, every
    view and setting as analyze accepts them. Returns the checked request of the plain T = 1 (the settings are the
    same for all)."""
    views = [as_view(spec) for spec in specs]
    if reference_index(views) is None:
        raise AnalysisError("a sweep compares every temperature with T = 1: include 1 in the temperatures")
    labels = [view.label for view in views]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise AnalysisError(f"{', '.join(twice)} listed twice; list each temperature or schedule once")
    checked = [validate(loaded, pass_request(spec, settings)) for spec in specs]  # analyze's checks, pass by pass
    return checked[reference_index(views)]  # the plain T = 1's: a recipe's pass may run past the trained length


def check_text(loaded: LoadedModel, text: str, request: CheckedRequest, settings: SweepSettings) -> int:
    """The checks of a sweep's text (not empty, two tokens or more, within the trained length unless allowed, longer
    than q_start); returns the number of tokens the passes will run on."""
    ids, _ = tokenize(loaded, text, request.max_tokens)
    check_length(loaded, len(ids), request)
    if settings.q_start > len(ids) - 1:
        raise AnalysisError(f"q_start must be below the number of tokens ({len(ids)}), got {settings.q_start}")
    return len(ids)


def best_per_bucket(passes: Sequence[SweepPass], buckets: Sequence[Sequence[int]], seed: int = 0,
                    rope: Rope | None = None) -> tuple[BestEntry, ...]:
    """Per bucket: the constant temperature with the lowest mean NLL, its NLL, the NLL at T = 1, what it saves,
    and 95% moving-block bootstrap intervals of the best temperature and of the saving; among the passes on the
    plain model, or on the recipe `rope` (whose T = 1 is then the reference)."""
    constant = [p for p in passes if p.result.temperature is not None and p.result.rope == rope]
    temperatures = np.array([p.result.temperature for p in constant])
    reference = reference_index([p.result for p in constant], rope)
    nll = np.array([p.position_nll for p in constant])  # [temperatures, n - 1]
    rng = np.random.default_rng(seed)
    best = []
    for start, stop in buckets:
        values = nll[:, start : min(stop, nll.shape[1])]
        if values.shape[1] == 0:
            continue
        samples = block_bootstrap(values, rng)  # [resamples, temperatures]
        found = best_temperature(temperatures, values.mean(axis=1), samples, reference)
        best.append(BestEntry(bucket=(start, stop), **found | {name: tuple(found[name]) for name in (
            "temperature_interval", "saved_interval")}, positions=int(values.shape[1])))
    return tuple(best)


def best_by_recipe(passes: Sequence[SweepPass], buckets: Sequence[Sequence[int]]) -> dict[Rope, tuple[BestEntry, ...]]:
    """best_per_bucket on every recipe that ran T = 1 and at least one other constant temperature."""
    grids: dict[Rope, set[float]] = {}
    for result in (p.result for p in passes):
        if result.temperature is not None and result.rope is not None:
            grids.setdefault(result.rope, set()).add(result.temperature)
    return {rope: best_per_bucket(passes, buckets, rope=rope) for rope, grid in grids.items()
            if 1.0 in grid and len(grid) > 1}


def region_nll(passed: SweepPass, trained_length: int) -> dict:
    """A pass's next-token NLL summed over the query positions inside the trained context (p < L) and past it
    (p >= L), with their counts: what the fitter's objective and held-out scores pool over documents."""
    before, past = passed.position_nll[:trained_length], passed.position_nll[trained_length:]
    return {"spec": passed.result.label, "before_sum": float(before.sum()), "before_count": len(before),
            "past_sum": float(past.sum()), "past_count": len(past), "seconds": passed.result.seconds}


def multipliers(spec: Spec, n_tokens: int, trained_length: int, q_start: int) -> Multipliers:
    """Smallest and largest logit multiplier of a view's temperature or schedule over the measured queries inside
    the trained context and past it (None where the text has no such query). A recipe's own attention factor (YaRN)
    is in its result's attention_factor, not here."""
    values = as_view(spec).multipliers(n_tokens)

    def span(part: np.ndarray) -> tuple[float, float] | None:
        return (round(float(part.min()), 6), round(float(part.max()), 6)) if len(part) else None

    return Multipliers(trained_context=span(values[q_start:trained_length]), past=span(values[trained_length:]))


BOOTSTRAP = Bootstrap(resamples=BOOTSTRAP_RESAMPLES, block=BOOTSTRAP_BLOCK, confidence=CONFIDENCE,
                      method=SpreadMethod.BLOCK_BOOTSTRAP)


def sweep_document(loaded: LoadedModel, passes: Sequence[SweepPass], specs: Sequence[Spec],
                   settings: SweepSettings, text: str, source: str,
                   cut: CutContextPass | None = None, name: str | None = None) -> SweepDocument:
    """The sweep's record: settings, one result per temperature or schedule (with its multiplier range inside and
    past the trained length), the best temperature per bucket on the plain model and on each recipe, and the
    context-length verdict's numbers (verdicts.context; None when the text does not reach past the trained
    length), which need the passes' per-position NLL that the document leaves out; with `cut` (the cut-context
    reference of the same text), the rise on the same tokens too; `name` says what the text is (by default its
    source)."""
    first = passes[0]
    n_tokens, trained, q_start = first.n_tokens, first.trained_length, first.q_start
    results = tuple(replace(p.result, multipliers=multipliers(spec, n_tokens, trained, q_start))
                    for p, spec in zip(passes, specs, strict=True))
    best, spans = best_per_bucket(passes, first.buckets), tuple(loaded.sliding_windows())
    position_nll = {p.result.view: p.position_nll for p in passes}
    same = None if cut is None else one_text_rise(
        np.asarray(position_nll[results[reference_index(results)].view][trained:]), cut)
    verdict = sweep_verdict(results=results, buckets=first.buckets, n_tokens=n_tokens, trained_length=trained,
                            best=best, layer_spans=spans, position_nll=position_nll, same_token_rise=same)
    return SweepDocument(
        model=loaded.name, model_facts=loaded.facts(), text_name=name or source, text_source=source,
        text_sha256=text_digest(text),
        n_tokens=n_tokens, trained_length=trained, beyond_trained=settings.beyond_trained,
        bucket_size=settings.bucket_size, q_start=q_start, window=settings.window, buckets=first.buckets,
        distance_bins=first.result.distance_bins, results=results, best=best,
        best_by_rope=best_by_recipe(passes, first.buckets), bootstrap=BOOTSTRAP,
        seconds=sum(p.result.seconds for p in passes),  # compute time, cached or not
        peak_rss_gb=max(p.result.peak_rss_gb for p in passes), kernel=_path(passes), verdict=verdict,
        layer_windows=spans, cut_context=cut)


def sweep(loaded: LoadedModel, text: str, specs: Sequence[Spec], settings: SweepSettings,
          source: str = "text", cache_dir: Path | None = None,
          on_start: Callable[[str, int], None] | None = None,
          progress: OnProgress | None = None, cut: CutSettings | None = None,
          name: str | None = None) -> SweepDocument:
    """Check, run (or read from the cache) every pass, and assemble the sweep document; with `cut`, also the
    cut-context reference of a text that runs past the trained length (experiments.cut_context)."""
    n_tokens = check_sweep(loaded, text, specs, settings)
    passes = run_passes(loaded, text, specs, settings, cache_dir, on_start, progress)
    return sweep_document(loaded, passes, specs, settings, text, source,
                          cut_reference(loaded, text, n_tokens, settings, cut), name)


def cut_reference(loaded: LoadedModel, text: str, n_tokens: int, settings: SweepSettings,
                  cut: CutSettings | None) -> CutContextPass | None:
    """The cut-context reference of the sweep's text (its windows from `cut.folder` where they are), None without
    `cut` or a position past the trained length."""
    trained = settings.trained_length or loaded.max_positions
    if cut is None or n_tokens <= trained + 1:
        return None
    ids, _ = tokenize(loaded, text, settings.max_tokens)
    return cut_context_pass(loaded, ids, trained, cut.stride_for(trained), cut.folder)


def _path(passes) -> str:
    """Which path the sweep ran: "fused" when every pass ran the fused kernel, else "torch" (as a report says it;
    a distance remapping always runs the torch path), each pass's own in its result."""
    return "fused" if all(p.result.kernel == "fused" for p in passes) else "torch"
