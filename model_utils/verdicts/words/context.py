"""The verdict of one text or a corpus in full, one bullet each (`sentences`): the answer, what a constant
temperature saves (held out and in-sample), where the loss breaks, where attention goes, the layer types, the
levers (levers.py), and the entropy trend next to the published argument."""

from __future__ import annotations

from collections.abc import Sequence

from model_utils.core.records.spread import Spread
from model_utils.core.records.verdict import (
    BucketBest,
    ContextVerdict,
    Edge,
    EntropyRange,
    EntropyTrend,
    LayerTypeMass,
    Trend,
)
from model_utils.verdicts.layers import first_above_uniform
from model_utils.verdicts.words.answers import answer
from model_utils.verdicts.words.common import (
    SAVES,
    bracket,
    bucket_runs,
    interval_name,
    layer_list,
    no_held_out,
    percent_of_rise,
    rise_base_words,
    scope,
    scoring_method,
    scoring_short,
    span,
    spread_name,
)
from model_utils.verdicts.words.levers import decomposition_sentence, families_sentence, schedules_sentence
from model_utils.verdicts.words.rows import layer_type_name

__all__ = ["PUBLISHED_ENTROPY", "PUBLISHED_ENTROPY_IN_T", "attention_sentences", "best_sentences", "break_sentence",
           "edge_sentence", "entropy_range_sentence", "entropy_trend_sentences", "held_out_sentence",
           "in_sample_sentence", "layer_type_sentence", "measured_entropy_sentence", "sentences"]


def sentences(verdict: ContextVerdict) -> list[str]:
    """The verdict in full, one bullet each: the answer, the held-out gain, where the loss breaks, the in-sample
    numbers, the best temperature per bucket and the grid's edge, where attention goes, the layer types, the
    decomposition, the recipe families, the schedules, and the published entropy argument next to what was
    measured."""
    said = [answer(verdict), held_out_sentence(verdict), break_sentence(verdict), in_sample_sentence(verdict),
            *best_sentences(verdict), edge_sentence(verdict), *attention_sentences(verdict),
            layer_type_sentence(verdict), decomposition_sentence(verdict), families_sentence(verdict),
            schedules_sentence(verdict)]
    if verdict.entropy_trend is not None:
        said += entropy_trend_sentences(verdict.entropy_trend)
    return [sentence for sentence in said if sentence]


# --- what a constant temperature saves ------------------------------------------------------------------------------


def held_out_sentence(verdict: ContextVerdict) -> str | None:
    gains, where = verdict.gains, scope(verdict.documents)
    if gains.held_out is None:
        return None if gains.oracle is None else (
            f"No held-out gain could be measured ({where}): {no_held_out(verdict.scoring)}; the in-sample numbers "
            "below choose and score on the same positions.")
    gain = gains.held_out
    said = (f"{scoring_short(gain.scoring).capitalize()} ({where}): the best T per bucket, "
            f"{scoring_method(gain.scoring, verdict.block)}, saves {gain.saved:+.3f} nats "
            f"per token past the trained length against T = 1"
            f"{bracket(gain.interval, '; ' + SAVES, name=interval_name(verdict))}")
    if gain.share_of_rise is None:
        return f"{said}; the loss does not rise there ({verdict.rise:+.2f} nats per token {rise_base_words(verdict)})."
    return (f"{said}: {percent_of_rise(gain.share_of_rise)}, the rise being {verdict.rise:.2f} nats per token "
            f"{rise_base_words(verdict)}.")


def in_sample_sentence(verdict: ContextVerdict) -> str | None:
    oracle, constant = verdict.gains.oracle, verdict.gains.constant
    if oracle is None:
        return None
    held, name = constant.held_out, interval_name(verdict)
    return (f"In-sample, for comparison ({scope(verdict.documents)}): the oracle (the best T per bucket chosen and "
            f"scored on the same positions) saves {oracle.saved:+.3f}{bracket(oracle.interval, name=name)}; one "
            f"constant temperature for the whole past region, T = {constant.temperature:g}, saves "
            f"{constant.in_sample.saved:+.3f} in-sample"
            + (f" and {held.saved:+.3f} {scoring_short(held.scoring)}{bracket(held.interval, name=name)}" if held
               else "")
            + f", and is worse than T = 1 in {constant.worse_buckets} of the {constant.buckets} past buckets.")


def best_sentences(verdict: ContextVerdict) -> list[str]:
    best: Sequence[BucketBest] = verdict.gains.best
    if not best:
        return []
    if all(entry.temperature == 1 for entry in best):
        return ["No temperature tried does better than T = 1 in any bucket past the trained length (in-sample)."]
    where = ", ".join(f"{t:g} for {span([start, stop])}"
                      for t, start, stop in bucket_runs([(entry.temperature, entry.bucket) for entry in best]))
    above = sum(entry.temperature > 1 for entry in best)
    below = sum(entry.temperature < 1 for entry in best)
    said = [f"Best T per bucket past the trained length (in-sample): T = {where}: above 1 (softer) in {above} of "
            f"{len(best)} buckets, below 1 (sharper) in {below}."]
    moved = [entry for entry in best if entry.temperature != 1]
    unsure = [entry for entry in moved if entry.temperature_interval
              and entry.temperature_interval[0] <= 1 <= entry.temperature_interval[1]]
    if unsure:
        where = " and ".join(span([start, stop]) for _, start, stop in
                             bucket_runs([(0, entry.bucket) for entry in unsure]))
        of = (f"In the one past bucket whose best T is not 1 ({where}), the" if len(moved) == 1 else
              f"Of the {len(moved)} past buckets whose best T is not 1, in {len(unsure)} ({where}) the")
        said.append(f"{of} {interval_name(verdict)} of the best temperature includes 1: there T = 1 is not ruled "
                    "out.")
    return said


def edge_sentence(verdict: ContextVerdict) -> str | None:
    groups: dict[tuple, list] = {}
    for edge in verdict.gains.edges:
        groups.setdefault((edge.rope, edge.temperature, edge.edge), []).append(edge.bucket)
    clauses = []
    for (rope, temperature, edge), buckets in groups.items():
        runs = bucket_runs([(0, bucket) for bucket in buckets if bucket is not None])
        where = [span([start, stop]) for _, start, stop in runs]
        where += ["the whole past region"] * (None in buckets)
        on = "" if rope is None else f" on {rope.label}"
        clauses.append(f"T = {temperature:g}{on}, the {edge.value} temperature tried there, is the best for "
                       f"{' and '.join(where)} (the best may lie {'above' if edge is Edge.LARGEST else 'below'} it)")
    return f"On the grid's edge: {'; '.join(clauses)}." if clauses else None


# --- where the loss breaks ------------------------------------------------------------------------------------------


def break_sentence(verdict: ContextVerdict) -> str:
    found, where = verdict.loss_break, scope(verdict.documents)
    low, high = found.in_context
    if found.bucket is None:
        return (f"The loss at T = 1 has no sure break ({where}): up to position {verdict.past[1] - 1:,} no bucket "
                f"past the trained length rises above the range of the buckets inside it ({low:.2f}-{high:.2f} "
                f"nats per token) beyond its own {interval_name(verdict)}{_means_above(found.past_nll, high)}; "
                f"this compares other parts of the text, not the same words{_same_words_rise(verdict)}.")
    bounds = found.interval
    said = (f"The loss at T = 1 breaks in {span(found.bucket)}, from {found.ratio:.3g}x the trained length "
            f"of {verdict.trained_length:,} ({where}): {found.nll:.2f} nats per token there"
            + (f" ({interval_name(verdict)} {bounds[0]:.2f}-{bounds[1]:.2f})" if bounds else "")
            + f", above every bucket inside the trained context ({low:.2f}-{high:.2f})")
    earlier = found.earlier
    if earlier and earlier[1] > high:  # a mean above the range whose interval still reaches into it
        return said + (f"; the past buckets before it ({earlier[0]:.2f}-{earlier[1]:.2f}) reach above that "
                       f"range already, up to {earlier[1]:.2f}, in their means but not beyond their "
                       f"{interval_name(verdict)}s: the loss leaves the range before the break; the break is where "
                       "that is sure.")
    return said + (f"; the past buckets before it: {earlier[0]:.2f}-{earlier[1]:.2f}." if earlier else ".")


def _means_above(means: Sequence[float] | None, high: float) -> str:
    """', though the means of 4 of the 8 past buckets lie above it (2.25-2.41)': past buckets whose mean is above
    the range inside the trained context while none is beyond its own spread; '' where none is (or not known)."""
    above = [mean for mean in means or () if mean > high]
    if not above:
        return ""
    return (f", though the mean{'s' if len(above) != 1 else ''} of {len(above)} of the {len(means)} past buckets "
            f"{'lie' if len(above) != 1 else 'lies'} above it ({min(above):.2f}-{max(above):.2f})")


def _same_words_rise(verdict: ContextVerdict) -> str:
    """': on the same words the loss does rise past the trained length, by 0.47 nats per token, on each of the 4
    documents (0.40 to 0.62)': the same-token rise where it was measured and is above 0; '' otherwise."""
    same = verdict.same_token_rise
    if same is None or same.rise <= 0:
        return ""
    said = f": on the same words the loss does rise past the trained length, by {same.rise:.2f} nats per token"
    if same.interval is None:
        return said
    low, high = same.interval
    if same.spread is Spread.RANGE and low > 0:
        return said + f", on each of the {same.documents} documents ({low:.2f} to {high:.2f})"
    return said + f" ({spread_name(same.spread, same.documents)} {low:.2f} to {high:.2f})"


# --- where attention goes -------------------------------------------------------------------------------------------


def attention_sentences(verdict: ContextVerdict) -> list[str]:
    shift, where = verdict.attention, scope(verdict.documents)
    if shift is None:
        return []
    said = []
    rows = shift.untrained
    blind = _blind_layers(verdict)
    if rows and blind:
        first, last = rows[0], rows[-1]
        said.append(f"Averaged over every layer ({where}), the attention at T = 1 on keys farther back than the "
                    f"trained length (sink excluded) goes {first.mass:.3f} -> {last.mass:.3f} over the past buckets; "
                    f"that average includes the {sum(len(kind.layers) for kind in blind)} sliding-window layers, "
                    "which cannot see keys that far back, so it says little: the layer types below say where the "
                    "far keys are read.")
    elif rows:
        first, last = rows[0], rows[-1]
        moves = (f"the untrained-distance mass (sink excluded) goes {first.mass:.3f} -> {last.mass:.3f} over "
                 f"the past buckets, {first.share:.1%} -> {last.share:.1%} of the non-sink mass")
        above = first_above_uniform([row.share for row in rows], [row.uniform_share for row in rows])
        if above is not None:  # judged again on the stored buckets: files written before ABOVE_UNIFORM held a tie
            start = rows[above].bucket[0]
            shares = [row.uniform_share for row in rows[above:]]
            said.append(f"Attention at T = 1 moves onto keys farther back than the trained length, distances "
                        f"never trained ({where}): {moves}; from position {start:,} on, that share is above "
                        f"what uniform attention over the visible keys would give ({min(shares):.0%}-"
                        f"{max(shares):.0%} there), so the far keys draw more than their number.")
        else:
            said.append(f"Attention at T = 1 keeps mostly to distances it was trained on ({where}): {moves}, "
                        "below what uniform attention over the visible keys would give in every past bucket "
                        f"(up to {max(row.uniform_share for row in rows):.0%}).")
    said.append(entropy_range_sentence(shift.entropy, where, verdict.before))
    return said


def entropy_range_sentence(entropy: EntropyRange, where: str, before: Sequence[int]) -> str:
    """Normalized entropy past the trained length against the range of its bucket means inside the trained
    context: a change within that range is no more than the text's own ups and downs at trained lengths."""
    low, high = entropy.in_context
    past_low, past_high = entropy.past
    inside = f"the {low:.3f}-{high:.3f} of the buckets inside the trained context"
    if not entropy.above and not entropy.below:
        return (f"Normalized entropy at T = 1 barely changes ({where}): past the trained length its bucket means are "
                f"{past_low:.3f}-{past_high:.3f}, within {inside} (mean {entropy.before:.3f} at {span(before)}, "
                f"{entropy.past_mean:.3f} past).")
    moves = []
    if entropy.above:
        moves.append(f"rises above {inside} in {entropy.above} of {entropy.buckets} past buckets, up to "
                     f"{past_high:.3f} (attention spreads out there)")
    if entropy.below:
        said = "it" if moves else inside
        moves.append(f"falls below {said} in {entropy.below} of {entropy.buckets} past buckets, down to "
                     f"{past_low:.3f} (attention sharpens there)")
    within = entropy.buckets - entropy.above - entropy.below
    rest = f"; the other {within} stay within it" if within else ""
    return f"Normalized entropy at T = 1 {' and '.join(moves)}{rest} ({where})."


# --- by layer type --------------------------------------------------------------------------------------------------



def _blind_layers(verdict: ContextVerdict) -> list[LayerTypeMass]:
    """The layer types whose sliding span is no longer than the trained length: they never see an untrained
    distance."""
    return [kind for kind in verdict.layer_types or () if kind.sliding_span is not None
            and kind.sliding_span <= verdict.trained_length]


def layer_type_sentence(verdict: ContextVerdict) -> str | None:
    """The untrained-distance mass at T = 1 per layer type, where the model has several, and which layers cannot
    meet an untrained distance at all (a sliding span no longer than the trained length)."""
    if not verdict.layer_types:
        return None
    parts = [f"{layer_type_name(kind)} ({layer_list(kind.layers)}): {kind.untrained_mass[0]:.3f} -> "
             f"{kind.untrained_mass[-1]:.3f}, {kind.untrained_mass_past:.3f} over the past region"
             for kind in verdict.layer_types]
    said = (f"By layer type ({scope(verdict.documents)}), the untrained-distance mass at T = 1 (sink excluded) goes, "
            "over the past buckets: " + "; ".join(parts))
    blind = _blind_layers(verdict)
    if blind:
        said += (f"; a sliding-window layer of {', '.join(f'{kind.sliding_span:,}' for kind in blind)} keys, no more "
                 f"than the trained length of {verdict.trained_length:,}, never sees a key that far back")
    starts = [entry.bucket[0] for entry in verdict.gains.best] or (
        [row.bucket[0] for row in verdict.attention.untrained or ()] if verdict.attention else [])
    return said + "." + "".join(f" {_uniform_words(kind, starts)}" for kind in verdict.layer_types
                                if kind.share is not None and kind not in blind)


def _uniform_words(kind: LayerTypeMass, starts: Sequence[int]) -> str:
    """Whether a layer type's share of its non-sink mass on untrained distances is above what uniform attention over
    the keys it sees would give (past.uniform_share) by ABOVE_UNIFORM (layers.first_above_uniform), and from where
    (`starts`: each past bucket's first position)."""
    name = layer_type_name(kind)
    shares = f"{kind.share[0]:.1%} -> {kind.share[-1]:.1%} of their non-sink mass"
    index = first_above_uniform(kind.share, kind.uniform_share)  # by ABOVE_UNIFORM, on the stored buckets
    if index is None:
        return (f"In the {name} that is {shares}, below what uniform attention over the keys they see would give in "
                f"every past bucket (up to {max(kind.uniform_share):.0%}): they keep mostly to distances they were "
                "trained on.")
    there = kind.uniform_share[index:]
    start = starts[index] if starts and len(starts) == len(kind.share) else kind.beyond_uniform_from
    return (f"In the {name} that is {shares}; from position {start:,} on, above what uniform "
            f"attention over the keys they see would give ({min(there):.0%}-{max(there):.0%} there), so keys at "
            "distances never trained draw more than their number.")


# --- the entropy trend and the published argument -------------------------------------------------------------------

PUBLISHED_ENTROPY = ("Published argument (Chiang & Cholak 2022; Nakanishi 2025, Scalable-Softmax): with attention "
                     "scores of a fixed spread, attention entropy grows like ln n as the context grows, so attention "
                     "spreads thin; the length schedules multiply the logits by m >= 1 to counter that.")


def _verb(pair: Sequence[float]) -> str:
    first, last = (round(value, 3) for value in pair)
    return "rises" if last > first else "falls" if last < first else "stays at"


def measured_entropy_sentence(trend: EntropyTrend) -> str:
    """What this model measured next to the published argument: entropy at T = 1 from the first to the last bucket
    inside the trained context, and past it."""
    inside: Trend = trend.inside
    said = (f"Measured here ({scope(trend.documents)}; T = 1, mean of layers and heads): inside the trained context "
            f"attention entropy goes {inside.entropy[0]:.2f} -> {inside.entropy[1]:.2f} nats from "
            f"{span(inside.first)} to {span(inside.last)}, while normalized entropy "
            f"{_verb(inside.normalized)} {inside.normalized[0]:.3f} -> {inside.normalized[1]:.3f}")
    if trend.past is not None:
        past = trend.past
        said += (f"; past it, to {span(past.last)}, {past.entropy[0]:.2f} -> {past.entropy[1]:.2f} nats, "
                 f"normalized {past.normalized[0]:.3f} -> {past.normalized[1]:.3f}")
    return said + "."


def entropy_trend_sentences(trend: EntropyTrend) -> list[str]:
    """The published argument, said as the published argument, and what this model measured next to it."""
    return [PUBLISHED_ENTROPY, measured_entropy_sentence(trend)]


PUBLISHED_ENTROPY_IN_T = ("Published argument (Chiang & Cholak 2022; Nakanishi 2025, Scalable-Softmax): with "
                          "attention scores of a fixed spread, attention entropy grows like ln n as the context "
                          "grows, so attention spreads thin; the length schedules lower the temperature below 1 "
                          "(sharper) to counter that.")  # PUBLISHED_ENTROPY as the pages say it

