"""A fit (fit.json, written by experiments/fit/summary.py and the `fit` command) as a record: the fitted parameter
over every document with its interval over documents, the value per fold, every evaluation, the held-out gains
past the trained length against each reference with bootstrap intervals, and for a constant temperature the logit
multiplier (read by verdicts.fit). The recipe is a Rope (its to_dict in the JSON)."""

from __future__ import annotations

from dataclasses import dataclass

from model_utils.core.records import check_format
from model_utils.core.records.base import DocumentEntry, Record, read
from model_utils.core.records.run import RunInfo
from model_utils.core.rope import Rope

FORMAT = 3  # 2 gave the mean and range of the folds as the value and interval; 1 had no format number
KIND = "fit"


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
    label: str  # the fitted view's label


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
    best_schedule: str | None  # label; None without schedules
    best_constant: str  # label


@dataclass(frozen=True, kw_only=True)
class HeldOut(Record):
    """Every document scored with the value fitted without it: the gains against each reference (a name of
    verdicts.fit.REFERENCES), the pooled NLL past the trained length, and the change inside it."""

    gains: dict[str, Gain]  # reference name -> gain
    nll_past_plain: float
    nll_past_fitted: float
    in_context_change: float  # NLL per token before the trained length, fitted minus T = 1 (positive = worse)
    choices: tuple[Choice, ...]
    method: str


@dataclass(frozen=True, kw_only=True)
class Multiplier(Record):
    """A constant temperature's logit multiplier 1 / T and its interval over documents; on yarn-rope, YaRN's law at
    the recipe's scale."""

    fitted: float
    interval: tuple[float, float]
    yarn_law: float | None = None
    scale: float | None = None


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
    family: str
    family_description: str
    knob: str  # the fitted parameter's name ("T")
    parameter: float  # the minimum over every document (experiments/fit/spread.py)
    interval: tuple[float, float]  # a bootstrap over documents of it
    interval_method: str
    at_bound: bool
    trained_length: int
    bounds: tuple[float, float]  # searched
    tolerance: float
    optimizer: str
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
    compared_from: str | None = None  # the tune whose rows gave the comparisons (fit --compare-from); None: computed
    run: RunInfo | None = None
    # the constant temperatures on the model's own positions each fold chose its best constant T among
    # (--compare-temperatures); in files written before, read from the command line that made them (None: unknown)
    compared_temperatures: tuple[float, ...] | None = None

    def to_dict(self) -> dict:
        return {"format": FORMAT, **super().to_dict()}

    @classmethod
    def from_dict(cls, data: dict, kind: str | None = None) -> FitSummary:
        """The fit of a fit.json; RecordError for another format or a missing key."""
        check_format(data, KIND, FORMAT)
        older = {"compared_temperatures": _compared_in(data.get("run"))}  # written before: from its command line
        return read(cls, older | data, KIND)


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
