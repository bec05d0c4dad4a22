"""Small synthetic sweeps whose right verdict is known: pass records with chosen bucket means of the per-position
NLL (each bucket's noise has mean 0 exactly) and chosen attention statistics, read as the pass cache's records
(SweepPass) and assembled by the real sweep_document.
Trained length 1,024, buckets of 256 from position 1 to 2,048, as analyze draws them for 2,048 tokens."""

from __future__ import annotations

import types
from dataclasses import replace

import numpy as np

from model_utils.core.records import fit as fit_record
from model_utils.core.records.base import DocumentEntry
from model_utils.core.records.fit import FitSettings, FitSummary, Fold, Gain, HeldOut, Multiplier
from model_utils.core.records.run import RunInfo
from model_utils.core.records.sweep import SweepDocument, SweepPass
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule, yarn_multiplier
from model_utils.core.statistics import REPORTED_STATISTICS
from model_utils.core.views import View, as_view
from model_utils.experiments.sweep import SweepSettings, sweep_document

TRAINED, SIZE, N_TOKENS = 1024, 256, 2048
BUCKETS = [[max(1, start), start + SIZE] for start in range(0, N_TOKENS, SIZE)]
INSIDE = [2.5, 2.3, 2.6, 2.4]  # NLL at T = 1 of the buckets inside the trained context
DEFAULT_HEADS = {"entropy": 3.0, "normalized_entropy": 0.4, "sink_mass": 0.2, "recent_mass": 0.3,
                 "distant_mass": 0.5, "top_ratio": 2.0, "untrained_mass": 0.0}
SHARED = np.random.default_rng(12345).normal(0.0, 1.0, N_TOKENS - 1)  # how hard each token is, for every view


def losses(means: list[float], seed: int, own: float = 0.3, exact: bool = True) -> np.ndarray:
    """[N_TOKENS - 1] per-position NLL: the shared difficulty of each token plus this view's own noise, centred
    within every bucket so that the bucket means are exactly `means` (only the shared part centred, unless
    `exact`: then the view's own noise moves its means too)."""
    mine = own * np.random.default_rng(seed).normal(0.0, 1.0, N_TOKENS - 1)
    values = np.full(N_TOKENS - 1, float(means[0]))
    for (start, stop), mean in zip(BUCKETS, means, strict=True):
        at = slice(start, min(stop, N_TOKENS - 1))
        noise = SHARED[at] + mine[at] if exact else SHARED[at]
        values[at] = mean + noise - noise.mean() + (0.0 if exact else mine[at])
    return values


def record(spec, means: list[float], seed: int = 0, heads: dict[str, list[float]] | None = None,
           exact: bool = True) -> dict:
    """A pass record as the pass cache holds it (SweepPass.to_dict()'s form), for `spec` (a temperature, Schedule
    or View)."""
    view = as_view(spec)
    position_nll = losses(means, seed, exact=exact)
    stats = DEFAULT_HEADS | (heads or {})
    stats.setdefault("effective_untrained_mass", stats["untrained_mass"])  # a remapping's own where given
    rope = None if view.rope is None else view.rope.applied(
        yarn_multiplier(view.rope.factor) ** 0.5 if view.rope.kind == "yarn" else 1.0)
    result = {
        "view": view.to_dict(), "attention_factor": None if rope is None else rope["attention_factor"],
        "rope_layer_types": None, "loss": float(position_nll.mean()),
        "nll": [float(position_nll[start : min(stop, N_TOKENS - 1)].mean()) for start, stop in BUCKETS],
        "heads": {name: [[[value]] for value in _per_bucket(stats[name])] for name in REPORTED_STATISTICS},
        "distance_profile": [[1.0]] * len(BUCKETS), "distance_profile_layers": [[[1.0]]] * len(BUCKETS),
        "distance_bins": [0, 1], "seconds": 1.0, "kernel": "synthetic", "peak_rss_gb": 1.0, "multipliers": None}
    return {"result": result, "n_tokens": N_TOKENS, "trained_length": TRAINED, "q_start": 1, "buckets": BUCKETS,
            "position_nll": position_nll.tolist()}


def _per_bucket(value) -> list[float]:
    return [float(value)] * len(BUCKETS) if np.isscalar(value) else [float(v) for v in value]


RUN = RunInfo(command="synthetic", date="2026-01-01T00:00:00", wall_seconds=1.0, peak_rss_gb=1.0, machine="a test")


def document(views: list[tuple], exact: bool = True) -> tuple[SweepDocument, list[SweepPass]]:
    """The sweep document of (spec, means[, heads]) views, written by the real sweep_document, and its passes."""
    passes = [SweepPass.from_dict(record(spec, means, seed, *(rest or [None]), exact=exact))
              for seed, (spec, means, *rest) in enumerate(views)]
    loaded = types.SimpleNamespace(name="synthetic", facts=lambda: {}, sliding_windows=lambda: [None])
    settings = SweepSettings(max_tokens=N_TOKENS, bucket_size=SIZE, beyond_trained=True)
    written = sweep_document(loaded, passes, [spec for spec, *_ in views], settings, "synthetic text",
                             "a synthetic text")
    return replace(written, run=RUN), passes


def plain(past: list[float], inside: list[float] = INSIDE) -> list[float]:
    return [*inside, *past]


def yarn_rope(temperature: float = 1.0) -> View:
    return View(temperature, Rope("yarn-rope", 2.0))


SCHEDULE = Schedule("yarn", 2.0)


def leave_one_out_by_hand(sums: np.ndarray, counts: np.ndarray, reference: int, candidates: list[int],
                          past: list[int], per_bucket: bool = True) -> float:
    """The held-out gain over documents written out with loops: each document scored with the candidate that is
    best on the other documents (per bucket, or pooled over the past buckets); `sums` [document, view, bucket],
    `counts` [document, bucket]. The reference for verdicts.past.DocumentFolds."""
    saved, scored = 0.0, 0
    groups = [[b] for b in past] if per_bucket else [past]
    for left_out in range(len(sums)):
        others = [d for d in range(len(sums)) if d != left_out]
        for group in groups:
            other_count = sum(counts[d, b] for d in others for b in group)
            if other_count == 0:
                continue
            means = {c: sum(sums[d, c, b] for d in others for b in group) / other_count for c in candidates}
            chosen = min(candidates, key=lambda c: means[c])
            saved += sum(sums[left_out, reference, b] - sums[left_out, chosen, b] for b in group)
            scored += sum(counts[left_out, b] for b in group)
    return saved / scored


YARN_ROPE = Rope("yarn-rope", 2.0)


def fit_summary(*, values=(0.9, 0.92), law=1.143, rope=YARN_ROPE, gains=None, at_bound=False,
                tokens=16384) -> FitSummary:
    """A fit of a constant T with these fold values (their mean the value, their range its interval over documents)
    and held-out gains (saved, low, high) per reference."""
    gains = gains if gains is not None else {"plain": (2.0, 1.9, 2.1), "recipe_at_1": (0.03, 0.01, 0.05),
                                             "recipe": (0.0, -0.01, 0.01)}
    fitted = sum(values) / len(values)
    return FitSummary(
        model="m", rope=rope, family="constant", knob="T", parameter=fitted, interval=(min(values), max(values)),
        interval_method=fit_record.IntervalMethod.CURVE_BOOTSTRAP,
        bootstrap=fit_record.FitBootstrap(resamples=1000, confidence=0.95, seed=0, window=0.1), at_bound=at_bound,
        trained_length=TRAINED, bounds=(0.6, 1.6), tolerance=0.02, optimizer=fit_record.Optimizer.BOUNDED_BRENT,
        folds=tuple(Fold(fold=i, training=(), parameter=v, nll_past=2.0, converged=True, at_bound=at_bound,
                         evaluations=(), held_out=(), view=View(v, rope)) for i, v in enumerate(values)),
        evaluations=0,
        held_out=HeldOut(gains={name: Gain(saved=saved, interval=(low, high))
                                for name, (saved, low, high) in gains.items()},
                         nll_past_plain=4.0, nll_past_fitted=2.0, in_context_change=0.01, choices=(),
                         method=fit_record.HeldOutMethod.CROSS_FIT),
        documents=tuple(DocumentEntry(name=str(i), sha256=str(i), n_tokens=tokens) for i in range(4)),
        corpus="synthetic", settings=FitSettings(max_tokens=tokens, bucket_size=1024, window=32, q_start=1),
        multiplier=None if rope is None else Multiplier(fitted=1 / fitted, interval=(1 / max(values), 1 / min(values)),
                                                        yarn_law=law, scale=2.0))


def collapse_case(views: list[tuple[float | None, str, tuple[float, float | None, float], str]], *,
                  answer: str | None = "4817", fact: tuple[int, int] | None = (6, 10), cut=None, reference: int = 1,
                  window: int = 32, last_token: str = "?", marked_missing: str | None = None,
                  fact_in_recent: bool = False, log_probs: list[float] | None = None):
    """A Collapse inspector verdict of chosen numbers: per view (temperature or None for a schedule, label,
    (recent, fact, sink) masses of the last query, what the model says), with the answer's log-probability at each
    view (default: minus the view's index, minus one). fact: its tokens ((0, 0): left out by the cut), None for
    none found."""
    from model_utils.core.collapse import FactSource, FactSpan, LastQueryMasses, SaidAtView, TextPiece
    from model_utils.verdicts.collapse import CollapseVerdict, ViewOutcome, answers

    outcomes = []
    for index, (temperature, label, (recent, on_fact, sink), text) in enumerate(views):
        elsewhere = 1.0 - recent - (on_fact or 0.0) - sink
        masses = LastQueryMasses(label=label, temperature=temperature, sink=sink, recent=recent, fact=on_fact,
                                 elsewhere=elsewhere, by_layer={})
        log_prob = -1.0 - index if log_probs is None else log_probs[index]
        said = None if answer is None else SaidAtView(
            label=label, temperature=temperature, answer_log_prob=log_prob, token_log_probs=(log_prob,),
            continuation=(TextPiece(text=text), TextPiece(text="<|im_end|>", special=True)))
        outcomes.append(ViewOutcome(masses=masses, said=said, answers=None if said is None else answers(said, answer)))
    span = None if fact is None else FactSpan(source=FactSource.ANSWER, text=answer or "the code", chars=(26, 30),
                                              tokens=fact)
    return CollapseVerdict(reference=reference, window=window, last_token=last_token, fact=span,
                           fact_in_recent=fact_in_recent, marked_missing=marked_missing, answer=answer,
                           views=tuple(outcomes), cut=cut)
