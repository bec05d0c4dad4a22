"""The context-length sweep's records: `SweepDocument` (the JSON `python -m model_utils sweep` writes and the pages
read), its `SweepResult` per pass, `BestEntry` per bucket, and `SweepPass`, what one pass leaves in the pass cache.
A view is a `View` and a recipe a `Rope`, stored whole; arrays are float64 numpy arrays, written back as lists; the
verdict is a ContextVerdict (core/records/verdict.py, with its own format number); the bootstrap's method is a fact
(SpreadMethod), its words made when read. Older formats are upgraded by small functions before the reader
(`upgraded`): format 5 stored the method as its sentence; 4 also each result's view as its label, temperature,
schedule label and applied recipe, and the text's name only inside its source; 3 had no cut-context reference; 2 no
layer windows; 1 (no number) keyed best_by_rope by the recipe's label, matched to a result's recipe."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from model_utils.core.records import RecordError, check_format, field
from model_utils.core.records.base import OLD_VIEW_KEYS, Record, old_view, read, read_value
from model_utils.core.records.cut_context import CutContextPass
from model_utils.core.records.run import RunInfo
from model_utils.core.records.spread import SpreadMethod, method_from_sentence
from model_utils.core.records.verdict import ContextVerdict, Multipliers, completed, upgraded_in
from model_utils.core.rope import Rope
from model_utils.core.views import OfView, View, reference_index

FORMAT = 6
OLDER = (2, 3, 4, 5)  # numbered formats this reader upgrades; format 1 has no number
KIND = "sweep document"
PASS = "sweep pass"


@dataclass(frozen=True, kw_only=True, eq=False)
class SweepResult(OfView, Record):
    """One pass of a sweep: a view (a temperature or a schedule, on the model's own positions or on a RoPE recipe),
    with its loss and attention statistics per bucket of query positions."""

    view: View
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
    multipliers: Multipliers | None = None  # None in the pass cache, which does not know the text's trained length

    def applied_rope(self) -> dict | None:
        """The recipe as the engine applied it (Rope.to_dict's fields with rope_type and the attention factor)."""
        if self.rope is None:
            return None
        applied = self.rope.applied(self.attention_factor)
        return applied | ({"layer_types": self.rope_layer_types} if self.rope_layer_types else {})

    def __eq__(self, other) -> bool:
        return isinstance(other, SweepResult) and self.to_dict() == other.to_dict()

    __hash__ = None


def applied_fields(applied: dict | None, kind: str = PASS) -> dict:
    """SweepResult's attention_factor and rope_layer_types from the recipe as the engine applied it (Report's
    result.rope: recipe, rope_type, factor, attention_factor, and layer_types where it applies)."""
    if applied is None:
        return {"attention_factor": None, "rope_layer_types": None}
    return {"attention_factor": field(applied, "attention_factor", kind),
            "rope_layer_types": applied.get("layer_types")}


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


@dataclass(frozen=True, kw_only=True)
class Bootstrap(Record):
    """How the intervals of the best temperatures were resampled."""

    resamples: int
    block: int  # positions per moving block
    confidence: float
    method: SpreadMethod  # BLOCK_BOOTSTRAP: moving blocks of positions within each bucket


@dataclass(frozen=True, kw_only=True)
class SweepDocument(Record):
    """A context-length sweep of one text: its settings, one result per pass, the best constant temperature per
    bucket on the model's own positions and on each recipe, and its verdict (verdicts.context.sweep_verdict, None
    when the text does not reach past the trained length)."""

    model: str
    model_facts: dict[str, str | int | float]  # what the pages show of the model (LoadedModel.facts())
    text_name: str  # what the text is, in a few words: "Python's pydoc_data.topics", a file's path, "--text"
    text_source: str  # the same with its licence and, for a built-in text, which one
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
    # per layer, the keys a query sees in a sliding-window layer, None for full attention (LoadedModel's
    # sliding_windows()): which layers can meet a distance past the trained length; None in formats 2 and 1
    layer_windows: tuple[int | None, ...] | None
    # the loss past the trained length with the context cut to it (experiments.cut_context): what the rise past it is
    # measured against, on the same tokens; None where the text does not pass it, and in formats 3 and older
    cut_context: CutContextPass | None
    run: RunInfo | None = None  # how the command line made it; None for a page's own sweep

    @classmethod
    def from_dict(cls, data: dict, kind: str | None = None) -> SweepDocument:
        """A document of this format or an older one (upgraded first); a verdict written before its loss break held
        every past bucket's NLL at T = 1 reads it from the document's own T = 1 result (with_past_nll)."""
        data = upgraded(data)
        by_rope = {read_value(Rope, field(entry, "rope", KIND), KIND): read_value(tuple[BestEntry, ...],
                                                                                   field(entry, "best", KIND), KIND)
                   for entry in field(data, "best_by_rope", KIND)}
        document = read(cls, data, KIND, best_by_rope=by_rope)
        return replace(document, verdict=completed(document.verdict, document.results, document.buckets))

    def to_dict(self) -> dict:
        by_rope = [{"rope": rope.to_dict(), "best": [entry.to_dict() for entry in entries]}
                   for rope, entries in self.best_by_rope.items()]
        return {"format": FORMAT, **super().to_dict(), "best_by_rope": by_rope}

    def reference(self) -> SweepResult:
        """T = 1 on the model's own positions, which every other result is compared with (a sweep always runs it)."""
        return self.results[reference_index(self.results)]


@dataclass(frozen=True, kw_only=True, eq=False)
class SweepPass(Record):
    """What one pass leaves in the pass cache: its result (without multipliers), the text's facts it ran on, and
    the NLL at every query position, which the bootstrap and the verdict's held-out gains resample. Its format is
    part of its cache key (experiments.sweep.FORMAT): a pass of another format is never found."""

    result: SweepResult
    n_tokens: int
    trained_length: int
    q_start: int
    buckets: tuple[tuple[int, int], ...]
    position_nll: np.ndarray  # [n_tokens - 1]: position p predicts token p + 1

    def __eq__(self, other) -> bool:
        return isinstance(other, SweepPass) and self.to_dict() == other.to_dict()

    __hash__ = None


def read_pass(data: dict, view: View) -> SweepPass:
    """A pass from the cache, found under the key of `view`: of this form, or of the one before views were stored
    whole (flat, the view by its label), which is given `view` after checking that its fields are the view's."""
    if isinstance(data, dict) and "result" not in data:
        data = _pass_from_format_4(data, view)
    return read(SweepPass, data, PASS)


# --- older formats ------------------------------------------------------------------------------------------------


def upgraded(data: dict) -> dict:
    """A document's JSON of this format, from this format or an older one."""
    found = None if isinstance(data, dict) and "format" not in data else check_format(data, KIND, FORMAT, OLDER)
    if found is None:
        data = _from_format_1(data)
    if found in (None, 2):
        data = data | {"layer_windows": None}
    if found in (None, 2, 3):
        data = {"cut_context": None} | data
    if found in (None, 2, 3, 4):
        data = _from_format_4(data)
    if found != FORMAT:
        data = _from_format_5(data)
    return upgraded_in(data, KIND, block=field(field(data, "bootstrap", KIND), "block", KIND))


def _from_format_5(data: dict) -> dict:
    """Format 5 stored the bootstrap's method as its sentence."""
    return data | {"format": FORMAT, "bootstrap": method_from_sentence(field(data, "bootstrap", KIND), KIND)}


def _from_format_1(data: dict) -> dict:
    """Format 1 (no number, no layer windows) keyed best_by_rope by the recipe's label: each label matched to the
    recipe of a result, never parsed."""
    ropes = {}
    for result in field(data, "results", KIND):
        applied = field(result, "rope", KIND)
        if applied is not None:
            rope = read_value(Rope, applied, KIND)
            ropes[rope.label] = rope
    by_label = field(data, "best_by_rope", KIND)
    unknown = sorted(set(by_label) - set(ropes))
    if unknown:
        raise RecordError(f"this {KIND} has best temperatures on {', '.join(unknown)}, a recipe none of its results "
                          "ran: it is damaged; regenerate it with the command that made it")
    return data | {"best_by_rope": [{"rope": ropes[label].to_dict(), "best": entries}
                                    for label, entries in by_label.items()]}


# Format 4 wrote a built-in text's name, licence and which text it is as one string (the text's source); the names
# of the two built-in texts, which are the only sources with more than a name, as that format wrote them:
OLD_BUILTIN_NAMES = {
    "Python's pydoc_data.topics (Python documentation, PSF License), built-in text 'long'":
        "Python's pydoc_data.topics",
    "Lib/_pydecimal.py (PSF License), built-in text 'decimal-source'": "Lib/_pydecimal.py"}


def _from_format_4(data: dict) -> dict:
    """Format 4 stored each result's view as its label, temperature, schedule label and the recipe as applied, and
    the text's name only inside its source."""
    lengths = (field(data, "n_tokens", KIND),)
    trained = field(data, "trained_length", KIND)
    results = [_result_from_format_4(result, old_view(result, lengths, trained, KIND))
               for result in field(data, "results", KIND)]
    source = field(data, "text_source", KIND)
    return data | {"format": 5, "results": results,
                   "text_name": OLD_BUILTIN_NAMES.get(source, source), "run": data.get("run")}


def _result_from_format_4(entry: dict, view: dict, kind: str = KIND) -> dict:
    kept = {key: value for key, value in entry.items() if key not in OLD_VIEW_KEYS}
    return {"view": view, **applied_fields(field(entry, "rope", kind), kind), **kept}


def _pass_from_format_4(data: dict, view: View) -> dict:
    """A cached pass of format 4, flat (its result's fields and the pass's own), as the view of its key."""
    if field(data, "label", PASS) != view.label:
        raise RecordError(f"this {PASS} holds {data['label']}, not the view {view.label} its key names: delete it "
                          "and rerun")
    found = _result_from_format_4(data, view.to_dict(), PASS)
    own = ("n_tokens", "trained_length", "q_start", "buckets", "position_nll")
    return {"result": {key: value for key, value in found.items() if key not in own},
            **{key: field(data, key, PASS) for key in own}}
