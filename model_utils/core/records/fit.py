"""A fit (fit.json, written by experiments/fit/summary.py and the `fit` command) as a record: the fitted parameter
over every document with its interval over documents, the value per fold, every evaluation, the held-out gains
past the trained length against each reference with bootstrap intervals, and for a constant temperature the logit
multiplier (read by verdicts.fit). The recipe is a Rope, each view a View (their to_dict in the JSON); how the fit
was made is stored as facts (enum codes and the bootstrap's numbers), which verdicts.words.fit_methods says."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from model_utils.core.records import RecordError, check_format, field
from model_utils.core.records.base import DocumentEntry, Record, old_view, read, read_value
from model_utils.core.records.run import RunInfo
from model_utils.core.rope import Rope
from model_utils.core.schedules import LengthTemperature
from model_utils.core.views import View

FORMAT = 4  # 3: methods and the family's description as sentences, views as labels; 2 gave the mean and range of
# the folds as the value and interval; 1 had no format number
KIND = "fit"


class Optimizer(Enum):
    """How each fold searched its value."""

    BOUNDED_BRENT = "bounded-brent"  # scipy.optimize.minimize_scalar(method="bounded") on the training documents


class IntervalMethod(Enum):
    """How the value's interval over documents was made (experiments/fit/spread.py)."""

    CURVE_BOOTSTRAP = "curve-bootstrap"  # documents resampled; the minimum of their summed quadratic NLL curves


class HeldOutMethod(Enum):
    """How the held-out gains were scored."""

    CROSS_FIT = "cross-fit"  # each document with the value fitted on the other folds'; documents resampled


@dataclass(frozen=True, kw_only=True)
class Evaluation(Record):
    """One value the optimizer tried on a fold's training documents and the pooled NLL past the trained length."""

    evaluation: int  # 1, 2, ... in the order tried
    parameter: float
    nll_past: float


@dataclass(frozen=True, kw_only=True)
class Fold(Record):
    """One fold: the value fitted on its training documents, every evaluation, and the documents it is scored on."""

    fold: int
    training: tuple[str, ...]  # sha256 of the documents fitted on
    parameter: float
    nll_past: float
    converged: bool
    at_bound: bool  # the fit sits at an edge of the searched interval: the minimum may lie beyond it
    evaluations: tuple[Evaluation, ...]
    held_out: tuple[str, ...]  # sha256 of the documents scored with this fold's value
    view: View  # the fitted value as a pass runs it


@dataclass(frozen=True, kw_only=True)
class Gain(Record):
    """NLL saved past the trained length against one reference (reference minus fitted; positive = better), with
    its bootstrap interval over the held-out documents."""

    saved: float
    interval: tuple[float, float]


@dataclass(frozen=True, kw_only=True)
class Choice(Record):
    """What a fold chose on its training documents: its value, and the best schedule and constant T it is scored
    against."""

    fold: int
    documents: tuple[str, ...]  # held out
    parameter: float
    best_schedule: View | None  # None without schedules
    best_constant: View


@dataclass(frozen=True, kw_only=True)
class HeldOut(Record):
    """Every document scored with the value fitted without it: the gains against each reference (a name of
    verdicts.fit.REFERENCES), the pooled NLL past the trained length, and the change inside it."""

    gains: dict[str, Gain]  # reference name -> gain
    nll_past_plain: float
    nll_past_fitted: float
    in_context_change: float  # NLL per token before the trained length, fitted minus T = 1 (positive = worse)
    choices: tuple[Choice, ...]
    method: HeldOutMethod


@dataclass(frozen=True, kw_only=True)
class Multiplier(Record):
    """A constant temperature's logit multiplier 1 / T and its interval over documents; on yarn-rope, YaRN's law at
    the recipe's scale."""

    fitted: float
    interval: tuple[float, float]
    yarn_law: float | None = None
    scale: float | None = None


@dataclass(frozen=True, kw_only=True)
class FitBootstrap(Record):
    """How the value's interval over documents and the held-out gains were resampled."""

    resamples: int
    confidence: float
    seed: int
    window: float  # in the parameter: a fold's evaluations this close to its best give a document's curve


@dataclass(frozen=True, kw_only=True)
class Reused(Record):
    """The comparisons a fit read from a tune's rows instead of computing them (fit --compare-from)."""

    source: str  # the tune's folder, as given on the command line
    reused: int
    comparisons: int
    largest: float  # the largest difference from the fit's own T = 1 pass, nats per token past the trained length


@dataclass(frozen=True, kw_only=True)
class FitSettings(Record):
    """The sweep settings every pass of the fit shared."""

    max_tokens: int
    bucket_size: int
    window: int
    q_start: int


@dataclass(frozen=True, kw_only=True)
class FitSummary(Record):
    """fit.json. fit_summary fills the numbers; `fit` adds how the run went (wall_seconds, workers, ray_address)
    and the command line how it was made (run): None until then."""

    model: str
    rope: Rope | None  # None: the model's own positions
    family: str  # experiments.fit.families' name: "constant", "logn"
    knob: str  # the fitted parameter's name ("T")
    parameter: float  # the minimum over every document (experiments/fit/spread.py)
    interval: tuple[float, float]  # a bootstrap over documents of it
    interval_method: IntervalMethod
    bootstrap: FitBootstrap
    at_bound: bool
    trained_length: int
    bounds: tuple[float, float]  # searched
    tolerance: float
    optimizer: Optimizer
    folds: tuple[Fold, ...]
    evaluations: int
    held_out: HeldOut
    documents: tuple[DocumentEntry, ...]
    corpus: str  # its source
    settings: FitSettings
    multiplier: Multiplier | None  # a constant temperature's; None for other families
    wall_seconds: float | None = None
    workers: int | None = None
    ray_address: str | None = None
    compared_from: Reused | None = None  # None: every comparison computed
    run: RunInfo | None = None
    # the constant temperatures on the model's own positions each fold chose its best constant T among
    # (--compare-temperatures); in files written before, read from the command line that made them (None: unknown)
    compared_temperatures: tuple[float, ...] | None = None

    def to_dict(self) -> dict:
        return {"format": FORMAT, **super().to_dict()}

    @classmethod
    def from_dict(cls, data: dict, kind: str | None = None) -> FitSummary:
        """The fit of a fit.json of this format, or of format 3 (upgraded first); RecordError for another format or
        a missing key."""
        if check_format(data, KIND, FORMAT, (3,)) == 3:
            data = _from_format_3(data)
        return read(cls, data, KIND)


# format 3 stored these sentences, as that version wrote them from the same facts:
OLD_FAMILIES = {
    "constant": "one temperature T in every layer and at every position (logit multiplier 1 / T)",
    "logn": "T(p) = 1 + a ln(max(1, (p + 1) / L)) on the query at position p: 1 up to the trained length L, softer "
            "(a > 0) or sharper (a < 0) past it"}
OLD_OPTIMIZER = ("scipy.optimize.minimize_scalar(method='bounded'): Brent's method on the pooled next-token NLL of "
                 "the training documents' positions past the trained length")
OLD_INTERVAL = ("95% percentile bootstrap over the {} documents (1000 resamples) of the minimum of their summed NLL "
                "curves past the trained length, each document's curve a quadratic through its fold's evaluations "
                "within 0.1 of the fold's best")
OLD_HELD_OUT = ("each document is scored with the value fitted on the other folds' documents; gains pooled over its "
                "positions past the trained length; 95% bootstrap over the held-out documents (1000 resamples), "
                "saved = reference NLL minus fitted NLL")
OLD_REUSED = re.compile(r"(?P<source>.+): (?P<reused>\d+) of the (?P<comparisons>\d+) comparisons read from the "
                        r"tune's rows, checked against this fit's own T = 1 pass \(largest difference "
                        r"(?P<largest>\S+) nats per token past the trained length\)")
OLD_BOOTSTRAP = {"resamples": 1000, "confidence": 0.95, "seed": 0, "window": 0.1}  # what format 3's sentences say


def _from_format_3(data: dict) -> dict:
    """Format 3 stored its methods and its family's description as sentences, each checked here against the one that
    version wrote from the same facts (what it read from a tune: its template matched, the numbers taken); and each
    fold's view and each choice's best schedule and constant T as labels, each matched to the view it was written
    from (never parsed). An unknown one is refused."""
    folds, held_out = field(data, "folds", KIND), field(data, "held_out", KIND)
    curves = sum(len(field(fold, "training", KIND)) for fold in folds)
    for sentence, known in ((field(data, "family_description", KIND), OLD_FAMILIES.get(data.get("family"))),
                            (field(data, "optimizer", KIND), OLD_OPTIMIZER),
                            (field(data, "interval_method", KIND), OLD_INTERVAL.format(curves)),
                            (field(held_out, "method", KIND), OLD_HELD_OUT)):
        if sentence != known:
            _unknown(sentence)
    rope, trained = read_value(Rope | None, field(data, "rope", KIND), KIND), field(data, "trained_length", KIND)
    grid = data["compared_temperatures"] if "compared_temperatures" in data else _compared_in(data.get("run"))
    choices = [choice | {"best_constant": _matched(field(choice, "best_constant", KIND), [View(t) for t in grid or ()]),
                         "best_schedule": _schedule(field(choice, "best_schedule", KIND), trained)}
               for choice in field(held_out, "choices", KIND)]
    return {key: value for key, value in data.items() if key != "family_description"} | {
        "format": FORMAT, "interval_method": IntervalMethod.CURVE_BOOTSTRAP.value, "bootstrap": OLD_BOOTSTRAP,
        "optimizer": Optimizer.BOUNDED_BRENT.value, "compared_temperatures": grid,
        "compared_from": _reused(data.get("compared_from")),
        "folds": [{key: value for key, value in fold.items() if key != "label"} | {"view": _fitted(fold, rope, trained)}
                  for fold in folds],
        "held_out": held_out | {"method": HeldOutMethod.CROSS_FIT.value, "choices": choices}}


def _unknown(sentence: str):
    raise RecordError(f"this {KIND} says {sentence!r}, a method this version does not know: regenerate it with the "
                      "command that made it")


def _reused(sentence: str | None) -> dict | None:
    """What a fit read from a tune's rows, from the sentence format 3 wrote of it (its whole template matched)."""
    found = None if sentence is None else OLD_REUSED.fullmatch(sentence)
    if sentence is not None and found is None:
        _unknown(sentence)
    return None if found is None else {"source": found["source"], "reused": int(found["reused"]),
                                       "comparisons": int(found["comparisons"]), "largest": float(found["largest"])}


def _fitted(fold: dict, rope: Rope | None, trained: int) -> dict:
    """A fold's view from its label: its value as a constant T or as the log-length family's slope, on the recipe."""
    value = field(fold, "parameter", KIND)
    return _matched(field(fold, "label", KIND), [View(value, rope), View(LengthTemperature(value, trained), rope)])


def _schedule(label: str | None, trained: int) -> dict | None:
    """A choice's best schedule from its label (None: no schedules compared), on the model's own positions."""
    return None if label is None else old_view({"label": label, "temperature": None, "rope": None}, (), trained, KIND)


def _matched(label: str, views: list[View]) -> dict:
    """The one of `views` written as `label`, as View.to_dict writes it; RecordError where none is."""
    for view in views:
        if view.label == label:
            return view.to_dict()
    raise RecordError(f"this {KIND} holds the view {label!r}, which this version cannot match to a view it fitted or "
                      "compared: regenerate it with the command that made it")


def _compared_in(run: dict | None) -> list[float] | None:
    """The values of --compare-temperatures in the command line of a fit's run record, None where it has none."""
    words = str((run or {}).get("command", "")).split()
    if "--compare-temperatures" not in words:
        return None
    found = []
    for word in words[words.index("--compare-temperatures") + 1 :]:
        try:
            found.append(float(word))
        except ValueError:
            break
    return found or None
