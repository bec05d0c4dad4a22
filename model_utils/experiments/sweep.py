"""The context-length sweep: loss and attention by query position on one long text, one in-model pass per view (a
temperature or schedule, on the model's own positions or on a RoPE recipe; each pass cached as it finishes, so a
sweep resumes), and the best constant temperature per position bucket with a bootstrap interval, on the plain
model and on each recipe. `sweep_document` is the JSON the command line writes and the page reads."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
from model_utils.core.report import Report
from model_utils.core.schedules import Schedule
from model_utils.core.statistics import STATISTICS
from model_utils.core.views import View, as_view
from model_utils.engine.analyze import AnalysisRequest, CheckedRequest, analyze, check_length, tokenize, validate
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.texts import text_digest
from model_utils.models import LoadedModel
from model_utils.verdicts.context import sweep_verdict

FORMAT = 4  # bump when a cached pass would come out different (4: the untrained mass and the RoPE recipe)
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
    parts = [str(FORMAT), fingerprint, text_digest(text), as_view(spec).label, repr(settings)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def pass_record(report: Report) -> dict:
    """What one pass contributes to a sweep, as plain JSON."""
    result = report.results[0]
    return {
        "label": result.label, "temperature": result.temperature, "schedule": result.schedule, "rope": result.rope,
        "loss": result.loss,
        "nll": [None if math.isnan(v) else float(v) for v in result.bucket_nll],
        "position_nll": [round(float(v), 5) for v in result.position_nll],
        "heads": {name: np.round(result.bucket_heads[name], 5).tolist() for name in STATISTICS},
        "distance_profile": np.round(result.distance_profile.mean(axis=1), 6).tolist(),  # [bucket][bin]
        "distance_profile_layers": np.round(result.distance_profile, 6).tolist(),  # [bucket][layer][bin]
        "distance_bins": report.distance_edges.tolist(),
        "n_tokens": report.n_tokens, "trained_length": report.trained_length, "q_start": report.q_start,
        "buckets": [list(bounds) for bounds in report.buckets], "seconds": report.seconds, "kernel": report.kernel,
        "peak_rss_gb": peak_rss_gb(),  # so far
    }


def run_passes(loaded: LoadedModel, text: str, specs: Sequence[Spec], settings: SweepSettings,
               cache_dir: Path | None = None, on_start: Callable[[str, int], None] | None = None,
               progress: OnProgress | None = None, fingerprint: str | None = None) -> list[dict]:
    """One pass record per spec, from the cache where present, else computed and saved at once. `fingerprint` is
    model_fingerprint(loaded), for a caller that runs many texts on one model and has it already."""
    folder = (cache_dir or cache_root() / "sweeps")
    folder.mkdir(parents=True, exist_ok=True)
    fingerprint = fingerprint or model_fingerprint(loaded)
    records = []
    for index, spec in enumerate(specs):
        path = folder / f"{pass_key(fingerprint, text, spec, settings)}.json"
        if path.is_file():
            records.append(json.loads(path.read_text()))
            continue
        if on_start is not None:
            on_start(as_view(spec).label, index)
        report = analyze(loaded, text, pass_request(spec, settings), progress=progress)
        record = pass_record(report)
        write_atomic(path, json.dumps(record, allow_nan=False))  # a pass is in the cache whole or not at all
        records.append(record)
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
    if not any(view.is_plain and view.temperature == 1.0 for view in views):
        raise AnalysisError("a sweep compares every temperature with T = 1: include 1 in the temperatures")
    labels = [view.label for view in views]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise AnalysisError(f"{', '.join(twice)} listed twice; list each temperature or schedule once")
    checked = [validate(loaded, pass_request(spec, settings)) for spec in specs]  # analyze's checks, pass by pass
    return checked[views.index(View(1.0))]  # the plain T = 1's: a recipe's pass may run past the trained length


def check_text(loaded: LoadedModel, text: str, request: CheckedRequest, settings: SweepSettings) -> int:
    """The checks of a sweep's text (not empty, two tokens or more, within the trained length unless allowed, longer
    than q_start); returns the number of tokens the passes will run on."""
    ids, _ = tokenize(loaded, text, request.max_tokens)
    check_length(loaded, len(ids), request)
    if settings.q_start > len(ids) - 1:
        raise AnalysisError(f"q_start must be below the number of tokens ({len(ids)}), got {settings.q_start}")
    return len(ids)


def best_per_bucket(records: list[dict], buckets: list[list[int]], seed: int = 0, rope: str | None = None
                    ) -> list[dict]:
    """Per bucket: the constant temperature with the lowest mean NLL, its NLL, the NLL at T = 1, what it saves,
    and 95% moving-block bootstrap intervals of the best temperature and of the saving; among the passes on the
    plain model, or on the recipe labelled `rope` (whose T = 1 is then the reference)."""
    constant = [r for r in records if r["temperature"] is not None and rope_label(r) == rope]
    temperatures = np.array([r["temperature"] for r in constant])
    reference = int(np.flatnonzero(temperatures == 1.0)[0])
    nll = np.array([r["position_nll"] for r in constant])  # [temperatures, n - 1]
    rng = np.random.default_rng(seed)
    best = []
    for start, stop in buckets:
        values = nll[:, start : min(stop, nll.shape[1])]
        if values.shape[1] == 0:
            continue
        samples = block_bootstrap(values, rng)  # [resamples, temperatures]
        best.append({"bucket": [start, stop], **best_temperature(temperatures, values.mean(axis=1), samples, reference),
                     "positions": int(values.shape[1])})
    return best


def rope_label(record: dict) -> str | None:
    """The label of a pass record's RoPE recipe ('yarn-rope (s=2)'), None on the model's own positions."""
    rope = record.get("rope")
    return None if rope is None else f"{rope['recipe']} (s={rope['factor']:g})"


def best_by_recipe(records: list[dict], buckets: list[list[int]]) -> dict[str, list[dict]]:
    """best_per_bucket on every recipe that ran T = 1 and at least one other constant temperature."""
    grids: dict[str, set[float]] = {}
    for record in records:
        if record["temperature"] is not None and rope_label(record) is not None:
            grids.setdefault(rope_label(record), set()).add(record["temperature"])
    return {label: best_per_bucket(records, buckets, rope=label) for label, grid in grids.items()
            if 1.0 in grid and len(grid) > 1}


def region_nll(record: dict, trained_length: int) -> dict:
    """A pass record's next-token NLL summed over the query positions inside the trained context (p < L) and past
    it (p >= L), with their counts: what the fitter's objective and held-out scores pool over documents."""
    nll = np.asarray(record["position_nll"], dtype=np.float64)  # [n - 1]: position p predicts token p + 1
    before, past = nll[:trained_length], nll[trained_length:]
    return {"spec": record["label"], "before_sum": float(before.sum()), "before_count": len(before),
            "past_sum": float(past.sum()), "past_count": len(past), "seconds": record["seconds"]}


# in a pass record but said once per sweep (the per-position NLL only feeds the bootstrap: it stays in the cache)
PER_DOCUMENT = ("n_tokens", "trained_length", "q_start", "buckets", "position_nll")


def multiplier_ranges(spec: Spec, n_tokens: int, trained_length: int, q_start: int) -> dict:
    """Smallest and largest logit multiplier of a view's temperature or schedule over the measured queries inside
    the trained context and past it (None where the text has no such query). A recipe's own attention factor (YaRN)
    is in its `rope` entry, not here."""
    values = as_view(spec).multipliers(n_tokens)

    def span(part: np.ndarray) -> list[float] | None:
        return [round(float(part.min()), 6), round(float(part.max()), 6)] if len(part) else None

    return {"trained_context": span(values[q_start:trained_length]), "past": span(values[trained_length:])}


def sweep_document(loaded: LoadedModel, records: list[dict], specs: Sequence[Spec],
                   settings: SweepSettings, text: str, source: str) -> dict:
    """The sweep's JSON: settings, one entry per temperature or schedule (with its multiplier range inside and
    past the trained length), the best temperature per bucket on the plain model and on each recipe, and the
    context-length verdict's numbers (verdicts.context; null when the text does not reach past the trained
    length), which need the passes' per-position NLL that the JSON leaves out."""
    first = records[0]
    n_tokens, trained, q_start = first["n_tokens"], first["trained_length"], first["q_start"]
    document = {
        "model": loaded.name, "model_facts": loaded.facts(), "text_source": source, "text_sha256": text_digest(text),
        "n_tokens": first["n_tokens"], "trained_length": first["trained_length"],
        "beyond_trained": settings.beyond_trained, "bucket_size": settings.bucket_size, "q_start": first["q_start"],
        "window": settings.window, "buckets": first["buckets"], "distance_bins": first["distance_bins"],
        "results": [{key: value for key, value in record.items() if key not in PER_DOCUMENT}
                    | {"multipliers": multiplier_ranges(spec, n_tokens, trained, q_start)}
                    for record, spec in zip(records, specs, strict=True)],
        "best": best_per_bucket(records, first["buckets"]),
        "best_by_rope": best_by_recipe(records, first["buckets"]),
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "block": BOOTSTRAP_BLOCK, "confidence": CONFIDENCE,
                      "method": "moving-block bootstrap over the positions of each bucket"},
        "seconds": sum(record["seconds"] for record in records),  # compute time of the passes, cached or not
        "peak_rss_gb": max(record["peak_rss_gb"] for record in records),
        "kernel": first["kernel"],
    }
    document["verdict"] = sweep_verdict(document, {record["label"]: record["position_nll"] for record in records})
    return document


def sweep(loaded: LoadedModel, text: str, specs: Sequence[Spec], settings: SweepSettings,
          source: str = "text", cache_dir: Path | None = None,
          on_start: Callable[[str, int], None] | None = None,
          progress: OnProgress | None = None) -> dict:
    """Check, run (or read from the cache) every pass, and assemble the sweep document."""
    check_sweep(loaded, text, specs, settings)
    records = run_passes(loaded, text, specs, settings, cache_dir, on_start, progress)
    return sweep_document(loaded, records, specs, settings, text, source)
