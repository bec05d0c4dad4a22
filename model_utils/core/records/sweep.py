"""The context-length sweep's records: `SweepDocument` (the JSON `python -m model_utils sweep` writes and the pages
read), its `SweepResult` per pass, `BestEntry` per bucket, and `SweepPass`, what one pass leaves in the pass cache.
A recipe is a `Rope`; arrays are float64 numpy arrays, written back as lists; the verdict is a ContextVerdict
(core/records/verdict.py, with its own format number). Format 4 adds the cut-context reference (`cut_context`, the
loss of the positions past the trained length read with at most the trained length before them), which older formats
read as None; format 3 adds each layer's sliding span (`layer_windows`),
which formats 2 and 1 read as None; format 2 added the format number and writes the best
temperatures per recipe with their recipe; format 1 (no number, best_by_rope keyed by the recipe's label) is read by
matching each label to a result's recipe."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model_utils.core.records import RecordError, check_format, field
from model_utils.core.records.base import Record
from model_utils.core.records.cut_context import CutContextPass
from model_utils.core.records.run import RunInfo
from model_utils.core.records.verdict import ContextVerdict, Multipliers
from model_utils.core.rope import Rope
from model_utils.core.views import reference_index

FORMAT = 4
OLDER = (2, 3)  # numbered formats this reader still reads: without the cut-context reference; 2: without layer_windows
KIND = "sweep document"
PASS = "sweep pass"


def _array(value) -> np.ndarray:
    return np.asarray(value, dtype=np.float64)


@dataclass(frozen=True, kw_only=True, eq=False)
class SweepResult:
    """One pass of a sweep: a temperature or a schedule, on the model's own positions or on a RoPE recipe, with its
    loss and attention statistics per bucket of query positions."""

    label: str
    temperature: float | None  # None for a schedule
    schedule: str | None  # the schedule's label
    rope: Rope | None  # None: the model's own positions
    attention_factor: float | None  # the recipe's own factor on cos and sin, as transformers applied it
    rope_layer_types: str | None  # where each layer type has its own RoPE: the one the recipe applied to
    loss: float
    nll: tuple[float | None, ...]  # [bucket] mean next-token NLL; None for a bucket with no next token
    heads: dict[str, np.ndarray]  # statistic -> [bucket, layer, head]
    distance_profile: np.ndarray  # [bucket, distance bin], mean of the layers
    distance_profile_layers: np.ndarray  # [bucket, layer, distance bin]
    distance_bins: tuple[int, ...]
    seconds: float
    kernel: str
    peak_rss_gb: float | None
    multipliers: Multipliers | None  # None in the pass cache, which does not know the text's trained length

    @property
    def recipe(self) -> str | None:
        """The label of the pass's RoPE recipe ('yarn-rope (s=2)'), None on the model's own positions."""
        return None if self.rope is None else self.rope.label

    @classmethod
    def from_dict(cls, data: dict) -> SweepResult:
        return cls.read(data, Multipliers.from_dict(field(data, "multipliers", KIND)))

    @classmethod
    def read(cls, data: dict, multipliers: Multipliers | None, kind: str = KIND) -> SweepResult:
        """The result of a document's entry or of a pass record (`kind`), with these multipliers."""
        return cls(label=field(data, "label", kind), temperature=field(data, "temperature", kind),
                   schedule=field(data, "schedule", kind), **rope_fields(field(data, "rope", kind), kind),
                   loss=field(data, "loss", kind), nll=tuple(field(data, "nll", kind)),
                   heads={name: _array(values) for name, values in field(data, "heads", kind).items()},
                   distance_profile=_array(field(data, "distance_profile", kind)),
                   distance_profile_layers=_array(field(data, "distance_profile_layers", kind)),
                   distance_bins=tuple(field(data, "distance_bins", kind)), seconds=field(data, "seconds", kind),
                   kernel=field(data, "kernel", kind), peak_rss_gb=field(data, "peak_rss_gb", kind),
                   multipliers=multipliers)

    def applied_rope(self) -> dict | None:
        """The recipe as the engine applied it (Rope.to_dict's fields with rope_type and the attention factor)."""
        if self.rope is None:
            return None
        applied = self.rope.applied(self.attention_factor)
        return applied | ({"layer_types": self.rope_layer_types} if self.rope_layer_types else {})

    def to_dict(self) -> dict:
        data = {"label": self.label, "temperature": self.temperature, "schedule": self.schedule,
                "rope": self.applied_rope(), "loss": self.loss, "nll": list(self.nll),
                "heads": {name: values.tolist() for name, values in self.heads.items()},
                "distance_profile": self.distance_profile.tolist(),
                "distance_profile_layers": self.distance_profile_layers.tolist(),
                "distance_bins": list(self.distance_bins), "seconds": self.seconds, "kernel": self.kernel,
                "peak_rss_gb": self.peak_rss_gb}
        return data if self.multipliers is None else data | {"multipliers": self.multipliers.to_dict()}

    def __eq__(self, other) -> bool:
        return isinstance(other, SweepResult) and self.to_dict() == other.to_dict()

    __hash__ = None


def rope_fields(applied: dict | None, kind: str = PASS) -> dict:
    """SweepResult's rope, attention_factor and rope_layer_types from the recipe as the engine applied it
    (Report's result.rope: recipe, rope_type, factor, attention_factor, and layer_types where it applies)."""
    if applied is None:
        return {"rope": None, "attention_factor": None, "rope_layer_types": None}
    return {"rope": _rope(applied, kind), "attention_factor": field(applied, "attention_factor", kind),
            "rope_layer_types": applied.get("layer_types")}


def pass_rope(data: dict) -> Rope | None:
    """The recipe of a pass record (the pass cache's dict), without reading the rest of it."""
    return rope_fields(field(data, "rope", PASS))["rope"]


def _rope(applied: dict, kind: str) -> Rope:
    try:
        return Rope.from_dict(applied)
    except ValueError as error:
        raise RecordError(f"this {kind} has a RoPE recipe that cannot be read: {error}") from None


@dataclass(frozen=True, kw_only=True)
class BestEntry(Record):
    """The constant temperature with the lowest mean NLL over one bucket's positions, what it saves against T = 1
    (positive = better), and the 95% bootstrap intervals of both."""

    bucket: tuple[int, int]
    temperature: float
    nll: float
    nll_at_1: float
    saved: float
    temperature_interval: tuple[float, float]
    saved_interval: tuple[float, float]
    positions: int


def _best(entries: list) -> tuple[BestEntry, ...]:
    return tuple(BestEntry.from_dict(entry) for entry in entries)


@dataclass(frozen=True, kw_only=True)
class Bootstrap(Record):
    """How the intervals of the best temperatures were resampled."""

    resamples: int
    block: int  # positions per moving block
    confidence: float
    method: str


@dataclass(frozen=True, kw_only=True)
class SweepDocument:
    """A context-length sweep of one text: its settings, one result per pass, the best constant temperature per
    bucket on the model's own positions and on each recipe, and its verdict (verdicts.context.sweep_verdict, None
    when the text does not reach past the trained length)."""

    model: str
    model_facts: dict[str, str | int | float]  # what the pages show of the model (LoadedModel.facts())
    text_source: str
    text_sha256: str
    n_tokens: int
    trained_length: int
    beyond_trained: bool
    bucket_size: int
    q_start: int
    window: int
    buckets: tuple[tuple[int, int], ...]  # [start, stop) of the query positions of each bucket
    distance_bins: tuple[int, ...]
    results: tuple[SweepResult, ...]
    best: tuple[BestEntry, ...]  # on the model's own positions
    best_by_rope: dict[Rope, tuple[BestEntry, ...]]  # on each recipe that ran T = 1 and another temperature
    bootstrap: Bootstrap
    seconds: float  # compute time of the passes, cached or not
    peak_rss_gb: float | None
    kernel: str
    verdict: ContextVerdict | None
    run: RunInfo | None = None  # how the command line made it; None for a page's own sweep
    # per layer, the keys a query sees in a sliding-window layer, None for full attention (LoadedModel's
    # sliding_windows()): which layers can meet a distance past the trained length; None in formats 2 and 1
    layer_windows: tuple[int | None, ...] | None = None
    # the loss past the trained length with the context cut to it (experiments.cut_context): what the rise past it is
    # measured against, on the same tokens; None where the text does not pass it, and in formats 3 and older
    cut_context: CutContextPass | None = None

    @classmethod
    def from_dict(cls, data: dict) -> SweepDocument:
        """A document of this format, of format 2, or of format 1 (written before documents had a number)."""
        older = isinstance(data, dict) and "format" not in data
        if not older:
            check_format(data, KIND, FORMAT, OLDER)
        results = tuple(SweepResult.from_dict(result) for result in field(data, "results", KIND))
        by_rope = field(data, "best_by_rope", KIND)
        bootstrap = Bootstrap.from_dict(field(data, "bootstrap", KIND))
        verdict = field(data, "verdict", KIND)
        run = data.get("run")
        return cls(
            model=field(data, "model", KIND), model_facts=field(data, "model_facts", KIND),
            text_source=field(data, "text_source", KIND), text_sha256=field(data, "text_sha256", KIND),
            **{name: field(data, name, KIND) for name in ("n_tokens", "trained_length", "beyond_trained",
                                                          "bucket_size", "q_start", "window", "seconds",
                                                          "peak_rss_gb", "kernel")},
            buckets=tuple(tuple(bucket) for bucket in field(data, "buckets", KIND)),
            distance_bins=tuple(field(data, "distance_bins", KIND)), results=results,
            best=_best(field(data, "best", KIND)),
            best_by_rope=_labelled_best(by_rope, results) if older else _recipe_best(by_rope),
            bootstrap=bootstrap, run=None if run is None else RunInfo.from_dict(run),
            verdict=None if verdict is None else ContextVerdict.from_dict(
                verdict, ropes={result.rope.label: result.rope for result in results if result.rope is not None},
                block=bootstrap.block),
            layer_windows=_layer_windows(data),
            cut_context=None if data.get("cut_context") is None else CutContextPass.from_dict(data["cut_context"]))

    def to_dict(self) -> dict:
        data = {"format": FORMAT, "model": self.model, "model_facts": self.model_facts,
                "text_source": self.text_source, "text_sha256": self.text_sha256, "n_tokens": self.n_tokens,
                "trained_length": self.trained_length, "beyond_trained": self.beyond_trained,
                "bucket_size": self.bucket_size, "q_start": self.q_start, "window": self.window,
                "buckets": [list(bucket) for bucket in self.buckets], "distance_bins": list(self.distance_bins),
                "results": [result.to_dict() for result in self.results],
                "best": [entry.to_dict() for entry in self.best],
                "best_by_rope": [{"rope": rope.to_dict(), "best": [entry.to_dict() for entry in entries]}
                                 for rope, entries in self.best_by_rope.items()],
                "bootstrap": self.bootstrap.to_dict(), "seconds": self.seconds, "peak_rss_gb": self.peak_rss_gb,
                "kernel": self.kernel, "verdict": None if self.verdict is None else self.verdict.to_dict(),
                "layer_windows": None if self.layer_windows is None else list(self.layer_windows),
                "cut_context": None if self.cut_context is None else self.cut_context.to_dict()}
        return data if self.run is None else data | {"run": self.run.to_dict()}

    def reference(self) -> SweepResult:
        """T = 1 on the model's own positions, which every other result is compared with (a sweep always runs it)."""
        return self.results[reference_index(self.results)]


def _layer_windows(data: dict) -> tuple[int | None, ...] | None:
    """The layer windows of a file of this format or 3 (a missing key is refused by name); None from format 2 or 1."""
    if data.get("format") not in (FORMAT, 3):
        return None
    windows = field(data, "layer_windows", KIND)
    return None if windows is None else tuple(windows)


def _recipe_best(entries: list) -> dict[Rope, tuple[BestEntry, ...]]:
    return {_rope(field(entry, "rope", KIND), KIND): _best(field(entry, "best", KIND)) for entry in entries}


def _labelled_best(by_label: dict, results: tuple[SweepResult, ...]) -> dict[Rope, tuple[BestEntry, ...]]:
    """Format 1's best_by_rope (recipe label -> entries), each label matched to the recipe of a result."""
    ropes = {result.rope.label: result.rope for result in results if result.rope is not None}
    unknown = sorted(set(by_label) - set(ropes))
    if unknown:
        raise RecordError(f"this {KIND} has best temperatures on {', '.join(unknown)}, a recipe none of its results "
                          "ran: it is damaged; regenerate it with the command that made it")
    return {ropes[label]: _best(entries) for label, entries in by_label.items()}


@dataclass(frozen=True, kw_only=True, eq=False)
class SweepPass:
    """What one pass leaves in the pass cache: its result (without multipliers), the text's facts it ran on, and
    the NLL at every query position, which the bootstrap and the verdict's held-out gains resample. Its format is
    part of its cache key (experiments.sweep.FORMAT): a pass of another format is never found."""

    result: SweepResult
    n_tokens: int
    trained_length: int
    q_start: int
    buckets: tuple[tuple[int, int], ...]
    position_nll: np.ndarray  # [n_tokens - 1]: position p predicts token p + 1

    @classmethod
    def from_dict(cls, data: dict) -> SweepPass:
        return cls(result=SweepResult.read(data, None, PASS), n_tokens=field(data, "n_tokens", PASS),
                   trained_length=field(data, "trained_length", PASS), q_start=field(data, "q_start", PASS),
                   buckets=tuple(tuple(bucket) for bucket in field(data, "buckets", PASS)),
                   position_nll=_array(field(data, "position_nll", PASS)))

    def to_dict(self) -> dict:
        return self.result.to_dict() | {
            "position_nll": self.position_nll.tolist(), "n_tokens": self.n_tokens,
            "trained_length": self.trained_length, "q_start": self.q_start,
            "buckets": [list(bucket) for bucket in self.buckets]}

    def __eq__(self, other) -> bool:
        return isinstance(other, SweepPass) and self.to_dict() == other.to_dict()

    __hash__ = None
