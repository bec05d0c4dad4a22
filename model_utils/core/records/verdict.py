"""The context-length verdict as records: what verdicts/past.py computes from a sweep or a corpus, what a sweep
document's and a corpus summary's `verdict` hold, and what verdicts/words/ turns into words. Numbers, intervals
and enums only: no sentence is stored, so changing a word changes no file. Every saving is "saves" = NLL at T = 1
minus NLL, in nats per token past the trained length (positive = better); intervals are 95%, None without resamples.

A pass is a View and a recipe a Rope, stored whole. The verdict has one format number (FORMAT). Its older formats
are upgraded in one place, `upgraded` (`_from_format_3` to `_from_format_5`), given the views of the file that holds
it: format 5 named a row's pass and a grid edge's recipe by their labels, matched to those views, never parsed;
format 4 had no same-token rise (its rise was against earlier positions);
format 3 wrote the same numbers with their words (a scope, a method, a label per row), which are
read back from the numbers and the file's own recipes; format 2 had no layer types."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from model_utils.core.records import RecordError, check_format, field
from model_utils.core.records.base import Record, read, read_value
from model_utils.core.records.spread import Spread
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View, reference_index

FORMAT = 6  # bump when a key changes meaning
OLDER = (2, 3, 4, 5)  # 5: passes by their labels; 4: also without the same-token rise (read with none); 3 and 2
# through _from_format_3
KIND = "context verdict"

Interval = tuple[float, float]
Bucket = tuple[int, int]  # [start, stop) of query positions


class Scoring(StrEnum):
    """How a choice of temperature (the best per bucket, one for the whole past region) was scored."""

    IN_SAMPLE = "in_sample"  # chosen and scored on the same positions: the oracle
    CROSS_FIT_ONE_TEXT = "cross_fit_one_text"  # chosen on alternate blocks of one text's positions, scored on others
    HELD_OUT_DOCUMENTS = "held_out_documents"  # chosen on the other documents, scored on the one left out


class Family(StrEnum):
    """A RoPE recipe's family: a change of the rotary frequencies, a distance remapping, or a sink + window."""

    FREQUENCY = "frequency"
    REMAP = "remap"
    SINK_WINDOW = "sink_window"


class RowKind(StrEnum):
    """What a decomposition row is."""

    REFERENCE = "reference"  # T = 1 on the model's own positions
    RECIPE = "recipe"  # a recipe at T = 1
    ORACLE = "oracle"  # the best constant T per bucket (alone or on a recipe), in-sample
    HELD_OUT = "held_out"  # the same, scored apart from its choice
    ON_TOP = "on_top"  # the best constant T on a recipe against the recipe at T = 1
    OWN_TEMPERATURE = "own_temperature"  # a recipe's own temperature (YaRN's) against its interpolation alone
    FAMILY_GAP = "family_gap"  # the family that saves the most against the next, paired
    SCHEDULE = "schedule"  # a published schedule
    FITTED = "fitted"  # a temperature fitted on the corpus's documents on top of a recipe (`make fit`)


class LeverKind(StrEnum):
    """What a lever does past the trained length: the kinds the decomposition weighs against the rise."""

    TEMPERATURE = "temperature"  # the best constant T alone, scored apart
    RECIPE = "recipe"  # a recipe at T = 1
    ON_TOP = "on_top"  # a temperature on top of a recipe
    SCHEDULE = "schedule"  # a published schedule


class Dominant(StrEnum):
    """The lever that does the recovery, chosen by the numbers."""

    RECIPE = "recipe"
    TEMPERATURE = "temperature"
    NEITHER = "neither"  # no lever recovers half of the rise with an interval clear of 0
    NO_RISE = "no_rise"  # the loss does not rise past the trained length


class MassMove(StrEnum):
    """Where a row leaves the untrained-distance mass, against T = 1's and the constant temperatures' range."""

    GOES_AWAY = "goes_away"  # a tenth of T = 1's or less
    FALLS = "falls"  # below every constant temperature's
    RISES = "rises"  # above every constant temperature's
    STAYS = "stays"  # within: what a temperature can do to it


def family_of(rope: Rope | None) -> Family | None:
    """A recipe's family: FREQUENCY (core.rope.RECIPES), SINK_WINDOW (a remapping that hides the far keys), REMAP
    (the other remappings); None without a recipe."""
    if rope is None:
        return None
    if not rope.remaps:
        return Family.FREQUENCY
    return Family.SINK_WINDOW if rope.hides is not None else Family.REMAP


class Edge(StrEnum):
    """Which end of the temperatures tried a best temperature sits on."""

    SMALLEST = "smallest"
    LARGEST = "largest"


class RiseBase(StrEnum):
    """What the loss past the trained length is compared with, to say how much it rises: the same positions read
    with at most the trained length before them (the cut context), or, where that was not measured, the loss of the
    text's own earlier positions (the second half of the trained context), which mixes the text's difficulty in."""

    CUT_CONTEXT = "cut_context"
    EARLIER_POSITIONS = "earlier_positions"


@dataclass(frozen=True, kw_only=True)
class SameTokenRise(Record):
    """The rise past the trained length on the same tokens: the loss at T = 1 there minus the loss of the same
    positions read with the context cut to the trained length (each reads between min_context and trained_length
    tokens: strided windows of `stride`). Its interval: moving blocks of positions on one text; over documents a
    95% bootstrap from 8 documents on, their range below (`spread` says which)."""

    nll_cut: float  # mean NLL of the past positions with the cut context
    rise: float  # nll_past - nll_cut
    interval: Interval | None
    spread: Spread
    stride: int
    min_context: int
    documents: int | None  # None: one text


@dataclass(frozen=True, kw_only=True)
class Multipliers(Record):
    """The smallest and largest logit multiplier of a temperature or schedule over the measured queries inside the
    trained context and past it; None where the text has no such query."""

    trained_context: Interval | None
    past: Interval | None


@dataclass(frozen=True, kw_only=True)
class LossBreak(Record):
    """Where the loss at T = 1 breaks: the first bucket past the trained length whose 95% interval of the mean NLL
    lies wholly above the highest bucket mean inside the trained context (`in_context`, the range the text's own
    content moves the loss in at trained lengths); bucket None where none does."""

    in_context: Interval  # lowest and highest bucket mean at T = 1 inside the trained context
    bucket: Bucket | None
    ratio: float | None  # the bucket's start over the trained length
    nll: float | None  # the bucket's mean NLL at T = 1 and its interval
    interval: Interval | None
    earlier: Interval | None  # lowest and highest mean of the past buckets before it; None: it is the first
    # the mean NLL at T = 1 of every past bucket; None in files written before it (the sweep or summary holding the
    # verdict fills it on reading from its own T = 1 result: with_past_nll)
    past_nll: tuple[float, ...] | None = None

    @property
    def at(self) -> int | None:
        """The position the loss breaks at, None where it does not."""
        return None if self.bucket is None else self.bucket[0]


@dataclass(frozen=True, kw_only=True)
class Gain(Record):
    """What a choice of temperature saves against T = 1, its interval, how it was scored, and its share of the
    loss rise (None where the loss does not rise, or not asked)."""

    saved: float
    interval: Interval | None
    scoring: Scoring
    share_of_rise: float | None = None


@dataclass(frozen=True, kw_only=True)
class ConstantTemperature(Record):
    """One constant temperature for the whole past region: in-sample (chosen again in every resample), held out,
    and in how many past buckets it does worse than T = 1."""

    temperature: float
    in_sample: Gain
    held_out: Gain | None
    worse_buckets: int
    buckets: int


@dataclass(frozen=True, kw_only=True)
class BucketBest(Record):
    """The best constant temperature of one past bucket, in-sample, what it saves there, and the producer's
    interval of the best temperature (None where it reported none)."""

    bucket: Bucket
    temperature: float
    saved: float
    temperature_interval: Interval | None


@dataclass(frozen=True, kw_only=True)
class GridEdge(Record):
    """A best temperature that is the largest or smallest tried: there the best may lie beyond the grid."""

    rope: Rope | None  # the recipe; None: the model's own positions
    bucket: Bucket | None  # None: the whole past region
    temperature: float
    edge: Edge


@dataclass(frozen=True, kw_only=True)
class TemperatureGains(Record):
    """What a constant temperature on the model's own positions does past the trained length: the best per bucket
    in-sample (the oracle) and scored apart (held_out, None where it cannot be), one temperature for the whole
    region, the best per bucket, and every best on the grid's edge."""

    grid: tuple[float, ...]  # the constant temperatures tried on the model's own positions
    oracle: Gain | None  # None with fewer than two temperatures
    held_out: Gain | None
    constant: ConstantTemperature | None
    best: tuple[BucketBest, ...]
    edges: tuple[GridEdge, ...]


@dataclass(frozen=True, kw_only=True)
class UntrainedShare(Record):
    """One past bucket's untrained-distance mass at T = 1 (sink excluded), its share of the non-sink mass, and the
    share uniform attention over the visible keys would give."""

    bucket: Bucket
    mass: float
    share: float
    uniform_share: float


@dataclass(frozen=True, kw_only=True)
class EntropyRange(Record):
    """Normalized entropy at T = 1 past the trained length against the range of its bucket means inside it."""

    in_context: Interval
    past: Interval
    before: float  # mean over the second half of the trained context
    past_mean: float
    above: int  # past buckets above the in-context range, and below it
    below: int
    buckets: int


@dataclass(frozen=True, kw_only=True)
class AttentionShift(Record):
    """Where attention at T = 1 goes past the trained length: the untrained-distance mass per past bucket (None
    where it was not measured), the first position from which its share is above uniform attention's, and the
    normalized entropy."""

    untrained: tuple[UntrainedShare, ...] | None
    beyond_uniform_from: int | None  # where the share first passes uniform's at all; the words need a margin
    entropy: EntropyRange


@dataclass(frozen=True, kw_only=True)
class LayerTypeMass(Record):
    """One layer type of a model with more than one: its sliding span (the keys a query sees in a sliding-window
    layer; None: full attention), its layers, and the untrained-distance mass at T = 1 on the model's own positions
    (sink excluded) per past bucket and over the past region (weighted by positions), with its share of the type's
    non-sink mass against uniform attention's over the keys the type sees."""

    sliding_span: int | None
    layers: tuple[int, ...]
    untrained_mass: tuple[float, ...]  # [past bucket]
    untrained_mass_past: float
    # where the type's sink mass was measured (None in files written before): its share of the type's non-sink mass
    # per past bucket, what uniform attention over the keys such a layer sees would give there, and the first
    # position from which the share is above that
    share: tuple[float, ...] | None = None
    uniform_share: tuple[float, ...] | None = None
    beyond_uniform_from: int | None = None


@dataclass(frozen=True, kw_only=True)
class Trend(Record):
    """Attention entropy at T = 1 at two buckets, in nats and normalized."""

    first: Bucket
    last: Bucket
    entropy: Interval  # at first, at last
    normalized: Interval


@dataclass(frozen=True, kw_only=True)
class EntropyTrend(Record):
    """Attention entropy at T = 1 (mean of layers and heads) along the text: from the first to the last bucket
    inside the trained context, and from there to the last bucket past it (None where the text does not go past)."""

    documents: int | None  # a corpus's; None: one text
    inside: Trend
    past: Trend | None


@dataclass(frozen=True, kw_only=True)
class FittedValue(Record):
    """A temperature fitted on a corpus's documents (fit.json): its family, knob, value and interval over
    documents."""

    family: str  # experiments.fit.families' name: "constant"
    knob: str  # "T"
    value: float
    interval: Interval


@dataclass(frozen=True, kw_only=True)
class DecompositionRow(Record):
    """One way of going past the trained length and what it saves there, against `against` (T = 1 on the model's
    own positions, or a recipe at T = 1), with where it leaves the untrained-distance mass: on the distances in the
    text (untrained_mass_past) and on those the model is given (effective_untrained_mass_past: a distance
    remapping's own, else the same). A row's name and description are the words', from these fields."""

    kind: RowKind
    view: View | None  # the pass it is (REFERENCE, RECIPE, SCHEDULE; OWN_TEMPERATURE and FAMILY_GAP: the first of
    # two); None for a choice of temperature per bucket or a fitted value
    rope: Rope | None  # the recipe it runs on; None: the model's own positions
    against: View  # the pass it is scored against
    scoring: Scoring | None  # a choice of temperature's (ORACLE, HELD_OUT, ON_TOP, FITTED); None for one pass
    saved: float | None
    interval: Interval | None
    untrained_mass_past: float | None
    effective_untrained_mass_past: float | None
    untrained_mass_by_layer_type: tuple[float, ...] | None  # in the order of the verdict's layer types
    untrained: MassMove | None
    own_temperature: bool  # a recipe that carries a temperature of its own (YaRN's attention factor)
    family: Family | None
    remaps: bool
    multipliers: Multipliers | None = None  # a schedule's logit multipliers
    fitted: FittedValue | None = None
    saved_inside: float | None = None  # a schedule's saving inside the trained context (negative: what it costs)

    @property
    def schedule(self) -> Schedule | None:
        """A SCHEDULE row's published schedule (its name and parameter); None for any other row."""
        schedule = None if self.view is None else self.view.schedule
        return schedule if isinstance(schedule, Schedule) else None

    @property
    def lever(self) -> LeverKind | None:
        """The kind of lever this row is, None for a row that is no lever (T = 1, the in-sample oracle, a choice
        on a recipe, the family gap: a lever is scored on what it was not chosen on)."""
        if self.kind is RowKind.HELD_OUT:
            return LeverKind.TEMPERATURE if self.rope is None else None
        return {RowKind.RECIPE: LeverKind.RECIPE, RowKind.ON_TOP: LeverKind.ON_TOP,
                RowKind.OWN_TEMPERATURE: LeverKind.ON_TOP, RowKind.FITTED: LeverKind.ON_TOP,
                RowKind.SCHEDULE: LeverKind.SCHEDULE}.get(self.kind)

    @property
    def clears_zero(self) -> bool:
        return self.interval is not None and self.interval[0] > 0


def group_of(row: DecompositionRow) -> int:
    """Where a lever goes in the list (a stable sort): the temperature alone, each recipe family with the
    temperatures on top of its recipes, then the schedules."""
    if row.family is not None:
        return 1 + list(Family).index(row.family)
    return 0 if row.lever is LeverKind.TEMPERATURE else 1 + len(Family)


@dataclass(frozen=True, kw_only=True)
class Decomposition(Record):
    """The loss rise past the trained length, every row's saving (the levers among them on the scale of the rise),
    and the dominant lever, chosen by the numbers when the verdict was computed (verdicts/decomposition.py)."""

    rise: float  # NLL at T = 1 past the trained length minus the loss of `rise_base`: what the shares divide
    dominant: Dominant
    rows: tuple[DecompositionRow, ...]  # the table's rows, then the schedules' and the fitted values'
    untrained_constant_range: Interval | None  # the untrained-distance mass every constant T leaves past it
    rise_base: RiseBase = RiseBase.EARLIER_POSITIONS

    @property
    def levers(self) -> tuple[DecompositionRow, ...]:
        """The rows that are levers, grouped: the temperature alone, each family's recipes with the temperatures on
        top of them, the schedules."""
        return tuple(sorted((row for row in self.rows if row.lever is not None), key=group_of))

    @property
    def table(self) -> tuple[DecompositionRow, ...]:
        """The rows of the decomposition table: all but the schedules and the fitted values."""
        return tuple(row for row in self.rows if row.kind not in (RowKind.SCHEDULE, RowKind.FITTED))

    def share_of_rise(self, row: DecompositionRow) -> float | None:
        """A row's saving over the rise, None where the loss does not rise or the row has no saving."""
        return None if row.saved is None or self.rise <= 0 else row.saved / self.rise

    def families(self) -> list[Family]:
        """The recipe families with a saving here, in Family's order."""
        ran = {row.family for row in self.levers if row.lever is LeverKind.RECIPE and row.saved is not None}
        return [family for family in Family if family in ran]

    def family_lever(self, family: Family) -> DecompositionRow | None:
        """The lever that stands for a recipe family: its best recipe at T = 1 without a temperature of its own
        where one ran (the interpolation alone, not YaRN with its attention factor), else its best recipe."""
        chosen = [row for row in self.levers if row.lever is LeverKind.RECIPE and row.family is family
                  and row.saved is not None]
        alone = [row for row in chosen if not row.own_temperature]
        return max(alone or chosen, key=lambda row: row.saved, default=None)

    def lever(self, dominant: Dominant) -> DecompositionRow | None:
        """The lever that stands for `dominant`, as the answer names it: for RECIPE the family_lever of the family
        that saves the most; for TEMPERATURE the best temperature or schedule; None otherwise."""
        if dominant is Dominant.RECIPE:
            chosen = [self.family_lever(family) for family in self.families()]
            return max(chosen, key=lambda row: row.saved, default=None)
        if dominant is Dominant.TEMPERATURE:
            return self.best(LeverKind.TEMPERATURE, LeverKind.SCHEDULE)
        return None

    def best(self, *kinds: LeverKind) -> DecompositionRow | None:
        """The lever of these kinds that saves the most (point value), None if there is none."""
        chosen = [row for row in self.levers if row.lever in kinds and row.saved is not None]
        return max(chosen, key=lambda row: row.saved, default=None)

    def on_top(self) -> list[DecompositionRow]:
        """Every temperature on top of a recipe with a saving, in lever order."""
        return [row for row in self.levers if row.lever is LeverKind.ON_TOP and row.saved is not None]

    def schedules(self) -> list[DecompositionRow]:
        return [row for row in self.rows if row.kind is RowKind.SCHEDULE]

    def family_gap(self) -> DecompositionRow | None:
        """The leading recipe family against the next, paired (None with one family)."""
        return next((row for row in self.rows if row.kind is RowKind.FAMILY_GAP), None)

    def row_of(self, view: View) -> DecompositionRow | None:
        """The table row of the pass `view`."""
        return next((row for row in self.table if row.view == view), None)


@dataclass(frozen=True, kw_only=True)
class ContextVerdict(Record):
    """What a sweep (one text) or a corpus says past the model's trained length, every number computed from the
    data when the sweep or the tune was written (verdicts/past.py says how): where the loss breaks, what a constant
    temperature saves, where attention goes, the untrained-distance mass per layer type, the decomposition of the
    rise into levers, and the entropy trend."""

    documents: int | None  # a corpus's documents; None: one text
    trained_length: int
    past: Bucket  # the positions past the trained length
    before: Bucket  # the second half of the trained context, the loss rise's baseline
    nll_before: float  # mean NLL at T = 1 there and past the trained length
    nll_past: float
    scoring: Scoring  # how a choice is scored apart from the positions it is made on
    block: int | None  # positions per block of the cross-fit and its resamples; None: documents are resampled
    spread: Spread  # what every interval of the verdict is: a 95% interval, or the range of its documents (< 8)
    loss_break: LossBreak
    gains: TemperatureGains
    attention: AttentionShift | None
    layer_types: tuple[LayerTypeMass, ...] | None  # where the model has more than one
    decomposition: Decomposition
    entropy_trend: EntropyTrend | None
    same_token_rise: SameTokenRise | None = None  # None: the cut context was not measured

    @property
    def rise(self) -> float:
        """What the shares of the rise divide: the same-token rise where measured, else against earlier positions."""
        return self.decomposition.rise

    @property
    def rise_against_earlier(self) -> float:
        """NLL at T = 1 past the trained length minus in the second half of the trained context: other tokens."""
        return self.nll_past - self.nll_before

    @property
    def remaps(self) -> bool:
        """Whether a row of the decomposition remaps distances (its untrained mass is then given twice)."""
        return any(row.remaps for row in self.decomposition.rows)

    def to_dict(self) -> dict:
        return {"format": FORMAT, **super().to_dict()}

    @classmethod
    def from_dict(cls, data: dict, kind: str | None = None, *, views: Sequence[View] = (),
                  documents: int | None = None, block: int | None = None) -> ContextVerdict:
        """The verdict of this format, or of an older one (upgraded by `upgraded`, the one place that knows them)."""
        return read(cls, upgraded(data, views=views, documents=documents, block=block), KIND)


def with_past_nll(verdict: ContextVerdict | None, buckets: Sequence[Sequence[int]],
                  nll: Sequence[float | None]) -> ContextVerdict | None:
    """The verdict with its loss break's past_nll read from the document that holds it (`buckets` and its T = 1
    result's mean NLL per bucket, `nll`), where a file written before that field holds none; as it is otherwise."""
    if verdict is None or verdict.loss_break.past_nll is not None:
        return verdict
    means = [value for (start, _), value in zip(buckets, nll, strict=True) if start >= verdict.past[0]]
    if not means or any(value is None for value in means):
        return verdict
    return replace(verdict, loss_break=replace(verdict.loss_break, past_nll=tuple(float(v) for v in means)))


def completed(verdict: ContextVerdict | None, results: Sequence, buckets: Sequence[Sequence[int]]
              ) -> ContextVerdict | None:
    """A sweep's or summary's verdict with what an older file's lacks read from its own results (each with .view and
    .nll): given a T = 1 result, its past buckets' NLL (with_past_nll)."""
    reference = reference_index([result.view for result in results])
    return verdict if reference is None else with_past_nll(verdict, buckets, results[reference].nll)


def upgraded(data: dict, *, views: Sequence[View] = (), documents: int | None = None,
             block: int | None = None) -> dict:
    """A verdict's JSON of this format, or of an older one as this format holds it: what an older verdict said only
    in words or labels, the file holding it says in numbers: `views` (the views its results ran, which the labels
    name), `documents` (a corpus's, None for one text) and `block` (one text's resampling block)."""
    found = check_format(data, KIND, FORMAT, OLDER)
    if found in (2, 3):
        data = _from_format_3(data, {view.rope.label: view.rope for view in views if view.rope is not None},
                              documents, block)
    if found in (2, 3, 4):
        data = _from_format_4(data)
    return data if found == FORMAT else _from_format_5(data, views)


def upgraded_in(document: dict, kind: str, **context) -> dict:
    """A sweep's or corpus summary's JSON with its verdict (if any) `upgraded`, given the views of its results
    (which an older verdict named by their labels) and the `context` an older verdict needs (block, documents)."""
    verdict = field(document, "verdict", kind)
    if verdict is None:
        return document
    views = [read_value(View, field(result, "view", kind), kind) for result in field(document, "results", kind)]
    return document | {"verdict": upgraded(verdict, views=views, **context)}


# --- older formats ------------------------------------------------------------------------------------------------


def _from_format_5(data: dict, views: Sequence[View]) -> dict:
    """Format 5 (and the older ones upgraded to it) named a row's pass and the pass it is scored against by their
    labels, and a grid edge's recipe by its label: each matched to a view of the file that holds the verdict (its
    results', T = 1 on each of their recipes and on a fitted row's), never parsed."""
    decomposition = field(data, "decomposition", KIND)
    rows = field(decomposition, "rows", KIND)
    known = [View(1.0), *views, *(View(1.0, view.rope) for view in views)]
    known += [View(1.0, read_value(Rope, row["rope"], KIND)) for row in rows if row.get("rope") is not None]
    by_label = {view.label: view for view in known}
    ropes = {view.rope.label: view.rope for view in known if view.rope is not None}

    def named(label: str | None, found: Mapping) -> dict | None:
        if label is None:
            return None
        if label not in found:
            raise RecordError(f"this {KIND} names {label}, which none of the file's results ran: it is damaged; "
                              "regenerate it with the command that made it")
        return found[label].to_dict()

    rows = [{key: value for key, value in row.items() if key != "schedule"} | {
        "view": named(field(row, "view", KIND), by_label), "against": named(field(row, "against", KIND), by_label)}
        for row in rows]
    gains = field(data, "gains", KIND)
    edges = [{key: value for key, value in edge.items() if key != "recipe"} | {
        "rope": named(field(edge, "recipe", KIND), ropes)} for edge in field(gains, "edges", KIND)]
    return data | {"format": FORMAT, "gains": gains | {"edges": edges},
                   "decomposition": decomposition | {"rows": rows}}


def _from_format_4(data: dict) -> dict:
    """A format-4 verdict (or an upgraded older one) as this format's JSON: its rise was against earlier positions,
    it measured no same-token rise, and its intervals were 95% bootstrap intervals (over 4 documents too)."""
    decomposition = field(data, "decomposition", KIND)
    return data | {"same_token_rise": None, "spread": Spread.INTERVAL_95,
                   "decomposition": decomposition | {"rise_base": RiseBase.EARLIER_POSITIONS}}


# Format 3 (and 2, without layer types) stored the same numbers as dicts, with words next to them: "scope" ("one
# model, one text" or "one model, N documents"), "bootstrap" and each gain's "method" and "short" (the scoring and
# the block), which the file holding the verdict says in numbers (its documents, its bootstrap's block); each row's
# "label" and "what" (from its kind and recipe: the recipe's label is matched to the file's own results, never
# parsed), a word per row for the untrained mass, and the schedules beside the decomposition, not among its rows.

OLD_MOVES = {"goes away": MassMove.GOES_AWAY, "falls": MassMove.FALLS, "rises": MassMove.RISES,
             "stays": MassMove.STAYS}


def _from_format_3(data: dict, ropes: Mapping[str, Rope], documents: int | None, block: int | None) -> dict:
    """A format-3 (or 2) verdict as this format's JSON."""
    if field(data, "bootstrap", KIND) == "none":  # computed from bucket means alone, which this version never does
        raise RecordError(f"this {KIND} was made without per-position losses, which this version no longer reads: "
                          "regenerate it with the command that made it")
    scoring = Scoring.CROSS_FIT_ONE_TEXT if documents is None else Scoring.HELD_OUT_DOCUMENTS
    breaks = field(data, "breaks", KIND)
    gains = field(data, "gain_held_out", KIND)
    decomposition = field(data, "decomposition", KIND)
    rows = [_old_row(row, ropes, scoring) for row in field(decomposition, "rows", KIND)]
    rows += [_old_schedule(entry) for entry in field(data, "schedules", KIND)]
    trend = field(data, "entropy_trend", KIND)
    return {
        "documents": documents, "trained_length": field(data, "trained_length", KIND),
        "past": field(data, "past", KIND), "before": field(data, "before", KIND),
        "nll_before": field(data, "nll_before", KIND), "nll_past": field(data, "nll_past", KIND),
        "scoring": scoring, "block": block if documents is None else None,
        "loss_break": {"in_context": field(data, "in_context_nll", KIND),
                       **{key: None if breaks is None else breaks[key] for key in
                          ("bucket", "ratio", "nll", "interval", "earlier")}},
        "gains": {"grid": field(data, "grid", KIND),
                  "oracle": _old_gain(field(data, "gain_oracle", KIND), Scoring.IN_SAMPLE),
                  "held_out": _old_gain(gains, scoring, field(data, "share_recovered", KIND)),
                  "constant": _old_constant(field(data, "gain_constant", KIND), scoring),
                  "best": field(data, "best", KIND), "edges": field(data, "grid_edges", KIND)},
        "attention": field(data, "attention", KIND),
        "layer_types": None if data.get("layer_types") is None else [
            {"sliding_span": entry["window"], **{key: entry[key] for key in
                                                 ("layers", "untrained_mass", "untrained_mass_past")}}
            for entry in data["layer_types"]],
        "decomposition": {"rise": field(data, "rise", KIND), "dominant": field(decomposition, "dominant", KIND),
                          "rows": rows, "untrained_constant_range": next(
                              (row.get("untrained_constant_range") for row in decomposition["rows"]), None)},
        "entropy_trend": None if trend is None else {
            "documents": documents, "inside": _old_trend(trend["inside"]),
            "past": None if trend["past"] is None else _old_trend(trend["past"])},
    }


def _old_gain(data: dict | None, scoring: Scoring, share: float | None = None) -> dict | None:
    return None if data is None else {"saved": data["saved"], "interval": data["interval"], "scoring": scoring,
                                      "share_of_rise": share}


def _old_constant(data: dict | None, scoring: Scoring) -> dict | None:
    if data is None:
        return None
    return {"temperature": data["temperature"], "in_sample": _old_gain(data, Scoring.IN_SAMPLE),
            "held_out": _old_gain(data["held_out"], scoring), "worse_buckets": data["worse_buckets"],
            "buckets": data["buckets"]}


def _old_trend(data: dict) -> dict:
    return {"first": data["from"], "last": data["to"], "entropy": data["entropy"], "normalized": data["normalized"]}


def _old_row(row: dict, ropes: Mapping[str, Rope], scoring: Scoring) -> dict:
    """A format-3 decomposition row: its recipe's label matched to the file's own recipe, its kind's scoring."""
    kind = RowKind(row["kind"])
    recipe = row.get("recipe")
    if recipe is not None and recipe not in ropes:
        raise RecordError(f"this {KIND} has a row on {recipe}, a recipe none of the file's results ran: it is "
                          "damaged; regenerate it with the command that made it")
    one_pass = kind in (RowKind.REFERENCE, RowKind.RECIPE, RowKind.OWN_TEMPERATURE, RowKind.FAMILY_GAP)
    recipe = None if recipe is None else ropes[recipe]
    family = row["family"] if "family" in row else family_of(recipe)  # format 2: frequency recipes only
    return {"kind": kind, "view": _old_view(row) if one_pass else None,
            "rope": None if recipe is None else recipe.to_dict(), "against": row.get("against", "T=1"),
            "scoring": None if one_pass else Scoring.IN_SAMPLE if kind is RowKind.ORACLE else scoring,
            "saved": row["saved"], "interval": row["interval"],
            "untrained_mass_past": row.get("untrained_mass_past"),
            "effective_untrained_mass_past": row.get("effective_untrained_mass_past", row.get("untrained_mass_past")),
            "untrained_mass_by_layer_type": row.get("untrained_mass_by_layer_type"),
            "untrained": None if not row.get("untrained") else OLD_MOVES[row["untrained"]],
            "own_temperature": bool(row.get("own_temperature", False)), "family": family,
            "remaps": bool(row.get("remaps", False)), "multipliers": None, "fitted": None}


def _old_view(row: dict) -> str:
    """The pass a format-3 row of one pass names: its label, or the first of the two a comparison's label names
    ("A vs B", B being the row's `against`)."""
    label, against = row["label"], row.get("against")
    if row["kind"] in ("own_temperature", "family_gap"):
        return label.removesuffix(f" vs {against}")
    return label


def _old_schedule(entry: dict) -> dict:
    return {"kind": RowKind.SCHEDULE, "view": entry["label"], "rope": None, "against": "T=1", "scoring": None,
            "saved": entry["saved"], "interval": entry["interval"], "untrained_mass_past": None,
            "effective_untrained_mass_past": None, "untrained_mass_by_layer_type": None, "untrained": None,
            "own_temperature": False, "family": None, "remaps": False,
            "multipliers": {"trained_context": entry.get("m_trained_context"), "past": entry.get("m_past")},
            "fitted": None}
