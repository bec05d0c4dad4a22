"""The numbers of the length verdict, shared by one text (verdicts/context.py) and a corpus (verdicts/corpus.py):
from each view's NLL per bucket and resamples of it, where the loss at T = 1 breaks, the oracle and the one
constant temperature (in-sample), the held-out gain, what each RoPE recipe and schedule saves, and where attention
goes, as a ContextVerdict record (core/records/verdict.py; verdicts/words/ words it). Every saving is "saves" =
NLL at T = 1 minus NLL, in nats per token past the trained length (positive = better). Row 0 of every resampled
array is the data as they are, the rest bootstrap resamples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from model_utils.core.bootstrap import cross_fit, interval
from model_utils.core.records.spread import Spread
from model_utils.core.records.verdict import (
    AttentionShift,
    Bucket,
    BucketBest,
    ConstantTemperature,
    ContextVerdict,
    DecompositionRow,
    Edge,
    EntropyRange,
    EntropyTrend,
    Family,
    Gain,
    GridEdge,
    Interval,
    LossBreak,
    MassMove,
    Multipliers,
    RowKind,
    Scoring,
    TemperatureGains,
    Trend,
    UntrainedShare,
    family_of,
)
from model_utils.core.rope import Rope, recipe_info
from model_utils.core.views import OfView, View, reference_index
from model_utils.verdicts.decomposition import decompose
from model_utils.verdicts.layers import LayerGroup, chosen_mass, layer_type_masses

GONE = 0.1  # untrained-distance mass at a tenth of plain T = 1's or less: an order of magnitude down, "goes away"


@dataclass(frozen=True, kw_only=True)
class ViewInfo(OfView):
    """What a verdict needs to know of one view: the view, and a schedule's logit multiplier range."""

    view: View
    multipliers: Multipliers | None = None


class Resamples(Protocol):
    """The NLL past the trained length, resampled: pooled sums per view and bucket, and a held-out choice."""

    rows: int  # 1 + the number of resamples
    scoring: Scoring  # how the held-out choice is scored
    block: int | None  # positions per block of the choice and the resamples; None: documents are resampled
    spread: Spread  # what the rows after row 0 are: resamples (a 95% interval) or the documents one by one (a range)

    def pooled(self) -> tuple[np.ndarray, np.ndarray]:
        """NLL sums [rows, view, bucket] and position counts [rows, bucket] of the buckets past the trained length."""

    def held_out(self, reference: int, candidates: list[int], per_bucket: bool) -> np.ndarray | None:
        """[rows] NLL saved per position against `reference` by a view of `candidates` chosen without the positions
        it is scored on (one choice per bucket, or one for the whole past region); None where it cannot be."""


@dataclass(frozen=True, kw_only=True)
class DocumentFolds:
    """Leave one document out: each document is scored with the choice made on the others. Resamples draw the
    documents with replacement (`weights` [rows, document], how often each is drawn; row 0 all ones) and make the
    choice again without each drawn document, so the interval holds the choice's own variability. With fewer
    documents than a bootstrap can speak for (core.bootstrap.MIN_FOR_INTERVAL, `spread` RANGE) the rows after row
    0 are the documents one by one instead (`weights` their identity), and a figure's spread is their range."""

    sums: np.ndarray  # [document, view, bucket] NLL sums of the buckets past the trained length
    counts: np.ndarray  # [document, bucket] positions with a loss
    weights: np.ndarray  # [rows, document]
    scoring: Scoring = Scoring.HELD_OUT_DOCUMENTS
    block: int | None = None
    spread: Spread = Spread.INTERVAL_95

    @property
    def rows(self) -> int:
        return len(self.weights)

    def pooled(self) -> tuple[np.ndarray, np.ndarray]:
        return np.einsum("rd,dvb->rvb", self.weights, self.sums), self.weights @ self.counts

    def held_out(self, reference: int, candidates: list[int], per_bucket: bool) -> np.ndarray | None:
        if len(self.sums) < 2:
            return None
        own, counts = self.sums, self.counts  # [document, view, bucket], [document, bucket]
        if not per_bucket:
            own, counts = own.sum(axis=2, keepdims=True), counts.sum(axis=1, keepdims=True)
        weights = self.weights[:, :, None]  # [rows, document, 1]
        chooser = np.einsum("rd,dvb->rvb", self.weights, own[:, candidates])[:, None] \
            - weights[..., None] * own[None, :, candidates]  # [rows, document, candidate, bucket]: the others'
        others = (self.weights @ counts)[:, None, :] - weights * counts[None]  # [rows, document, bucket]
        chosen = np.argmin(chooser, axis=2)  # equal counts across candidates: the lowest sum is the lowest mean
        picked = np.take_along_axis(np.broadcast_to(own[None, :, candidates], chooser.shape), chosen[:, :, None],
                                    axis=2)[:, :, 0]  # [rows, document, bucket]
        usable = weights * (others > 0)  # a document scored only where the others have positions to choose on
        saved = (usable * (own[None, :, reference] - picked)).sum(axis=2)  # [rows, document]
        total = (usable * counts[None]).sum(axis=2)
        if self.spread is Spread.RANGE:  # each document on its own: scored with the choice made on all the others
            saved = np.concatenate([saved[:1], np.diag(saved[0])])  # [1 + document, document]
            total = np.concatenate([total[:1], np.diag(total[0])])
        saved, total = saved.sum(axis=1), total.sum(axis=1)
        return np.where(total > 0, saved / np.maximum(total, 1), np.nan)


@dataclass(frozen=True, kw_only=True)
class PositionFolds:
    """Alternating blocks of positions (core.bootstrap.fold_sums): within each bucket the choice made on the even
    blocks is scored on the odd ones and the other way round; resamples draw each fold's positions from that fold
    alone, in circular blocks, so that a resampled choice is still scored on positions it was not made on."""

    sums: np.ndarray  # [rows, bucket, fold, view]
    counts: np.ndarray  # [bucket, fold]
    block: int
    scoring: Scoring = Scoring.CROSS_FIT_ONE_TEXT  # chosen and scored on the same text: not held out
    spread: Spread = Spread.INTERVAL_95

    @property
    def rows(self) -> int:
        return len(self.sums)

    def pooled(self) -> tuple[np.ndarray, np.ndarray]:
        sums = np.moveaxis(self.sums.sum(axis=2), 2, 1)  # [rows, view, bucket]
        return sums, np.broadcast_to(self.counts.sum(axis=1), (self.rows, len(self.counts))).astype(float)

    def held_out(self, reference: int, candidates: list[int], per_bucket: bool) -> np.ndarray | None:
        usable = self.counts[:, 1] > 0  # a bucket of one position has no second fold to score on
        if not usable.any():
            return None
        sums = self.sums[:, usable]  # [rows, bucket, fold, view]
        if per_bucket:
            saved = cross_fit(sums[..., reference], sums[..., candidates])[0].sum(axis=1)
        else:
            saved = cross_fit(sums[..., reference].sum(axis=1), sums[..., candidates].sum(axis=1))[0]
        return saved / self.counts[usable].sum()


@dataclass(frozen=True, kw_only=True)
class PastData:
    """A sweep's or a corpus summary's numbers per bucket, as the length verdict reads them."""

    documents: int | None  # a corpus's documents; None: one text
    trained_length: int
    buckets: tuple[Bucket, ...]  # every bucket with a loss
    weights: np.ndarray  # [bucket] positions with a loss (over all documents)
    views: tuple[ViewInfo, ...]
    nll: np.ndarray  # [view, bucket] mean NLL
    statistics: Mapping[str, np.ndarray]  # name -> [view, bucket], means over layers and heads (and documents)
    reported_best: Mapping[int, Interval]  # bucket start -> the producer's interval of its best temperature
    resamples: Resamples  # of the buckets past the trained length, in order
    layer_types: tuple[LayerGroup, ...] = ()  # where a model has more than one
    layer_spans: tuple[int | None, ...] | None = None  # per layer, its sliding span (None: global); None: unknown


def length_verdict(data: PastData) -> ContextVerdict | None:
    """The verdict, or None without a bucket past the trained length or one inside it."""
    trained, buckets = data.trained_length, data.buckets
    past = [i for i, (start, _) in enumerate(buckets) if start >= trained]
    inside = [i for i, (_, stop) in enumerate(buckets) if stop <= trained]
    before = [i for i in inside if buckets[i][0] >= trained // 2] or inside
    reference = reference_index(data.views)
    if not past or not before or reference is None:
        return None
    sums, counts = data.resamples.pooled()  # [rows, view, past bucket], [rows, past bucket]
    nll_before, nll_past = (float(np.average(data.nll[reference, chosen], weights=data.weights[chosen]))
                            for chosen in (before, past))
    rise = nll_past - nll_before  # against earlier positions; verdicts/rise.py puts the same-token rise in its place
    plain = _constant_views(data.views, None)
    rows, constant_range = judge_untrained(decomposition(data, reference, plain, past, sums, counts), data, plain,
                                           past)
    stats = data.statistics
    return ContextVerdict(
        documents=data.documents, trained_length=trained, past=(buckets[past[0]][0], buckets[past[-1]][1]),
        before=(buckets[before[0]][0], buckets[before[-1]][1]), nll_before=nll_before, nll_past=nll_past,
        scoring=data.resamples.scoring, block=data.resamples.block, spread=data.resamples.spread,
        loss_break=loss_break(data, reference, past, inside, sums, counts),
        gains=gains(data, reference, plain, past, sums, counts, rise),
        attention=attention(data, reference, past, inside),
        layer_types=layer_type_masses(data.layer_types, reference, past, data.weights,
                                      [buckets[i][0] for i in past],
                                      lambda span: [uniform_share(*buckets[i], trained, span) for i in past]),
        decomposition=decompose(rise=rise, rows=(*rows, *schedule_rows(data, reference, sums, counts, inside)),
                                untrained_constant_range=constant_range),
        entropy_trend=entropy_trend(data.documents, buckets, trained, stats["entropy"][reference],
                                    stats["normalized_entropy"][reference])
        if "entropy" in stats and "normalized_entropy" in stats else None)


def _constant_views(views: tuple[ViewInfo, ...], rope: Rope | None) -> list[int]:
    """The views of constant temperatures on `rope` (None: the model's own positions), by temperature."""
    chosen = [i for i, view in enumerate(views) if view.temperature is not None and view.rope == rope]
    return sorted(chosen, key=lambda i: views[i].temperature)


def _estimate(samples: np.ndarray | None, spread: Spread) -> tuple[float | None, Interval | None]:
    """(row 0, the spread of the other rows: their 95% interval where they are resamples, their range where they
    are the documents one by one; None without any)."""
    if samples is None:
        return None, None
    drawn = samples[1:][np.isfinite(samples[1:])]
    if not len(drawn):
        return float(samples[0]), None
    bounds = (float(drawn.min()), float(drawn.max())) if spread is Spread.RANGE else tuple(interval(drawn))
    return float(samples[0]), bounds


def _gain(samples: np.ndarray | None, scoring: Scoring, spread: Spread, rise: float | None = None) -> Gain | None:
    """A Gain of row 0 and its resamples (None without samples), its share of `rise` where that is given and
    positive."""
    if samples is None:
        return None
    saved, bounds = _estimate(samples, spread)
    return Gain(saved=saved, interval=bounds, scoring=scoring,
                share_of_rise=float(samples[0] / rise) if rise is not None and rise > 0 else None)


def _fixed(sums: np.ndarray, counts: np.ndarray, reference: int, view: int) -> np.ndarray:
    """[rows] what one view saves against the reference, pooled over the past buckets."""
    return (sums[:, reference] - sums[:, view]).sum(axis=1) / counts.sum(axis=1)


def _oracle(sums: np.ndarray, counts: np.ndarray, reference: int, candidates: list[int]) -> np.ndarray:
    """[rows] the best candidate per bucket, chosen and scored on the same positions (in-sample)."""
    return (sums[:, reference] - sums[:, candidates].min(axis=1)).sum(axis=1) / counts.sum(axis=1)


def loss_break(data: PastData, reference: int, past: list[int], inside: list[int], sums: np.ndarray,
               counts: np.ndarray) -> LossBreak:
    """Where the loss at T = 1 breaks: the first bucket past the trained length whose 95% interval of the mean NLL
    lies wholly above the highest bucket mean inside the trained context (without resamples, whose mean does). The
    buckets inside show how much the loss moves with the text's content at lengths the model was trained on; a
    bucket above all of them by more than its own sampling noise has left that range. A bucket below the range is
    not a break."""
    low, high = (float(f(data.nll[reference, inside])) for f in (np.min, np.max))
    means = tuple(float(data.nll[reference, index]) for index in past)
    with np.errstate(invalid="ignore", divide="ignore"):  # a resample may draw no document reaching a bucket
        samples = sums[:, reference] / counts  # [rows, past bucket]
    for column, index in enumerate(past):
        bounds = _estimate(samples[:, column], data.resamples.spread)[1]
        if (bounds[0] if bounds else data.nll[reference, index]) > high:
            start = data.buckets[index][0]
            earlier = data.nll[reference, past[:column]]
            return LossBreak(in_context=(low, high), bucket=data.buckets[index], ratio=start / data.trained_length,
                             nll=float(data.nll[reference, index]), interval=bounds,
                             earlier=(float(earlier.min()), float(earlier.max())) if column else None,
                             past_nll=means)
    return LossBreak(in_context=(low, high), bucket=None, ratio=None, nll=None, interval=None, earlier=None,
                     past_nll=means)


def gains(data: PastData, reference: int, plain: list[int], past: list[int], sums: np.ndarray,
          counts: np.ndarray, rise: float) -> TemperatureGains:
    """The oracle, the one constant temperature and the held-out gains on the model's own positions (the held-out
    gain with its share of the loss rise `rise`, NLL at T = 1 past the trained length minus before it), the best
    temperature per bucket and every best that sits on the grid's edge."""
    grid = tuple(data.views[i].temperature for i in plain)
    if len(plain) < 2:
        return TemperatureGains(grid=grid, oracle=None, held_out=None, constant=None, best=(), edges=())
    return TemperatureGains(
        grid=grid, oracle=_gain(_oracle(sums, counts, reference, plain), Scoring.IN_SAMPLE, data.resamples.spread),
        held_out=_gain(data.resamples.held_out(reference, plain, per_bucket=True), data.resamples.scoring,
                       data.resamples.spread, rise),
        constant=constant(data, reference, plain, sums, counts),
        best=best_past_buckets(data, reference, plain, past, sums), edges=grid_edges(data, past, sums))


def constant(data: PastData, reference: int, plain: list[int], sums: np.ndarray,
             counts: np.ndarray) -> ConstantTemperature:
    """One constant temperature for the whole past region: in-sample (chosen again in every resample), in how many
    past buckets it does worse than T = 1, and held out."""
    totals = sums.sum(axis=2)  # [rows, view]
    winner = plain[int(np.argmin(totals[0, plain]))]
    samples = (totals[:, reference] - totals[:, plain].min(axis=1)) / counts.sum(axis=1)
    return ConstantTemperature(
        temperature=data.views[winner].temperature, in_sample=_gain(samples, Scoring.IN_SAMPLE, data.resamples.spread),
        held_out=_gain(data.resamples.held_out(reference, plain, per_bucket=False), data.resamples.scoring,
                       data.resamples.spread),
        worse_buckets=int((sums[0, winner] > sums[0, reference]).sum()), buckets=int(sums.shape[2]))


def best_past_buckets(data: PastData, reference: int, plain: list[int], past: list[int],
                      sums: np.ndarray) -> tuple[BucketBest, ...]:
    """Per past bucket, the best constant temperature in-sample, what it saves there and the producer's interval of
    the best temperature (None where it reported none)."""
    entries = []
    for column, index in enumerate(past):
        winner = plain[int(np.argmin(sums[0, plain, column]))]
        entries.append(BucketBest(bucket=data.buckets[index], temperature=data.views[winner].temperature,
                                  saved=float(data.nll[reference, index] - data.nll[winner, index]),
                                  temperature_interval=data.reported_best.get(data.buckets[index][0])))
    return tuple(entries)


def grid_edges(data: PastData, past: list[int], sums: np.ndarray) -> tuple[GridEdge, ...]:
    """Every best temperature (per past bucket, and for the whole past region) that is the largest or the smallest
    one tried, on the model's own positions and on each recipe with more than one temperature: there the best may
    lie beyond the grid."""
    edges = []
    for rope in _recipes(data.views, with_none=True):
        views = _constant_views(data.views, rope)
        if len(views) < 2:
            continue
        temperatures = [data.views[i].temperature for i in views]
        ends = {temperatures[0]: Edge.SMALLEST, temperatures[-1]: Edge.LARGEST}
        choices = [(data.buckets[index], views[int(np.argmin(sums[0, views, column]))])
                   for column, index in enumerate(past)]
        choices.append((None, views[int(np.argmin(sums[0, views].sum(axis=1)))]))  # the whole past region
        for bucket, winner in choices:
            temperature = data.views[winner].temperature
            if temperature in ends:
                edges.append(GridEdge(rope=rope, bucket=bucket, temperature=temperature, edge=ends[temperature]))
    return tuple(edges)


def _recipes(views: tuple[ViewInfo, ...], with_none: bool = False) -> list[Rope | None]:
    """The recipes of the views in order of first appearance (None, the model's own positions, first if asked)."""
    found = [None] if with_none else []
    for view in views:
        if view.rope is not None and view.rope not in found:
            found.append(view.rope)
    return found


def attention(data: PastData, reference: int, past: list[int], inside: list[int]) -> AttentionShift | None:
    """Where attention at T = 1 goes past the trained length: the untrained-distance mass and its share of the
    non-sink mass per past bucket, against the share uniform attention over the visible keys would give; and the
    normalized entropy past it against the range of its bucket means inside the trained context."""
    stats = data.statistics
    if "normalized_entropy" not in stats:
        return None
    entropy = stats["normalized_entropy"][reference]
    in_context = (float(entropy[inside].min()), float(entropy[inside].max()))
    before = [i for i in inside if data.buckets[i][0] >= data.trained_length // 2] or inside
    spread = EntropyRange(in_context=in_context, past=(float(entropy[past].min()), float(entropy[past].max())),
                          before=float(entropy[before].mean()), past_mean=float(entropy[past].mean()),
                          above=int((entropy[past] > in_context[1]).sum()),
                          below=int((entropy[past] < in_context[0]).sum()), buckets=len(past))
    if "untrained_mass" not in stats or "sink_mass" not in stats:
        return AttentionShift(untrained=None, beyond_uniform_from=None, entropy=spread)
    rows = tuple(UntrainedShare(bucket=data.buckets[i], mass=float(stats["untrained_mass"][reference, i]),
                                share=float(stats["untrained_mass"][reference, i]
                                            / (1 - stats["sink_mass"][reference, i])),
                                uniform_share=layers_uniform_share(*data.buckets[i], data.trained_length,
                                                                   data.layer_spans)) for i in past)
    # Trained attention leans towards recent keys, so the far keys normally draw less than their number. A share
    # above uniform attention's means keys at distances never trained draw more than their number: stored here where
    # it first passes it at all; the words say so only by a margin (layers.first_above_uniform, ABOVE_UNIFORM).
    beyond = next((row.bucket[0] for row in rows if row.share > row.uniform_share), None)
    return AttentionShift(untrained=rows, beyond_uniform_from=beyond, entropy=spread)


def uniform_share(start: int, stop: int, trained_length: int, sliding_span: int | None = None) -> float:
    """The share of the non-sink mass that uniform attention would put on keys at distance >= the trained length,
    averaged over the queries of [start, stop), in a layer that sees every key (sliding_span None) or its last
    `sliding_span`: query q sees v = min(q, span) keys besides the sink, v - L of them that far (none where the
    span is no longer than L: such a layer never meets an untrained distance)."""
    queries = np.arange(max(start, 1), stop)
    if not len(queries):
        return 0.0
    visible = queries if sliding_span is None else np.minimum(queries, sliding_span)
    return float(np.mean(np.maximum(0, visible - trained_length) / visible))


def layers_uniform_share(start: int, stop: int, trained_length: int,
                         spans: Sequence[int | None] | None) -> float:
    """uniform_share averaged over the layers (`spans`: each one's sliding span, None for a global layer; None:
    unknown, every layer taken to see every key), as the untrained-distance mass averaged over layers is."""
    spans = list(spans or (None,))
    kinds = {span: spans.count(span) for span in spans}
    if len(kinds) == 1:  # one layer type: its own share, exactly
        return uniform_share(start, stop, trained_length, next(iter(kinds)))
    return float(np.average([uniform_share(start, stop, trained_length, span) for span in kinds],
                            weights=list(kinds.values())))


def _row(kind: RowKind, *, against: View, spread: Spread, view: View | None = None, rope: Rope | None = None,
         scoring: Scoring | None = None, samples: np.ndarray | None = None,
         masses: tuple[float | None, float | None] = (None, None), by_layer_type: tuple[float, ...] | None = None,
         own_temperature: bool = False, family: Family | None = None) -> DecompositionRow:
    saved, bounds = _estimate(samples, spread)
    return DecompositionRow(kind=kind, view=view, rope=rope, against=against, scoring=scoring, saved=saved,
                            interval=bounds, untrained_mass_past=masses[0], effective_untrained_mass_past=masses[1],
                            untrained_mass_by_layer_type=by_layer_type, untrained=None,
                            own_temperature=own_temperature, family=family, remaps=_remaps(rope))


def decomposition(data: PastData, reference: int, plain: list[int], past: list[int], sums: np.ndarray,
                  counts: np.ndarray) -> list[DecompositionRow]:
    """What each way of going past the trained length saves there against T = 1 on the model's own positions, and
    where it leaves the untrained-distance mass: T = 1 itself; the best constant temperature alone; each recipe at
    T = 1; the best constant temperature on each recipe; a recipe's own temperature on top of its interpolation.
    A row's mass is on the distances in the text (untrained_mass_past) and on those the model is given
    (effective_untrained_mass_past: a distance remapping's own, else the same); where the model has more than one
    layer type, the raw mass of each too (untrained_mass_by_layer_type, in the order of the verdict's layer_types)."""
    masses = _past_masses(data, past)
    against = data.views[reference].view

    def row(kind: RowKind, chosen: list[int] | None, rope: Rope | None, **kwargs) -> DecompositionRow:
        by_type = None if chosen is None or not data.layer_types else tuple(
            chosen_mass(group, chosen, past, data.weights) for group in data.layer_types)
        return _row(kind, against=against, rope=rope, masses=masses(chosen), by_layer_type=by_type,
                    family=family_of(rope), spread=data.resamples.spread, **kwargs)

    rows = [replace(row(RowKind.REFERENCE, [reference] * len(past), None, view=against), saved=0.0)]
    for rope in _recipes(data.views, with_none=True):
        views = _constant_views(data.views, rope)
        one = None if rope is None else reference_index(data.views, rope)
        if one is not None:
            rows.append(row(RowKind.RECIPE, [one] * len(past), rope, view=data.views[one].view,
                            samples=_fixed(sums, counts, reference, one),
                            own_temperature=recipe_info(rope.kind).temperature))
        if len(views) > 1:
            choices = [views[int(np.argmin(sums[0, views, column]))] for column in range(len(past))]
            rows.append(row(RowKind.ORACLE, choices, rope, scoring=Scoring.IN_SAMPLE,
                            samples=_oracle(sums, counts, reference, views)))
            rows.append(row(RowKind.HELD_OUT, None, rope, scoring=data.resamples.scoring,
                            samples=data.resamples.held_out(reference, views, True)))
        if one is not None and len(views) > 1:
            rows.append(on_top_row(data, one, views))
    rows += own_temperature_rows(data, sums, counts)
    rows += family_gap_rows(data, rows, sums, counts)
    return rows


def _remaps(rope: Rope | None) -> bool:
    return rope is not None and rope.remaps


def _past_masses(data: PastData, past: list[int]):
    """A function of the view chosen in each past bucket (None: no pass of its own) to its untrained-distance mass
    past the trained length, (raw, effective), each None where it was not measured."""
    arrays = (data.statistics.get("untrained_mass"), effective_untrained(data))
    weights = data.weights[past]

    def masses(chosen: list[int] | None) -> tuple[float | None, float | None]:
        found = []
        for values in arrays:
            mean = None if values is None or chosen is None else \
                float(np.average([values[v, i] for v, i in zip(chosen, past, strict=True)], weights=weights))
            found.append(mean if mean is None or np.isfinite(mean) else None)  # NaN: an effective mass not measured
        return found[0], found[1]

    return masses


def effective_untrained(data: PastData) -> np.ndarray | None:
    """[view, bucket] the untrained-distance mass on the distances each view gives the model: a distance
    remapping's effective mass (on the remapped distance; on the distance in the text a far key stays far, so its
    raw mass stays large whatever the remapping does), the raw mass otherwise, where the two are equal. NaN for a
    remapping whose effective mass was not measured (a corpus's rows hold the raw one alone)."""
    raw = data.statistics.get("untrained_mass")
    if raw is None:
        return None
    measured = data.statistics.get("effective_untrained_mass", np.full_like(raw, np.nan))
    remapped = np.array([_remaps(view.rope) for view in data.views])[:, None]
    return np.where(remapped, measured, raw)


def on_top_row(data: PastData, one: int, views: list[int]) -> DecompositionRow:
    """The best constant temperature on a recipe against the same recipe at T = 1, chosen without the positions
    (or documents) it is scored on: what a temperature adds on top of the interpolation."""
    rope = data.views[one].rope
    return _row(RowKind.ON_TOP, against=data.views[one].view, rope=rope, scoring=data.resamples.scoring,
                samples=data.resamples.held_out(one, views, True), family=family_of(rope),
                spread=data.resamples.spread)


def own_temperature_rows(data: PastData, sums: np.ndarray, counts: np.ndarray) -> list[DecompositionRow]:
    """A recipe with its own temperature (YaRN) against the same interpolation without it (yarn-rope), both at
    T = 1: what the temperature adds on top of the interpolation."""
    at_one = {view.rope: i for i, view in enumerate(data.views) if view.rope is not None and view.temperature == 1.0}
    rows = []
    for rope, index in at_one.items():
        if not recipe_info(rope.kind).temperature:
            continue
        for partner, other in at_one.items():
            info = recipe_info(partner.kind)
            same = partner.factor == rope.factor and info.rope_type == recipe_info(rope.kind).rope_type
            if same and not info.temperature:
                rows.append(_row(RowKind.OWN_TEMPERATURE, view=data.views[index].view, rope=rope,
                                 against=data.views[other].view, samples=_fixed(sums, counts, other, index),
                                 family=Family.FREQUENCY, spread=data.resamples.spread))
    return rows


def family_gap_rows(data: PastData, rows: list[DecompositionRow], sums: np.ndarray,
                    counts: np.ndarray) -> list[DecompositionRow]:
    """Where recipes of more than one family ran, the family that saves the most against the next, each by the
    lever Decomposition.family_lever picks for it (the lever the answer names), paired on the same resamples:
    whether the lead is resolved or within the noise."""
    found = decompose(rise=0.0, rows=rows)  # only its family levers are read
    leads = sorted((found.family_lever(family) for family in found.families()), key=lambda lever: -lever.saved)
    if len(leads) < 2:
        return []
    views = {view.view: i for i, view in enumerate(data.views)}
    first, second = leads[:2]
    return [_row(RowKind.FAMILY_GAP, view=first.view, rope=first.rope, against=second.view,
                 samples=_fixed(sums, counts, views[second.view], views[first.view]), family=first.family,
                 spread=data.resamples.spread)]


def inside_saving(reference: np.ndarray, view: np.ndarray, weights: np.ndarray) -> float:
    """What a view saves against the reference over the buckets inside the trained context: their mean NLLs,
    weighted by their positions (negative: what it costs there)."""
    return float(np.average(np.asarray(reference) - np.asarray(view), weights=weights))


def schedule_rows(data: PastData, reference: int, sums: np.ndarray, counts: np.ndarray,
                  inside: list[int]) -> list[DecompositionRow]:
    """Each published schedule against T = 1, with its logit multipliers and what it saves inside the trained
    context (`inside`: its buckets), where a schedule that softens the early positions pays for it."""
    def saved_inside(view: int) -> float | None:
        return inside_saving(data.nll[reference, inside], data.nll[view, inside], data.weights[inside]) \
            if inside else None

    return [replace(_row(RowKind.SCHEDULE, view=view.view, against=data.views[reference].view,
                         samples=_fixed(sums, counts, reference, i), spread=data.resamples.spread), rope=view.rope,
                    multipliers=view.multipliers, saved_inside=saved_inside(i))
            for i, view in enumerate(data.views) if view.schedule is not None]


def judge_untrained(rows: list[DecompositionRow], data: PastData, plain: list[int],
                    past: list[int]) -> tuple[list[DecompositionRow], Interval | None]:
    """Each row's untrained-distance mass on the distances the model is given (effective_untrained) against plain
    T = 1's and against the range every constant temperature leaves it in (returned beside the rows): it goes away
    (a tenth of T = 1's or less), falls (below every constant temperature's), rises (above), or stays (within:
    what a temperature can do to it)."""
    untrained = data.statistics.get("untrained_mass")
    if untrained is None or rows[0].untrained_mass_past in (None, 0.0):
        return rows, None
    weights = data.weights[past]
    levels = [float(np.average(untrained[i, past], weights=weights)) for i in plain]
    low, high, base = min(levels), max(levels), rows[0].untrained_mass_past

    def move(value: float | None) -> MassMove | None:
        if value is None:
            return None
        if value <= GONE * base:
            return MassMove.GOES_AWAY
        return MassMove.FALLS if value < low else MassMove.RISES if value > high else MassMove.STAYS

    return [replace(row, untrained=move(row.effective_untrained_mass_past)) for row in rows], (low, high)


def entropy_trend(documents: int | None, buckets: tuple[Bucket, ...], trained_length: int, entropy,
                  normalized) -> EntropyTrend | None:
    """Attention entropy at T = 1 in nats and normalized ([bucket] each), from the first to the last bucket inside
    the trained context and from there to the last past it; None with fewer than two buckets inside."""
    inside = [i for i, (_, stop) in enumerate(buckets) if stop <= trained_length]
    past = [i for i, (start, _) in enumerate(buckets) if start >= trained_length]
    if len(inside) < 2:
        return None

    def trend(first: int, last: int) -> Trend:
        return Trend(first=buckets[first], last=buckets[last], entropy=(float(entropy[first]), float(entropy[last])),
                     normalized=(float(normalized[first]), float(normalized[last])))

    return EntropyTrend(documents=documents, inside=trend(inside[0], inside[-1]),
                        past=trend(inside[-1], past[-1]) if past else None)
