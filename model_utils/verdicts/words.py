"""Every word the explorer says about a result: small pure functions, records and numbers in, text out. The numbers
modules (past.py, context.py, corpus.py, decomposition.py, fit.py, findings.py, the experiments) hold no sentence;
the pages, the widgets, the presenters, the README generator (bench/readme.py) and docs/FINDINGS.md call these, so
they all say the same thing and changing a word is one function and one golden file (tests/golden, `make golden`).

Sections, in the order a reader meets them: shared pieces; how a choice was scored; the headline numbers; the
answer; the verdict in full, by what it judges (the temperature's gains, the loss break, attention, the layer types,
the decomposition, the recipe families, the schedules, the entropy trend); the decomposition's rows and table; the
committed sweeps side by side; the corpus per domain; the fits; one report's findings; the descriptions stored with
the result files; the terminal tables. One sign convention throughout: "saves" = NLL at T = 1 minus NLL, in nats per
token past the trained length, positive = better."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from model_utils.core.bootstrap import BOOTSTRAP_RESAMPLES, CONFIDENCE
from model_utils.core.collapse import FactSource
from model_utils.core.names import model_as_run, model_name
from model_utils.core.records.fit import FitSummary, Gain
from model_utils.core.records.lmeval import LmEvalDocument
from model_utils.core.records.retrieval import Direction as ReachDirection
from model_utils.core.records.retrieval import (
    Reach,
    ReachOutcome,
    ReachShift,
    RetrievalDocument,
    RetrievalVerdict,
)
from model_utils.core.records.spread import Spread
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import (
    BucketBest,
    ContextVerdict,
    Decomposition,
    DecompositionRow,
    Dominant,
    Edge,
    EntropyRange,
    EntropyTrend,
    Family,
    LayerTypeMass,
    LeverKind,
    MassMove,
    Multipliers,
    RiseBase,
    RowKind,
    SameTokenRise,
    Scoring,
    Trend,
    family_of,
)
from model_utils.core.report import Cut, HeadPick
from model_utils.core.rope import Rope, recipe_info
from model_utils.core.schedules import yarn_multiplier
from model_utils.core.views import View
from model_utils.verdicts.collapse import CollapseVerdict, ViewOutcome
from model_utils.verdicts.domains import domain_ranges
from model_utils.verdicts.findings import NEAR_ONE_HOT, NEAR_UNIFORM, Direction, Finding, Outcome, Way
from model_utils.verdicts.fit import REFERENCES as FIT_REFERENCES
from model_utils.verdicts.fit import Judgement, LawPosition, judge, law, law_position
from model_utils.verdicts.maps import HiddenByMean
from model_utils.verdicts.retrieval import REACH_SHARE

# === Shared pieces ===================================================================================================

NO_VALUE = "—"  # a table cell without a number: an em dash, as a bare "-" is a list bullet in st.table's markdown
SAVES = "saves = NLL at T = 1 minus NLL, positive = better"


def scope(documents: int | None) -> str:
    """What a number rests on: 'one model, one text' or 'one model, 8 documents'."""
    if documents is None:
        return "one model, one text"
    return f"one model, {documents} document{'s' if documents != 1 else ''}"


def span(bounds: Sequence[int]) -> str:
    """'positions 8,192-16,382' for [start, stop)."""
    return f"positions {bounds[0]:,}-{bounds[1] - 1:,}"


def bracket(bounds: Sequence[float] | None, tail: str = "", *, name: str) -> str:
    """' (95% interval +0.050 to +0.190)' for a saving with an interval, named as its record's spread says
    (spread_name: '95% interval', or 'range of the 4 documents'), '' without (then only `tail`)."""
    if bounds is None:
        return f" ({tail.lstrip('; ')})" if tail else ""
    return f" ({name} {bounds[0]:+.3f} to {bounds[1]:+.3f}{tail})"


def spread_name(spread: Spread, documents: int | None) -> str:
    """What a spread is called, the one rule for every interval said over documents or positions: '95% interval' (a
    bootstrap: one text's positions, or MIN_FOR_INTERVAL documents or more), or 'range of the 4 documents' (fewer:
    their smallest and largest value; core.bootstrap.spread_over decides, the record's `spread` says)."""
    if spread is Spread.RANGE:
        return f"range of the {documents} document{'s' if documents != 1 else ''}"
    return "95% interval"


def interval_name(verdict: ContextVerdict) -> str:
    """What the verdict's intervals are called (spread_name of its spread)."""
    return spread_name(verdict.spread, verdict.documents)


def short_interval(bounds: Sequence[float] | None) -> str:
    """'+0.050 to +0.190': a big number's interval; '' without one."""
    return "" if bounds is None else f"{bounds[0]:+.3f} to {bounds[1]:+.3f}"


def signed(saved: float | None, bounds: Sequence[float] | None) -> str:
    """'+0.123 (+0.100 to +0.150)', a table cell's saving; NO_VALUE without one."""
    if saved is None:
        return NO_VALUE
    return f"{saved:+.3f}" + ("" if bounds is None else f" ({bounds[0]:+.3f} to {bounds[1]:+.3f})")


ABOVE_ALL = 1.005  # a share of the rise that rounds above 100%: the lever saves more than the rise


def share_label(share: float | None) -> str:
    """'106% of the rise', a chart's short note; a share that rounds to 0% keeps a decimal, and its sign."""
    if share is None:
        return "share of the rise unknown"
    return f"{share:.0%} of the rise" if abs(share) >= 0.005 else f"{share:.1%} of the rise"


def percent_of_rise(share: float | None) -> str:
    """share_label in a sentence: above 100%, what that measures (the lever's loss ends below the cut-context
    reference's), and no more: why (the far text put to use, or the recipe lowering the loss on any text) is not
    measured."""
    if share is not None and share >= ABOVE_ALL:
        return f"{share_label(share)}: more than the rise itself"
    return share_label(share)


def layer_list(layers: Sequence[int]) -> str:
    """'3 layers: 5, 11, 17' or '15 layers: 0-4, 6-10, 12-16': runs of consecutive layers as ranges."""
    runs: list[list[int]] = []
    for layer in layers:
        if runs and runs[-1][1] == layer - 1:
            runs[-1][1] = layer
        else:
            runs.append([layer, layer])
    spans = ", ".join(f"{first}" if first == last else f"{first}-{last}" for first, last in runs)
    return f"{len(layers)} layer{'s' if len(layers) != 1 else ''}: {spans}"


def _runs(entries: Sequence[tuple[float, Sequence[int]]]) -> list[tuple[float, int, int]]:
    """Consecutive buckets with the same temperature, from (temperature, bucket) pairs, as (T, first position,
    stop)."""
    runs: list[list] = []
    for temperature, (start, stop) in entries:
        if runs and runs[-1][0] == temperature and runs[-1][2] == start:
            runs[-1][2] = stop
        else:
            runs.append([temperature, start, stop])
    return [tuple(run) for run in runs]


FAMILIES = {Family.FREQUENCY: "frequency change (interpolation)", Family.REMAP: "distance remapping",
            Family.SINK_WINDOW: "sink + window"}  # a recipe family's name, in a list or a chart's legend
SUBJECTS = {Family.FREQUENCY: "a change of the rotary frequencies (interpolation)",
            Family.REMAP: "a distance remapping", Family.SINK_WINDOW: "the sink + window"}  # as a sentence's subject
MOVES = {MassMove.GOES_AWAY: "goes away", MassMove.FALLS: "falls", MassMove.RISES: "rises", MassMove.STAYS: "stays"}


# === How a choice was scored =========================================================================================


def scoring_short(scoring: Scoring) -> str:
    """How a choice was scored, in a few words, for labels and titles."""
    return {Scoring.IN_SAMPLE: "oracle, in-sample", Scoring.CROSS_FIT_ONE_TEXT: "cross-fit on one text",
            Scoring.HELD_OUT_DOCUMENTS: "held out over documents"}[scoring]


def scoring_method(scoring: Scoring, block: int | None) -> str:
    """How a choice was made and scored, in words."""
    if scoring is Scoring.HELD_OUT_DOCUMENTS:
        return "chosen on the other documents and scored on the one left out"
    if scoring is Scoring.CROSS_FIT_ONE_TEXT:
        return f"chosen on alternate blocks of {block} positions and scored on the others"
    return "chosen and scored on the same positions"


def resampling(verdict: ContextVerdict) -> str:
    """What the verdict's resamples draw."""
    if verdict.scoring is Scoring.HELD_OUT_DOCUMENTS:
        return "documents resampled with replacement"
    return f"each fold's positions resampled within the fold in circular blocks of {verdict.block}"


def no_held_out(scoring: Scoring) -> str:
    """Why no choice could be scored apart from its positions."""
    if scoring is Scoring.HELD_OUT_DOCUMENTS:
        return "a single document leaves none to choose on"
    return "every bucket past the trained length holds a single position"


# === The headline numbers ============================================================================================


class Unit(StrEnum):
    NATS_PER_TOKEN = "nats/token"
    POSITION = "position"


@dataclass(frozen=True, kw_only=True)
class Headline:
    """One big number of a verdict: what it is, its value with its interval (or, for a position, its multiple of
    the trained length) and unit, and how it was measured. Formatted only by headline_number and headline_note."""

    label: str
    value: float | None  # None: nothing to measure (the loss does not break)
    interval: tuple[float, float] | None = None
    ratio: float | None = None  # a position's multiple of the trained length
    unit: Unit
    help: str
    bucket: tuple[int, int] | None = None  # a position's bucket [start, stop), said whole: a bucket is no point


def headline_number(headline: Headline) -> str:
    """The big number: '+0.041 nats/token', '1,536', '10,240-11,263' (a bucket of positions), 'does not break'."""
    if headline.value is None:
        return "does not break"
    if headline.unit is Unit.POSITION and headline.bucket is not None:
        return f"{headline.bucket[0]:,}-{headline.bucket[1] - 1:,}"
    if headline.unit is Unit.POSITION:
        return f"{headline.value:,.0f}"
    return f"{headline.value:+.3f} {headline.unit.value}"


def headline_note(headline: Headline) -> str | None:
    """What goes under the big number: its interval ('+0.010 to +0.070') or ratio ('1.5x'); None without one."""
    if headline.ratio is not None:
        return f"{headline.ratio:.3g}x"
    return short_interval(headline.interval) or None


def headline_text(headline: Headline) -> str:
    """The number with its note in brackets, as one line of text."""
    note = headline_note(headline)
    return headline_number(headline) + ("" if note is None else f" ({note})")


def headlines(verdict: ContextVerdict) -> list[Headline]:
    """At most four big numbers, led by the dominant lever (what recovers the rise, with its share): then the
    best constant temperature alone with its interval (the oracle, named so, where it could not be scored apart),
    where the loss breaks, and the best recipe when it is not the lead."""
    decomposition = verdict.decomposition
    said = [_lever_headline(verdict, decomposition.lever(decomposition.dominant)), _gain_headline(verdict),
            _break_headline(verdict)]
    if decomposition.dominant is not Dominant.RECIPE:
        said.append(_recipe_headline(verdict))
    return [item for item in said if item is not None][:4]


def _lever_headline(verdict: ContextVerdict, lever: DecompositionRow | None) -> Headline | None:
    if lever is None or lever.saved is None:
        return None
    share = verdict.decomposition.share_of_rise(lever)
    share = "" if share is None else f" ({percent_of_rise(share)})"
    return Headline(label=f"Brings the loss back: {row_label(lever)}", value=lever.saved, interval=lever.interval,
                    unit=Unit.NATS_PER_TOKEN,
                    help=f"{row_what(lever, verdict)}: {SAVES}, per token over {span(verdict.past)} against T = 1 on "
                         f"the model's own positions{share}; the loss rose {verdict.rise:.2f} nats per token past the "
                         f"trained length, {rise_base_words(verdict)} ({scope(verdict.documents)}).")


def _gain_headline(verdict: ContextVerdict) -> Headline | None:
    gains = verdict.gains
    gain = gains.held_out or gains.oracle
    if gain is None:
        return None
    how = (f"the best T per bucket, {scoring_method(gain.scoring, verdict.block)}" if gains.held_out is not None
           else "the oracle, in-sample: the best T per bucket chosen and scored on the same positions (no "
                "out-of-sample gain could be measured)")
    share = "" if gain.share_of_rise is None else f", {percent_of_rise(gain.share_of_rise)}"
    return Headline(label=f"Best temperature alone ({scoring_short(gain.scoring)})", value=gain.saved,
                    interval=gain.interval, unit=Unit.NATS_PER_TOKEN,
                    help=f"{SAVES[0].upper()}{SAVES[1:]}, per token over {span(verdict.past)}"
                         + (f", {interval_name(verdict)} in brackets ({resampling(verdict)})" if gain.interval
                            else "")
                         + f"; {how}{share} ({scope(verdict.documents)}).")


def _break_rule(verdict: ContextVerdict) -> str:
    low, high = verdict.loss_break.in_context
    return (f"lies above every bucket inside the trained context ({low:.2f}-{high:.2f} nats per token at T = 1) "
            f"beyond its own {interval_name(verdict)} ({scope(verdict.documents)})")


def _break_headline(verdict: ContextVerdict) -> Headline:
    found = verdict.loss_break
    if found.bucket is None:
        return Headline(label="Loss at T = 1 breaks in positions", value=None, unit=Unit.POSITION,
                        help=f"No bucket past the trained length, up to position {verdict.past[1] - 1:,}, "
                             f"{_break_rule(verdict)}.")
    return Headline(label="Loss at T = 1 breaks in positions", value=found.at, ratio=found.ratio,
                    unit=Unit.POSITION, bucket=tuple(found.bucket),
                    help=f"{span(found.bucket)[0].upper()}{span(found.bucket)[1:]}, from {found.ratio:.3g}x the "
                         f"trained length of {verdict.trained_length:,}: the first bucket past it that "
                         f"{_break_rule(verdict)}.")


def _recipe_headline(verdict: ContextVerdict) -> Headline | None:
    """The recipe the answer names (Decomposition.lever: the interpolation alone where it ran, its attention factor
    being a temperature on top), so that the number and the sentence agree."""
    lever = verdict.decomposition.lever(Dominant.RECIPE)
    if lever is None:
        return None
    return Headline(label=f"Best recipe: {row_label(lever)}", value=lever.saved, interval=lever.interval,
                    unit=Unit.NATS_PER_TOKEN,
                    help=f"{row_what(lever, verdict)}: {SAVES}, per token over {span(verdict.past)} against T = 1 on "
                         f"the model's own positions ({scope(verdict.documents)}).")


# === The answer ======================================================================================================


def answer(verdict: ContextVerdict) -> str:
    """The answer in one sentence, chosen by the dominant lever, with the numbers it rests on: which lever brings
    the loss back past the trained length, and the temperature's share."""
    decomposition = verdict.decomposition
    if decomposition.dominant is Dominant.NO_RISE:
        return _no_rise_sentence(verdict)
    if decomposition.families() not in ([], [Family.FREQUENCY]):
        return _families_answer(verdict)
    recipe, temperature = decomposition.lever(Dominant.RECIPE), decomposition.best(LeverKind.TEMPERATURE)
    name = interval_name(verdict)
    parts = [_share(lever, decomposition, name) for lever in (recipe, temperature) if lever is not None]
    said = _rise(verdict) + ", ".join(parts) + _on_top(decomposition, "the interpolation", name)
    if decomposition.dominant is Dominant.RECIPE:
        return said + ". The interpolation does the recovery, not the temperature."
    if decomposition.dominant is Dominant.TEMPERATURE:
        return said + ". The temperature does the recovery: no recipe here recovers as much."
    return said + ". No lever recovers half of the rise: most of it remains."


def _no_rise_sentence(verdict: ContextVerdict) -> str:
    """Where the loss does not rise across positions, what the levers still do on the same positions: the lever
    that saves the most (a recipe as `lever` picks it: the interpolation alone where it ran) and the temperature
    alone, each with its interval, and which of them lowers the loss there (its interval clears 0), if any."""
    decomposition, name = verdict.decomposition, interval_name(verdict)
    said = (f"The loss does not rise past the trained length ({decomposition.rise:+.2f} nats per token "
            f"{rise_base_words(verdict)}; {scope(verdict.documents)})")
    temperature = decomposition.best(LeverKind.TEMPERATURE)
    ran = [lever for lever in (decomposition.lever(Dominant.RECIPE), decomposition.lever(Dominant.TEMPERATURE))
           if lever is not None]
    top = max(ran, key=lambda lever: lever.saved, default=None)
    if top is None:
        return said + "; no lever ran past it."
    named = [_saving(top, name)] + ([_saving(temperature, name)] if temperature not in (None, top) else [])
    if not top.clears_zero:
        return said + ", and no lever lowers it there: " + "; ".join(named) + "."
    who = {LeverKind.RECIPE: "a recipe, not the temperature,", LeverKind.TEMPERATURE: "a temperature, not a recipe,",
           LeverKind.SCHEDULE: "a published schedule"}[top.lever]
    return (said + ", yet on the same positions " + "; ".join(named) + f": {who} lowers the loss past the "
            "trained length all the same.")


def _families_answer(verdict: ContextVerdict) -> str:
    """The answer where more than one family of recipes ran: each family's lever, the temperature alone, what a
    temperature adds on top, and the family that recovers the most, all from the numbers."""
    decomposition = verdict.decomposition
    ranked = sorted((decomposition.family_lever(family) for family in decomposition.families()),
                    key=lambda lever: -lever.saved)
    name = interval_name(verdict)
    parts = [f"{FAMILIES[lever.family]}: {_share(lever, decomposition, name)}" for lever in ranked]
    temperature = decomposition.best(LeverKind.TEMPERATURE)
    if temperature is not None:
        parts.append(f"temperature alone: {_share(temperature, decomposition, name)}")
    said = _rise(verdict) + "; ".join(parts) + _on_top(decomposition, "a recipe", name)
    most = _lead(decomposition, ranked[0], name)
    if decomposition.dominant is Dominant.RECIPE:
        return said + f". {most[0].upper()}{most[1:]}, and a recipe, not the temperature, does the recovery."
    if decomposition.dominant is Dominant.TEMPERATURE:
        return said + f". The temperature does the recovery: no recipe here recovers as much; {most}."
    return said + f". No lever recovers half of the rise: most of it remains; {most}."


def _lead(decomposition: Decomposition, lead: DecompositionRow, name: str) -> str:
    """Which family recovers the most, if its lead over the next family clears 0; else that they recover about
    the same, with the lead and its interval."""
    most = (f"{SUBJECTS[lead.family]} recovers the most of the recipe families ({row_label(lead)}, "
            f"{percent_of_rise(decomposition.share_of_rise(lead))}")
    gap = decomposition.family_gap()
    if gap is None or gap.interval is None:
        return most + ")"
    low, high = gap.interval
    by = f"{gap.saved:+.3f} nats per token more than {gap.against}, {name} {low:+.3f} to {high:+.3f}"
    if low > 0:
        return f"{most}; {by})"
    return f"the recipe families recover about the same ({row_label(lead)} saves {by}, which does not clear 0)"


def rise_base_words(verdict: ContextVerdict) -> str:
    """What the rise is measured against: the same words read with the context cut to the trained length, or the
    text's own earlier positions (other words: the text's own difficulty is mixed in)."""
    if verdict.decomposition.rise_base is RiseBase.CUT_CONTEXT:
        return "on the same words, against reading them with at most the trained length before them"
    return ("against the text's earlier positions, which are other words: how hard each part of the text is is "
            "mixed in")


def _rise(verdict: ContextVerdict) -> str:
    same = verdict.same_token_rise
    interval = "" if same is None or same.interval is None else \
        f", {_spread_words(same)} {same.interval[0]:.2f} to {same.interval[1]:.2f}"
    return (f"Past the trained length the loss (lower is better) rises {verdict.rise:.2f} nats per token "
            f"{rise_base_words(verdict)} ({scope(verdict.documents)}{interval}); ")


def _spread_words(same: SameTokenRise) -> str:
    return spread_name(same.spread, same.documents)


def _on_top(decomposition: Decomposition, what: str, name: str) -> str:
    """'; a temperature on top of `what`: ...', every temperature on a recipe against the recipe at T = 1."""
    on_top = decomposition.on_top()
    if not on_top:
        return ""
    return f"; a temperature on top of {what}: " + ", ".join(
        f"{row_label(lever)} saves {lever.saved:+.3f} more "
        f"({_with_interval(lever, 3, percent_of_rise(decomposition.share_of_rise(lever)), name=name)})"
        for lever in on_top)


def _saving(lever: DecompositionRow, name: str) -> str:
    """'label saves +0.344 nats per token (95% interval ...)', for a lever without a share of a rise."""
    interval = _with_interval(lever, 3, name=name)
    return f"{row_label(lever)} saves {lever.saved:+.3f} nats per token" + (f" ({interval})" if interval else "")


def _share(lever: DecompositionRow, decomposition: Decomposition, name: str) -> str:
    """'label saves +2.27 nats per token (95% interval +2.10 to +2.45; 101% of the rise)': the figure with its
    interval first, then its share of the rise; a saving under 0.1 keeps a third decimal, so that a small one is
    not rounded into its interval's neighbour."""
    digits = 2 if abs(lever.saved) >= 0.1 else 3
    return (f"{row_label(lever)} saves {lever.saved:+.{digits}f} nats per token "
            f"({_with_interval(lever, digits, percent_of_rise(decomposition.share_of_rise(lever)), name=name)})")


def _with_interval(lever: DecompositionRow, digits: int, then: str = "", *, name: str) -> str:
    """'95% interval +2.10 to +2.45', followed by '; `then`' where there is more to say; `then` alone (or '') for
    a lever without resamples. The one writer of a lever's interval in a sentence."""
    said = [] if lever.interval is None else [f"{name} {lever.interval[0]:+.{digits}f} to "
                                              f"{lever.interval[1]:+.{digits}f}"]
    return "; ".join(said + ([then] if then else []))


# === The verdict in full =============================================================================================


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
                      for t, start, stop in _runs([(entry.temperature, entry.bucket) for entry in best]))
    above = sum(entry.temperature > 1 for entry in best)
    below = sum(entry.temperature < 1 for entry in best)
    said = [f"Best T per bucket past the trained length (in-sample): T = {where}: above 1 (softer) in {above} of "
            f"{len(best)} buckets, below 1 (sharper) in {below}."]
    unsure = [entry for entry in best if entry.temperature != 1 and entry.temperature_interval
              and entry.temperature_interval[0] <= 1 <= entry.temperature_interval[1]]
    if unsure:
        said.append(f"In {len(unsure)} of those buckets the {interval_name(verdict)} of the best temperature "
                    "includes 1: there T = 1 is not ruled out.")
    return said


def edge_sentence(verdict: ContextVerdict) -> str | None:
    groups: dict[tuple, list] = {}
    for edge in verdict.gains.edges:
        groups.setdefault((edge.recipe, edge.temperature, edge.edge), []).append(edge.bucket)
    clauses = []
    for (recipe, temperature, edge), buckets in groups.items():
        runs = _runs([(0, bucket) for bucket in buckets if bucket is not None])
        where = [span([start, stop]) for _, start, stop in runs]
        where += ["the whole past region"] * (None in buckets)
        on = "" if recipe is None else f" on {recipe}"
        clauses.append(f"T = {temperature:g}{on}, the {edge.value} temperature tried there, is the best for "
                       f"{' and '.join(where)} (the best may lie {'above' if edge is Edge.LARGEST else 'below'} it)")
    return f"On the grid's edge: {'; '.join(clauses)}." if clauses else None


# --- where the loss breaks ------------------------------------------------------------------------------------------


def break_sentence(verdict: ContextVerdict) -> str:
    found, where = verdict.loss_break, scope(verdict.documents)
    low, high = found.in_context
    if found.bucket is None:
        return (f"The loss at T = 1 does not break ({where}): up to position {verdict.past[1] - 1:,} no bucket "
                f"past the trained length rises above the range of the buckets inside it ({low:.2f}-{high:.2f} "
                f"nats per token) beyond its own {interval_name(verdict)}; this compares other parts of the text, "
                "not the same words.")
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
        start = shift.beyond_uniform_from
        if start is not None:
            shares = [row.uniform_share for row in rows if row.bucket[0] >= start]
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


def layer_type_name(kind: LayerTypeMass) -> str:
    """'sliding-window layers of 512 keys' or 'global (full-attention) layers'."""
    return "global (full-attention) layers" if kind.sliding_span is None else \
        f"sliding-window layers of {kind.sliding_span:,} keys"


def layer_type_short(kind: LayerTypeMass) -> str:
    """A layer type in a table cell: 'sliding 512' or 'global'."""
    return "global" if kind.sliding_span is None else f"sliding {kind.sliding_span:,}"


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
    return said + "." + "".join(f" {_uniform_words(kind)}" for kind in verdict.layer_types
                                if kind.share is not None and kind not in blind)


def _uniform_words(kind: LayerTypeMass) -> str:
    """Whether a layer type's share of its non-sink mass on untrained distances is above what uniform attention over
    the keys it sees would give (past.uniform_share), and from where."""
    name = layer_type_name(kind)
    shares = f"{kind.share[0]:.1%} -> {kind.share[-1]:.1%} of their non-sink mass"
    if kind.beyond_uniform_from is None:
        return (f"In the {name} that is {shares}, below what uniform attention over the keys they see would give in "
                f"every past bucket (up to {max(kind.uniform_share):.0%}): they keep mostly to distances they were "
                "trained on.")
    index = next(i for i, (own, even) in enumerate(zip(kind.share, kind.uniform_share, strict=True)) if own > even)
    there = kind.uniform_share[index:]
    return (f"In the {name} that is {shares}; from position {kind.beyond_uniform_from:,} on, above what uniform "
            f"attention over the keys they see would give ({min(there):.0%}-{max(there):.0%} there), so keys at "
            "distances never trained draw more than their number.")


# --- the decomposition and the recipe families ----------------------------------------------------------------------


def _mass_bracket(row: DecompositionRow) -> str:
    """' [0.020, goes away]': a row's untrained-distance mass past the trained length and its word; a remapping's
    on the remapped distances, with the distances in the text's beside it."""
    if row.untrained is None:
        return ""
    said = f"{row.effective_untrained_mass_past:.3f}"
    if row.remaps:
        raw = row.untrained_mass_past
        return f" [{said} on the remapped distances, {MOVES[row.untrained]}" + \
            ("" if raw is None else f"; {raw:.3f} on the distances in the text") + "]"
    return f" [{said}, {MOVES[row.untrained]}]"


def _has_recipes(decomposition: Decomposition) -> bool:
    return any(row.kind in (RowKind.RECIPE, RowKind.OWN_TEMPERATURE) for row in decomposition.rows)


def decomposition_sentence(verdict: ContextVerdict) -> str | None:
    decomposition = verdict.decomposition
    if not _has_recipes(decomposition):
        return None
    reference, *rows = decomposition.table
    mass = ""
    if reference.untrained_mass_past is not None and decomposition.untrained_constant_range:
        low, high = decomposition.untrained_constant_range
        mass = (f"; untrained-distance mass past it in brackets, {reference.untrained_mass_past:.3f} at T = 1 "
                f"and {low:.3f}-{high:.3f} under the constant temperatures")
    if mass and any(row.remaps for row in rows):
        mass += (", for a distance remapping on the distances it gives the model (in the text, the keys stay as "
                 "far back)")
    name = interval_name(verdict)
    parts = [f"{row_label(row)} {row.saved:+.3f}{bracket(row.interval, name=name)}" + _mass_bracket(row)
             for row in rows if row.saved is not None]
    return (f"Decomposition past the trained length ({scope(verdict.documents)}), nats per token saved against T = 1 "
            f"on the model's own positions ({SAVES}{mass}): " + "; ".join(parts) + ".")


def families_sentence(verdict: ContextVerdict) -> str | None:
    """The recipe families side by side, where more than the frequency changes ran (None otherwise): each
    family's recipe that saves the most at T = 1, its share of the rise, and where it leaves the
    untrained-distance mass (for a remapping on the distances it gives and in the text)."""
    decomposition = verdict.decomposition
    if decomposition.families() in ([], [Family.FREQUENCY]):
        return None
    parts, name = [], interval_name(verdict)
    for family in decomposition.families():
        lever = decomposition.family_lever(family)
        share = decomposition.share_of_rise(lever)
        share = "" if share is None else f", {percent_of_rise(share)}"
        parts.append(f"{FAMILIES[family]}, {row_label(lever)}: {lever.saved:+.3f}{bracket(lever.interval, name=name)}"
                     f"{share}"
                     + _mass_bracket(lever))
    said = (f"The recipe families past the trained length, each by its recipe that saves the most at T = 1 "
            f"({scope(verdict.documents)}; {SAVES}; untrained-distance mass past it in brackets): "
            + "; ".join(parts) + ".")
    gap = decomposition.family_gap()
    if gap is None or gap.saved is None:
        return said
    return (f"{said} The first two on the same resamples: {row_label(gap)} {gap.saved:+.3f}"
            f"{bracket(gap.interval, name=name)}.")


# --- the published schedules ----------------------------------------------------------------------------------------


def schedules_sentence(verdict: ContextVerdict) -> str | None:
    schedules = verdict.decomposition.schedules()
    if not schedules:
        return None
    ranked = sorted(schedules, key=lambda row: -row.saved)
    name = interval_name(verdict)
    return (f"Published schedules past the trained length ({scope(verdict.documents)}; {SAVES}; each schedule's "
            "logit multiplier m shown as the temperature it amounts to, T = 1 / m): "
            + "; ".join(_schedule_text(row, name) for row in ranked) + ".")


def _temperatures(bounds: Sequence[float]) -> str:
    """A multiplier range as the temperatures it amounts to: 'T 0.93-1' for m 1-1.08."""
    low, high = sorted((1 / bounds[1], 1 / bounds[0]))
    return f"T {low:.3g}" + (f"-{high:.3g}" if f"{high:.3g}" != f"{low:.3g}" else "")


def _schedule_text(row: DecompositionRow, name: str) -> str:
    text = f"{row.view} {row.saved:+.3f}{bracket(row.interval, name=name)}"
    multipliers = row.multipliers or Multipliers(trained_context=None, past=None)
    if multipliers.past is None:
        return text
    text += f" ({_temperatures(multipliers.past)} past it"
    inside = multipliers.trained_context
    if inside and inside[0] < 1:
        text += f"; softer before the trained length, up to T = {1 / inside[0]:.3g} there"
        if row.saved_inside is not None:
            text += f", which costs {-row.saved_inside:.3f} nats per token inside it"
    return text + ")"


def schedule_words(multipliers: Multipliers | None) -> str:
    """What a schedule does inside the trained context and past it, as the temperatures it amounts to."""
    inside, past = (None, None) if multipliers is None else (multipliers.trained_context, multipliers.past)
    words = []
    if inside is not None and min(inside) < 1:
        words.append(f"softens before the trained length (up to T = {1 / min(inside):.3g})")
    if past is not None and max(past) > 1:
        words.append(f"sharpens past it (down to T = {1 / max(past):.3g})")
    return "a published schedule that " + " and ".join(words) if words else "a published schedule"


def schedules_line(verdict: ContextVerdict, where: str = "here") -> str | None:
    """The best and the worst published schedule on one text (`where`: "here", or "on <model>"), with what each
    does to the logits (m); None without schedules."""
    schedules = [row for row in verdict.decomposition.levers if row.lever is LeverKind.SCHEDULE
                 and row.saved is not None]
    if not schedules:
        return None
    best, worst = max(schedules, key=lambda row: row.saved), min(schedules, key=lambda row: row.saved)
    said = (f"**Published schedules** sharpen past the trained length (their T falls below 1). Best {where}: "
            f"{best.view}, {best.saved:+.3f} past it ({schedule_words(best.multipliers)}); worst: {worst.view}, "
            f"{worst.saved:+.3f} ({schedule_words(worst.multipliers)}).")
    inside = best.multipliers.trained_context if best.multipliers else None
    if inside is None or min(inside) >= 1 or best.saved_inside is None or best.saved_inside >= 0:
        return said
    only_past = [row for row in schedules if row.multipliers and row.multipliers.trained_context
                 and all(abs(m - 1) < 1e-9 for m in row.multipliers.trained_context)]
    alike = "" if not only_past else (" The schedules that change nothing before it save "
                                      + ", ".join(f"{row.view} {row.saved:+.3f}" for row in only_past) + ".")
    return (said + f" The gain of {best.view} comes with softening every position before the trained length, "
            f"which costs {-best.saved_inside:.3f} nats per token there." + alike)


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


# === The decomposition's rows and table ==============================================================================


def _prefix(rope: Rope | None) -> str:
    return "" if rope is None else f"{rope.label} + "


def row_label(row: DecompositionRow) -> str:
    """A row's name in a table, a chart and a sentence: the pass it is ('yarn-rope (s=2) + T=1'), a choice of
    temperature ('best T per bucket (held out over documents)'), a comparison ('A vs B') or a fitted value."""
    kind = row.kind
    if kind in (RowKind.REFERENCE, RowKind.RECIPE, RowKind.SCHEDULE):
        return row.view
    if kind in (RowKind.ORACLE, RowKind.HELD_OUT):
        return f"{_prefix(row.rope)}best T per bucket ({scoring_short(row.scoring)})"
    if kind is RowKind.ON_TOP:
        return f"{row.rope.label} + best T per bucket vs T=1 on it ({scoring_short(row.scoring)})"
    if kind is RowKind.FITTED:
        return f"{row.fitted.knob} fitted on {row.rope.label} (held out)"
    return f"{row.view} vs {row.against}"  # OWN_TEMPERATURE, FAMILY_GAP


def recipe_words(rope: Rope) -> str:
    """What a recipe is: its name, and a remapping's frequencies or YaRN's own temperature."""
    info = recipe_info(rope.kind)
    if family_of(rope) is Family.REMAP:
        return f"a distance remapping: {info.name}, the rotary frequencies kept"
    if info.temperature:
        return f"{info.name}: its interpolation and its own temperature (logits x {yarn_multiplier(rope.factor):.3g})"
    return info.name


def row_what(row: DecompositionRow, verdict: ContextVerdict) -> str:
    """What a row is, in words: how its temperature was chosen, what its recipe changes."""
    kind, rope = row.kind, row.rope
    alone = "alone" if rope is None else f"on {rope.label}"
    if kind is RowKind.REFERENCE:
        return "the model as trained"
    if kind is RowKind.RECIPE:
        return recipe_words(rope)
    if kind in (RowKind.ORACLE, RowKind.HELD_OUT):
        return f"the best constant temperature {alone}, {scoring_method(row.scoring, verdict.block)}"
    if kind is RowKind.ON_TOP:
        return (f"the best constant temperature on {rope.label} against {rope.label} at T = 1, "
                f"{scoring_method(row.scoring, verdict.block)}")
    if kind is RowKind.OWN_TEMPERATURE:
        return (f"{recipe_info(rope.kind).name}'s own temperature on top of its interpolation "
                f"(logits x {yarn_multiplier(rope.factor):.3g})")
    if kind is RowKind.FAMILY_GAP:
        second = verdict.decomposition.row_of(row.against)
        return (f"the {FAMILIES[row.family]} that saves the most against the {FAMILIES[second.family]} that saves the "
                "most, both at T = 1")
    if kind is RowKind.SCHEDULE:
        return schedule_words(row.multipliers)
    fitted = row.fitted
    low, high = fitted.interval
    return (f"a {fitted.family} {fitted.knob} on top of the recipe at T = 1, each document scored with the "
            f"{fitted.knob} fitted on the other fold's documents (`make fit`); fitted on all the documents it is "
            f"{fitted.value:.3f} (95% interval {low:.3f}-{high:.3f})")


def decomposition_columns(verdict: ContextVerdict) -> tuple[str, ...]:
    """The decomposition table's columns, its saving's spread named as the verdict's (interval_name)."""
    return ("view", "what it is", f"saves past the trained length ({interval_name(verdict)})",
            "untrained-distance mass past it")



BY_LAYER_TYPE = "untrained-distance mass past it, by layer type"


def decomposition_table(verdict: ContextVerdict) -> list[dict[str, str]]:
    """The decomposition past the trained length as table rows, each view with what it is, what it saves
    against T = 1 on the model's own positions (with its spread) and where it leaves the untrained-distance mass;
    empty without a RoPE recipe (then it only repeats the in-sample sentence)."""
    if not _has_recipes(verdict.decomposition):
        return []

    def mass(row: DecompositionRow) -> str:
        raw, effective = row.untrained_mass_past, row.effective_untrained_mass_past
        moved = f" ({MOVES[row.untrained]})" if row.untrained and row.kind is not RowKind.REFERENCE else ""
        if raw is None:
            return NO_VALUE
        if not row.remaps:
            return f"{raw:.3f}{moved}"
        said = "not measured" if effective is None else f"{effective:.3f}{moved}"
        return f"{said} on the remapped distances; {raw:.3f} in the text"

    def by_type(row: DecompositionRow) -> dict[str, str]:
        if not verdict.layer_types:
            return {}
        masses = row.untrained_mass_by_layer_type
        return {BY_LAYER_TYPE: NO_VALUE if masses is None else "; ".join(
            f"{layer_type_short(kind)}: {value:.3f}"
            for kind, value in zip(verdict.layer_types, masses, strict=True))}

    columns = decomposition_columns(verdict)
    return [dict(zip(columns, (row_label(row), row_what(row, verdict), signed(row.saved, row.interval), mass(row)),
                     strict=True)) | by_type(row)
            for row in verdict.decomposition.table if row.saved is not None]


# === The committed sweeps side by side ===============================================================================

SIDE_BY_SIDE_COLUMNS = ("model", "trained length", "text", "tokens", "loss at T = 1 breaks in", "loss rise",
                        "best T alone", "best recipe alone", "temperature on top", "untrained-distance mass at T = 1")
SIDE_BY_SIDE_CAPTION = (
    "One row per committed sweep, one model and one text each, past its trained length in nats per token "
    f"({SAVES}; 95% intervals in brackets): the loss rise is on the same words where the cut context was "
    "measured (else against the text's earlier positions), the best T alone is cross-fit on the text, the best "
    "recipe runs at T = 1, the temperature on top is what a temperature adds to a recipe, and the "
    "untrained-distance mass (sink excluded) is T = 1's, per layer type where the model has several.")


def side_by_side_row(document: SweepDocument) -> dict[str, str]:
    """One sweep's row: its model, text and length, and its verdict's numbers (NO_VALUE where it has none: a text
    that does not reach past the trained length, or a lever that did not run). Every number is the sweep's own
    verdict, said for the model it ran on; nothing is pooled across models."""
    row = {"model": model_name(document.model), "trained length": f"{document.trained_length:,}",
           "text": document.text_name, "tokens": f"{document.n_tokens:,}"}
    verdict = document.verdict
    if verdict is None:
        return row | dict.fromkeys(SIDE_BY_SIDE_COLUMNS[4:], NO_VALUE)
    decomposition, found = verdict.decomposition, verdict.loss_break
    recipe = decomposition.lever(Dominant.RECIPE)
    temperature = decomposition.best(LeverKind.TEMPERATURE)
    return row | {
        "loss at T = 1 breaks in": "does not break" if found.bucket is None else
        f"{span(found.bucket)} ({found.ratio:.3g}x)",
        "loss rise": f"{verdict.rise:+.2f}",
        "best T alone": NO_VALUE if temperature is None else signed(temperature.saved, temperature.interval),
        "best recipe alone": NO_VALUE if recipe is None else f"{row_label(recipe)}: "
                                                             f"{signed(recipe.saved, recipe.interval)}",
        "temperature on top": "; ".join(f"{row_label(lever)}: {signed(lever.saved, lever.interval)}"
                                        for lever in decomposition.on_top()) or NO_VALUE,
        "untrained-distance mass at T = 1": _untrained_at_1(verdict)}


def _untrained_at_1(verdict: ContextVerdict) -> str:
    """T = 1's untrained-distance mass past the trained length: per layer type where the model has several."""
    if verdict.layer_types:
        return "; ".join(f"{layer_type_short(kind)}: {kind.untrained_mass_past:.3f}" for kind in verdict.layer_types)
    rows = verdict.decomposition.table
    mass = rows[0].untrained_mass_past if rows else None
    return NO_VALUE if mass is None else f"{mass:.3f}"


def side_by_side_rows(documents: Sequence[SweepDocument]) -> list[dict[str, str]]:
    return [side_by_side_row(document) for document in documents]


# === The corpus per domain ===========================================================================================

DOMAINS_CAPTION = (
    "Per domain of the corpus, past the trained length: NLL per token at T = 1 and what each view saves "
    "against it (positive = better), pooled over the domain's documents, each document's own in brackets. "
    "Nothing is chosen on these numbers; they say whether the corpus's answer holds on each kind of text.")


def domain_rows(summary: TuneSummary) -> list[dict[str, str]]:
    """One row per domain: its name, documents, T = 1's NLL past the trained length, then one column per view, each
    view's saving pooled over the domain's documents with each document's own in brackets (one to four documents
    per domain give no interval)."""
    return [{"domain": entry.domain, "documents": str(len(entry.documents)),
             "NLL at T = 1": f"{entry.nll_past_at_1:.3f}",
             **{lever.label: f"{lever.saved:+.3f} (" + ", ".join(f"{v:+.2f}" for v in lever.per_document) + ")"
                for lever in entry.levers}} for entry in summary.domains]


def domain_sentence(summary: TuneSummary, recipe: str) -> str | None:
    """Whether the answer holds on every kind of text: the range over domains of what `recipe` (a view's label)
    saves, against the range of the best constant temperature's saving per domain (in-sample: chosen per domain,
    which flatters the temperature). None without domains or without that view."""
    found = domain_ranges(summary, recipe)
    if found is None:
        return None
    ours, best, domains = found
    sizes = sorted({len(entry.documents) for entry in summary.domains})
    each = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
    return (f"Per kind of text ({domains} kinds, each pooled over its {each} document"
            f"{'s' if sizes != [1] else ''}; a range's ends are single kinds, not an interval): {recipe} saves "
            f"{ours[0]:+.2f} to {ours[1]:+.2f} nats per token past the trained length; the best constant T for each "
            f"kind, chosen on it (in-sample), {best[0]:+.2f} to {best[1]:+.2f}.")


# === The fits ========================================================================================================

# what each held-out gain is measured against, as the sentences name it, in verdicts.fit.REFERENCES' order
AGAINST = {
    "plain": "the model as trained (T = 1, its own positions)",
    "recipe_at_1": "the recipe at T = 1 (the temperature's own share)",
    "recipe": "the recipe as published (with its own temperature)",
    "best_constant": "the best constant T on the model's own positions, chosen on the training documents",
    "best_schedule": "the best published schedule, chosen on the training documents",
}
FIT_COLUMNS = ("fit", "tokens", "fitted", "logit multiplier", "YaRN's law", "saved vs T = 1", "vs recipe at T = 1",
               "vs recipe as published", "documents")


def fit_name(summary: FitSummary) -> str:
    """'constant T on yarn-rope (s=2)'."""
    on = "the model's own positions" if summary.rope is None else summary.rope.label
    return f"{summary.family} {summary.knob} on {on}"


def _gain_cell(entry: Gain | None) -> str:
    return NO_VALUE if entry is None else signed(entry.saved, entry.interval)


def fit_row(summary: FitSummary) -> dict[str, str]:
    """One line of the fit table: what was fitted, where, and the held-out gains with their intervals."""
    gains = summary.held_out.gains
    low, high = summary.interval
    multiplier, yarn = summary.multiplier, law(summary)
    fitted = f"{summary.knob} = {summary.parameter:.3f} ({low:.3f}-{high:.3f})" + (" at a bound" if summary.at_bound
                                                                                  else "")
    return {
        "fit": fit_name(summary), "tokens": f"{summary.settings.max_tokens:,}", "fitted": fitted,
        "logit multiplier": (f"{multiplier.fitted:.3f} ({multiplier.interval[0]:.3f}-"
                             f"{multiplier.interval[1]:.3f})") if multiplier else NO_VALUE,
        "YaRN's law": NO_VALUE if yarn is None else f"{yarn.yarn_law:.3f} at s = {yarn.scale:g}",
        "saved vs T = 1": _gain_cell(gains.get("plain")),
        "vs recipe at T = 1": _gain_cell(gains.get("recipe_at_1")),
        "vs recipe as published": _gain_cell(gains.get("recipe")),
        "documents": f"{len(summary.documents)} in {len(summary.folds)} folds",
    }


def fit_headline(summary: FitSummary) -> str:
    yarn = law(summary)
    low, high = summary.interval
    resolved = "" if high - low > 2 * summary.tolerance else (
        f"; the search stops at a tolerance of {summary.tolerance:g}, so values are not told apart finer than that")
    text = (f"Fitted on {len(summary.documents)} documents, {fit_name(summary)}: {summary.knob} = "
            f"{summary.parameter:.3f} ({low:.3f}-{high:.3f} over documents{resolved})")
    if yarn is not None:
        text += (f", a logit multiplier of {yarn.fitted:.3f} against {yarn.yarn_law:.3f} from "
                 f"YaRN's law at s = {yarn.scale:g}")
    return text + "."


LAW_POSITIONS = {
    LawPosition.WITHIN: "lies within the fitted multiplier's interval over documents",
    LawPosition.BELOW: "is below the fitted multiplier's interval over documents (the fit sharpens more than the law)",
    LawPosition.ABOVE: "is above the fitted multiplier's interval over documents (the law sharpens more than the fit)",
}


def fit_sentences(summary: FitSummary) -> list[str]:
    """A fit's verdict: the fitted value, where YaRN's law lies against it, each held-out gain judged by its
    interval, what the fit costs inside the trained length, and its scope."""
    gains = summary.held_out.gains
    said = [fit_headline(summary)]
    if summary.at_bound:
        said.append(f"A fold's fit sits at the edge of the searched interval {list(summary.bounds)}: the minimum may "
                    "lie beyond it.")
    if (yarn := law(summary)) is not None:
        said.append(f"YaRN's law, (0.1 ln s + 1)^2 = {yarn.yarn_law:.3f}, {LAW_POSITIONS[law_position(yarn)]}.")
    for name in FIT_REFERENCES:
        entry = gains.get(name)
        if entry is None:
            continue
        against = _against(summary, name)
        low, high = entry.interval
        verdict = {Judgement.BETTER: f"the fit beats {against}", Judgement.WORSE: f"the fit loses to {against}",
                   Judgement.NO_DIFFERENCE: f"the fit and {against} do not differ measurably"}[judge(entry)]
        said.append(f"On the held-out documents, past the trained length, {verdict}: "
                    f"{entry.saved:+.3f} nats per token ({low:+.3f} to {high:+.3f})" + _scale(summary, name, entry)
                    + ".")
    said.append(f"In context (before the trained length) the fit saves {-summary.held_out.in_context_change:+.4f} "
                "nats per token against T = 1 (negative: it costs there).")
    said.append(f"Scope: one model, {len(summary.documents)} documents of one corpus; not a law.")
    return said


def _against(summary: FitSummary, name: str) -> str:
    """What a held-out gain is against (AGAINST), and for the best constant T, what it was chosen among: where T = 1
    was the only constant temperature compared, the "best" is T = 1 itself, and the sentence says so."""
    if name == "best_constant" and summary.compared_temperatures == (1.0,):
        return "T = 1, the only constant temperature compared here (no grid of temperatures to choose from)"
    if name == "best_constant" and summary.compared_temperatures:
        grid = ", ".join(f"{t:g}" for t in summary.compared_temperatures)
        return f"{AGAINST[name]} among T = {grid}"
    return AGAINST[name]


def _scale(summary: FitSummary, name: str, entry: Gain) -> str:
    """Each gain on the scale of what it contains: against a reference on the model's own positions, the fit's
    gain is mostly the interpolation's (plain minus the temperature's own share, recipe_at_1); against the
    recipe as published, its gain next to the recipe's own (plain minus it)."""
    gains = summary.held_out.gains
    plain, own = gains.get("plain"), gains.get("recipe_at_1")
    if summary.rope is None or plain is None:
        return ""
    if name in ("best_constant", "best_schedule") and own is not None:
        return (f"; most of it is the interpolation's: against T = 1 on the model's own positions the fit saves "
                f"{plain.saved:+.3f}, of which {own.saved:+.3f} is its temperature on top of the interpolation")
    if name == "recipe":
        recipe = plain.saved - entry.saved
        share = f", {entry.saved / recipe:.1%} of it" if recipe > 0 else ""
        return f", next to the recipe's own {recipe:+.3f} against T = 1{share}"
    return ""


def fit_point_label(summary: FitSummary) -> str:
    """A fit's point on the chart against YaRN's law: 'constant T on yarn-rope (s=2), 16,384 tokens'."""
    return f"{fit_name(summary)}, {summary.settings.max_tokens:,} tokens"


# === One report: what each temperature or schedule did ===============================================================


def direction_words(direction: Direction) -> str:
    """Which way a result moved the logit multiplier m against T = 1, in words."""
    way = direction.kind
    if way is Way.UNCHANGED:
        return "leaves the logits unchanged (m = 1)"
    verb = "softens" if way is Way.SOFTER else "sharpens"
    if direction.smallest == direction.largest:
        return f"{verb} attention (m = {direction.smallest:.3g} {'<' if way is Way.SOFTER else '>'} 1)"
    if way in (Way.SOFTER, Way.SHARPER):
        return f"{verb} attention (m from {direction.smallest:.3g} to {direction.largest:.3g})"
    return (f"is softer than T = 1 on {direction.softer_share:.0%} of the measured queries and sharper on "
            f"{direction.sharper_share:.0%} (m from {direction.smallest:.3g} to {direction.largest:.3g})")


def problems(finding: Finding, reference: Finding, answer_text: str = "") -> list[str]:
    """The plain-language reasons behind a finding (empty when there is nothing to flag)."""
    said = []
    if finding.near_uniform_layers and finding.direction.kind is not Way.SHARPER:
        said.append(f"near-uniform attention (normalized entropy > {NEAR_UNIFORM}) in "
                    f"{finding.near_uniform_layers} of {finding.n_layers} layers")
    if finding.near_one_hot_layers and finding.direction.kind is not Way.SOFTER:
        said.append(f"attention on a single key (normalized entropy < {NEAR_ONE_HOT}) in "
                    f"{finding.near_one_hot_layers} of {finding.n_layers} layers")
    if finding.loss_rose:
        said.append(f"loss {finding.loss:.2f}, {finding.loss_ratio:.1f}x that of {reference.label}")
    if finding.answer_dropped:
        said.append(f"the chance of the whole answer {answer_text!r} falls from {reference.answer_probability:.2f} to "
                    f"{finding.answer_probability:.2f}")
    return said


def finding_sentence(finding: Finding, reference: Finding, answer_text: str = "",
                     head: str | None = None) -> tuple[str, str] | None:
    """(level, text) for a page or the command line: level 'warning' for a verdict in a direction, 'info' for
    problems without one; None when there is nothing to say. `head` replaces the label and its direction words."""
    reasons = problems(finding, reference, answer_text)
    outcome = finding.verdict
    if outcome is None and not reasons:
        return None
    head = head or f"{finding.label} {direction_words(finding.direction)}"
    if outcome in (Outcome.OVER_SOFTENED, Outcome.OVER_SHARPENED):
        return "warning", f"{head} and is {outcome.value}: " + "; ".join(reasons) + "."
    if outcome is Outcome.LOSS_ROSE:
        return "warning", f"{head}; the loss rose: " + "; ".join(reasons) + "."
    return "info", f"{head}: " + "; ".join(reasons) + "."


def mass_shift_lines(found: Sequence[Finding], base: int) -> list[str]:
    """'T=2 vs T=1: sink -0.158, recent -0.109, distant +0.266' for every result but the reference."""
    reference = found[base].label
    return [f"{f.label} vs {reference}: sink {f.mass_shift['sink_mass']:+.3f}, recent "
            f"{f.mass_shift['recent_mass']:+.3f}, distant {f.mass_shift['distant_mass']:+.3f}"
            for i, f in enumerate(found) if i != base]


# === Descriptions stored with the result files =======================================================================
# How a result was computed, written into its file when it is made (a sweep's and a tune's bootstrap, a fit's
# method): said here like every other sentence, stored there as its record's field.

SWEEP_BOOTSTRAP = "moving-block bootstrap over the positions of each bucket"
CORPUS_BOOTSTRAP = ("documents resampled with replacement; the NLL of a bucket is pooled over the positions of the "
                    "documents drawn (sum / count)")
def stale_reference_note(lead: int) -> str:
    """Where a corpus's cut-context windows read the raw text while the model's tokenizer puts `lead` tokens (its
    BOS) before a text, as its sweep's windows read them: the rise below is not yet on a fresh read's reference."""
    what = "the BOS token" if lead == 1 else f"the {lead} tokens (the BOS first)"
    return (f"Not yet remeasured: these documents' cut-context windows read the raw text, without {what} the "
            "tokenizer puts before a text and the full read starts with, "
            "where the sweep's windows read it first; windows that start with it read the same words better, so "
            "the rise below is too small and its shares too large until the tune is rerun to remeasure them.")


CORPUS_RANGE = ("too few documents for a bootstrap: the range of the documents, each alone (its NLL of a bucket "
                "over its own positions)")


def spread_method(bootstrap, documents: int | None = None) -> str:
    """How a sweep's or a corpus's spreads were made, for a caption: "95% interval over 1,000 resamples (...)", or
    below MIN_FOR_INTERVAL documents "range of the 4 documents (...)" (the record's spread says which)."""
    block = "" if bootstrap.block is None else f", blocks of {bootstrap.block:,} positions"
    if getattr(bootstrap, "spread", Spread.INTERVAL_95) is Spread.RANGE:
        return f"{spread_name(Spread.RANGE, documents)} ({bootstrap.method})"
    return f"{bootstrap.confidence:.0%} interval over {bootstrap.resamples:,} resamples ({bootstrap.method}{block})"
LMEVAL_TOKENIZER = "the model's own tokenizer, saved to a temporary folder"  # what RULER built its samples with
FIT_OPTIMIZER = ("scipy.optimize.minimize_scalar(method='bounded'): Brent's method on the pooled next-token NLL of "
                 "the training documents' positions past the trained length")


def fit_held_out_method() -> str:
    return ("each document is scored with the value fitted on the other folds' documents; gains pooled over its "
            f"positions past the trained length; {CONFIDENCE:.0%} bootstrap over the held-out documents "
            f"({BOOTSTRAP_RESAMPLES} resamples), saved = reference NLL minus fitted NLL")


def fit_spread_method(documents: int, resamples: int, window: float) -> str:
    return (f"{CONFIDENCE:.0%} percentile bootstrap over the {documents} documents ({resamples} resamples) of the "
            f"minimum of their summed NLL curves past the trained length, each document's curve a quadratic "
            f"through its fold's evaluations within {window:g} of the fold's best")


def fit_reused(source: str, reused: int, comparisons: int, largest: float) -> str:
    """What a fit read from a tune's rows instead of computing it (fit --compare-from)."""
    return (f"{source}: {reused} of the {comparisons} comparisons read from the tune's rows, checked against this "
            f"fit's own T = 1 pass (largest difference {largest:.1e} nats per token past the trained length)")


# === The terminal tables =============================================================================================


def fit_table(summary: FitSummary) -> str:
    """A few lines for the terminal: the fitted value, its range, and the held-out gains."""
    knob, multiplier = summary.knob, summary.multiplier
    on = f" on {summary.rope.label}" if summary.rope else ""
    lines = [f"{summary.model}: {summary.family} family{on}, {summary.evaluations} evaluations over "
             f"{len(summary.folds)} folds; {knob} = {summary.parameter:.4f} ({CONFIDENCE:.0%} interval over "
             f"documents {summary.interval[0]:.4f}-{summary.interval[1]:.4f})"
             + (f"; at the edge of the searched interval {list(summary.bounds)}: the minimum may lie beyond it"
                if summary.at_bound else "")]
    if multiplier is not None and multiplier.yarn_law is not None:
        lines.append(f"logit multiplier {multiplier.fitted:.4f} against YaRN's law (0.1 ln s + 1)^2 = "
                     f"{multiplier.yarn_law:.4f} at s = {multiplier.scale:g}")
    if summary.compared_from is not None:
        lines.append(f"comparisons from {summary.compared_from}")
    for name, entry in summary.held_out.gains.items():
        low, high = entry.interval
        lines.append(f"  held out, NLL saved past the trained length vs {name}: {entry.saved:+.4f} "
                     f"nats per token ({low:+.4f} to {high:+.4f})")
    return "\n".join(lines)


def tune_table(summary: TuneSummary) -> str:
    """One line per bucket: the best constant temperature, its spread over documents, and what it saves against
    T = 1."""
    spread = "95% interval" if summary.bootstrap.spread is Spread.INTERVAL_95 else "range"
    corpus = summary.corpus
    tokens = sorted(set(corpus.tokens))
    length = f"{tokens[0]:,} tokens each" if len(tokens) == 1 else f"{tokens[0]:,}-{tokens[-1]:,} tokens"
    lines = [f"{summary.model}: {corpus.documents} documents, {length}; {len(summary.results)} passes per "
             f"document; {summary.workers} worker(s) x {summary.threads_per_worker} thread(s); "
             f"{summary.wall_seconds:.0f} s this run ({summary.computed_documents} computed), "
             f"peak {summary.peak_rss_gb.max} GB",
             f"{'positions':>15} {'docs':>4} {'best T':>7} {spread:>14} {'NLL at 1':>9} {'saved':>7} "
             f"{spread:>17}  best schedule (saved)"]
    for index, best in enumerate(summary.best):
        start, stop = best.bucket
        low, high = best.temperature_interval
        saved_low, saved_high = best.saved_interval
        by_schedule = [(entry.label, entry.buckets[index].saved) for entry in summary.schedules]
        schedule = max(by_schedule, key=lambda pair: pair[1], default=None)
        lines.append(f"{f'{start:,}-{stop - 1:,}':>15} {best.documents:>4} {best.temperature:>7g} "
                     f"{f'[{low:g}, {high:g}]':>14} {best.nll_at_1:>9.4f} {best.saved:>7.4f} "
                     f"{f'[{saved_low:.4f}, {saved_high:.4f}]':>17}  "
                     + (f"{schedule[0]} ({schedule[1]:+.4f})" if schedule else "-"))
    return "\n".join(lines)


# === Retrieval at a distance =========================================================================================


def between_text(between: tuple[int, int]) -> str:
    """'between 6,144 and 6,400 tokens': the two measured distances a reach lies between."""
    return f"between {between[0]:,} and {between[1]:,} tokens"


def _passages_text(reach: Reach) -> str:
    """Where the passages' own reaches lie: 'on each of the 4 passages' when they share the mean's bracket, else
    the span of their brackets ('the 3 passages' own: from 5,120 to 7,900 tokens'), with those that still use the
    copy at the longest distance ('1 of 4 still uses it at 12,288 tokens')."""
    own = [p.between for p in reach.per_passage if p.outcome is ReachOutcome.FOUND]
    uses = "uses" if reach.beyond == 1 else "use"
    beyond = f"{reach.beyond} of {reach.passages} still {uses} it at {reach.longest:,} tokens" if reach.beyond else ""
    if not own:
        return beyond or f"{reach.passages} passages"
    if set(own) == {reach.between} and len(own) == reach.passages:
        return f"on each of the {reach.passages} passages"
    if len(own) == 1:
        found = f"one passage's own: {between_text(own[0])}"
    else:
        found = (f"the {len(own)} passages' own: from {min(b[0] for b in own):,} to "
                 f"{max(b[1] for b in own):,} tokens")
    return f"{found}; {beyond}" if beyond else found


def reach_short(reach: Reach) -> str:
    """A reach as a headline: '6,144 to 6,400 tokens', '≥ 12,288 tokens', 'none'."""
    if reach.outcome is ReachOutcome.NONE:
        return "none"
    if reach.outcome is ReachOutcome.BEYOND:
        return f"≥ {reach.longest:,} tokens"
    return f"{reach.between[0]:,} to {reach.between[1]:,} tokens"


def reach_text(reach: Reach) -> str:
    """How far a view reaches, as the measured distances that bracket it, with the passages' own:
    'between 6,144 and 6,400 tokens (the 4 passages' own: from 5,120 to 7,900 tokens)'."""
    if reach.outcome is ReachOutcome.NONE:
        return "no reach (the first copy does not help even at the shortest distance)"
    if reach.outcome is ReachOutcome.BEYOND:
        every = reach.beyond == reach.passages
        return (f"at least {reach.longest:,} tokens, the longest distance measured "
                f"({f'on all {reach.passages} passages' if every else _passages_text(reach)})")
    return f"{between_text(reach.between)} ({_passages_text(reach)})"


def reach_sentence(model: str, verdict: RetrievalVerdict) -> str:
    """The probe's answer in one sentence: how far back the model still uses what it read, at T = 1, as the two
    measured distances its reach lies between."""
    reach, model = verdict.reach, model_name(model)
    trained = f"Its trained length is {verdict.trained_length:,} tokens."
    if reach.outcome is ReachOutcome.NONE:
        return (f"{model} does not use a passage it read earlier even at the shortest distance measured: it reads "
                "the repeat as new text.")
    if reach.outcome is ReachOutcome.BEYOND and reach.longest > verdict.trained_length:
        return (f"{model} still uses a passage it read {reach.longest:,} tokens back, the farthest measured: past "
                f"its trained length of {verdict.trained_length:,} tokens.")
    if reach.outcome is ReachOutcome.BEYOND:
        return (f"{model} still uses a passage it read {reach.longest:,} tokens back, the farthest measured. "
                f"{trained}")
    return (f"{model} uses what it read up to {between_text(reach.between)} back, both distances measured "
            f"({_passages_text(reach)}); farther back, the first copy "
            f"saves less than {REACH_SHARE:.0%} of what it saves at the shortest distance. {trained}")


def _moved(shift: ReachShift, longest: int) -> str:
    """'T=1.5 cuts it to between 4,096 and 4,352 tokens on every passage', 'T=0.9 takes it past 7,900 tokens, the
    farthest measured, on 3 of the 4 passages'."""
    if shift.outcome is not ReachOutcome.FOUND:
        said = f"{shift.view.label} takes it past {longest:,} tokens, the farthest measured,"
    else:
        verb = "takes it farther, to" if shift.direction is ReachDirection.LONGER else "cuts it to"
        said = f"{shift.view.label} {verb} {between_text(shift.between)}"
    passages = "on every passage" if shift.every_passage else f"on {shift.agree} of the {shift.passages} passages"
    return f"{said} {passages}"


def shifts_sentence(verdict: RetrievalVerdict) -> str:
    """What the other views do to the reach, as brackets: a view moves it only where its bracket and T = 1's do not
    overlap, and on every passage only where each passage's own do not; the probe cannot tell the others from
    T = 1, nor views that, like T = 1, still use the copy at the longest distance."""
    if not verdict.shifts:
        return "No other view was measured against T = 1."
    found = {direction: [s for s in verdict.shifts if s.direction is direction] for direction in ReachDirection}
    moved = found[ReachDirection.SHORTER] + found[ReachDirection.LONGER]
    said = ("Against T = 1, " + "; ".join(_moved(s, verdict.longest_distance) for s in moved) + ".") if moved else ""
    overlap, beyond, unknown = (found[d] for d in (ReachDirection.OVERLAP, ReachDirection.BOTH_BEYOND,
                                                   ReachDirection.UNKNOWN))
    if overlap:
        said += (f" The probe cannot tell {_and([s.view.label for s in overlap])} from T = 1: "
                 f"{'its reach lies' if len(overlap) == 1 else 'their reaches lie'} between measured distances "
                 "that overlap T = 1's.")
    if beyond:
        said += (f" {_and([s.view.label for s in beyond])} still {'uses' if len(beyond) == 1 else 'use'} the copy at "
                 f"{verdict.longest_distance:,} tokens too, the farthest measured, so this probe cannot tell whether "
                 f"{'it moves' if len(beyond) == 1 else 'they move'} the reach.")
    if unknown:
        said += f" {_and([s.view.label for s in unknown])} cannot be compared: no reach on the mean of the passages."
    return said.strip()


def retrieval_method() -> str:
    """How the probe and its reach are measured, with the threshold that picks the reach."""
    return ("A passage is planted early in a long filler text and repeated later; the loss on the repeat (its "
            "tokens after the first) is compared with the loss of the same text with nothing planted, on the same "
            "positions (the filler runs on where the copy was). The repeat's position moves with the distance: a "
            "probe at distance D reads the lead, D tokens and the passage, so short distances are cheap and the "
            "position's own difficulty is taken out by the nothing-planted text. The reach is where what the copy "
            f"saves on its repeat first falls below {REACH_SHARE:.0%} of what it saves at the shortest distance, "
            "given as the two measured distances it lies between (REACH_SHARE in model_utils/core/reach.py); a "
            "point drawn between them is read between points, not measured. A view moves the reach only where its "
            "two distances and T = 1's do not overlap, and on every passage only where each passage's own do not.")


def _grid_gain(curve, distance: int) -> int | None:
    """The index of `distance` in the curve's distances (a refined curve holds more than the grid)."""
    return curve.distances.index(distance) if distance in curve.distances else None


def _refined_text(document: RetrievalDocument) -> str:
    """'; --refine added 3 to 4 distances per view inside their reaches' brackets' (empty when it added none)."""
    added = [len(curve.distances) - len(document.distances) for curve in document.curves]
    if not any(added):
        return ""
    low, high = min(added), max(added)
    count = f"{low}" if low == high else f"{low} to {high}"
    return f"; --refine added {count} distances per view inside their reaches' brackets"


def retrieval_findings(document: RetrievalDocument) -> list[str]:
    """FINDINGS' block of one probe: what it ran, its verdict, and a table of the gain by distance per view (the
    grid's distances) with the passages' spread and the reach's bracket."""
    distances = " | ".join(f"{d:,}" for d in document.distances)
    lines = [f"{model_name(document.model)}: {len(document.passages)} passages of "
             f"{len(document.passages[0].tokens)} tokens ({', '.join(p.name for p in document.passages)}) planted in "
             f"{document.filler_source}; distances {', '.join(f'{d:,}' for d in document.distances)}"
             f"{_refined_text(document)}; trained length {document.trained_length:,}; "
             f"{document.seconds / 60:.0f} min of passes"
             + (f"; command: `{document.run.command}`" if document.run else "") + ".", "",
             f"- {reach_sentence(document.model, document.verdict)}", f"- {shifts_sentence(document.verdict)}",
             f"- {retrieval_method()}", "",
             "What the first copy saves on its repeat (nats per token; the passages' "
             f"{'range' if document.curves[0].spread is Spread.RANGE else '95% interval'} in brackets), by distance "
             "back, and the reach:", "", f"| view | {distances} | reach |",
             "|---|" + "---:|" * len(document.distances) + "---|"]
    for curve in document.curves:
        cells = []
        for distance in document.distances:
            index = _grid_gain(curve, distance)
            cells.append("" if index is None else
                         f"{curve.gain[index]:.2f} ({curve.low[index]:.2f} to {curve.high[index]:.2f})")
        lines.append(f"| {curve.view.label} | {' | '.join(cells)} | {reach_text(curve.reach)} |")
    return lines


def retrieval_table(document: RetrievalDocument) -> str:
    """The command line's table: per view, the gain at each of the grid's distances and the reach; then the
    verdict."""
    width = max(12, *(len(curve.view.label) for curve in document.curves))
    head = f"{'view':>{width}} " + " ".join(f"{d:>8,}" for d in document.distances) + "  reach"
    lines = [f"{model_name(document.model)}: gain on the repeat (nats per token) by distance, {len(document.passages)} "
             f"passages, trained length {document.trained_length:,}{_refined_text(document)}", head]
    for curve in document.curves:
        indices = [_grid_gain(curve, d) for d in document.distances]
        gains = " ".join(f"{'':>8}" if i is None else f"{curve.gain[i]:8.3f}" for i in indices)
        lines.append(f"{curve.view.label:>{width}} {gains}  {reach_text(curve.reach)}")
    return "\n".join([*lines, reach_sentence(document.model, document.verdict), shifts_sentence(document.verdict)])


def separate_passes_line(views: Sequence[str], asked: bool) -> str | None:
    """What the retrieval command says before its passes about the views that read every text whole, if any."""
    if asked:
        return "Every view reads each text whole, one pass per passage, distance and view (--separate-passes)."
    if not views:
        return None
    one = len(views) == 1
    return (f"{', '.join(views)} {'reads' if one else 'read'} each text whole, one pass per passage and distance: "
            f"{'its' if one else 'their'} numbers depend on the whole text's length, so a prefix read once cannot "
            "serve the shorter texts; every other view reads each prefix once.")


def lmeval_findings(document: LmEvalDocument) -> list[str]:
    """FINDINGS' block of one lm-evaluation-harness run: what ran, a table of the scores by length per view, and
    which views score other than T = 1 at some length (with so few samples, one sample is a big step)."""
    step = 1 / document.limit
    lines = [f"{model_name(document.model)}: {', '.join(document.tasks)} through lm-evaluation-harness "
             f"{document.lm_eval_version}, the first {document.limit} samples at each length (one sample is "
             f"{step:.2f} of a score); trained length {document.trained_length:,}"
             + (f"; command: `{document.run.command}`" if document.run else "") + ".", "",
             "| task | view | " + " | ".join(f"{length:,} tokens" for length in document.lengths) + " |",
             "|---|---|" + "---:|" * len(document.lengths)]
    for task in document.tasks:
        for view in document.views:
            cells = " | ".join(f"{document.score(task, length, view).score:.2f}" for length in document.lengths)
            lines.append(f"| {task} | {view.label} | {cells} |")
    return [*lines, "", lmeval_sentence(document)]


def lmeval_sentence(document: LmEvalDocument) -> str:
    """Which views score differently from T = 1, task by task and length by length, by how many samples; where
    every view gets every sample right, that the task does not tell them apart there."""
    if all(score.score == 1 for score in document.scores):
        return (f"Every view gets all {document.limit} samples right at every length: at these lengths the task does "
                "not tell the views apart.")
    said = []
    reference = View(1.0)
    for view in (view for view in document.views if view != reference):
        moved = [(task, length, document.score(task, length, view).score
                  - document.score(task, length, reference).score)
                 for task in document.tasks for length in document.lengths]
        moved = [(task, length, gap) for task, length, gap in moved if round(gap * document.limit) != 0]
        if not moved:
            said.append(f"{view.label} scores as T = 1 at every length")
        else:
            said.append(f"{view.label} scores " + ", ".join(
                f"{abs(round(gap * document.limit))} sample{'s' if abs(round(gap * document.limit)) != 1 else ''} "
                f"{'more' if gap > 0 else 'fewer'} right at {length:,} tokens" for _, length, gap in moved))
    return ("; ".join(said) + f" ({document.limit} samples a length: a check, not a measurement).") if said else ""


# === What we found (the README's short form) =========================================================================
# One plain sentence computed from the corpora's verdicts, then at most three bullets with one number each, in the
# words a teacher uses; the full verdicts are FINDINGS'. Shares are of the rise on the same tokens where it was
# measured (SameTokenRise), and say so.

PLAIN_RECIPES = {
    "yarn-rope": "YaRN's stretch of the positions", "yarn": "YaRN in full (its stretch and its own sharpening)",
    "dynamic": "dynamic NTK scaling of the positions", "linear": "linear interpolation of the positions",
    "llama3": "Llama 3.1's stretch of the positions", "self-extend": "Self-Extend's grouped distances",
    "rerope": "ReRoPE's clipped distances", "leaky-rerope": "leaky ReRoPE's distances",
    "sink-window": "keeping the first tokens and a window"}


def plain_lever(row: DecompositionRow) -> str:
    """A lever as a teacher would name it: 'YaRN's stretch of the positions', 'the best temperature alone'."""
    if row.rope is not None and row.kind is RowKind.RECIPE:
        return PLAIN_RECIPES.get(row.rope.kind, row.rope.label)
    if row.kind is RowKind.HELD_OUT and row.rope is None:
        return "the best temperature alone"
    if row.kind is RowKind.SCHEDULE:
        return f"the published schedule {row.view}"
    return row_label(row)


HARDLY_HELPS = 0.1  # a lever that brings back less than this share of the rise "hardly helps"


def found_conclusion(corpora: Sequence[tuple[str, ContextVerdict]]) -> str:
    """The one sentence "What we found" opens on, computed from each model's corpus verdict (each model named as it
    ran): which lever brings the loss back past the trained length on every model, or that none does on all of
    them, and what the best temperature alone does: "hardly helps" where it brings back less than HARDLY_HELPS of
    the rise on every model."""
    leads = [verdict.decomposition.dominant for _, verdict in corpora]
    names = " and ".join(model_as_run(model) for model, _ in corpora)
    models = (f"Past the length it was trained on, {names} predicts" if len(corpora) == 1 else
              f"Past the length they were trained on, {names} predict")
    if leads and all(lead is Dominant.RECIPE for lead in leads):
        names = {plain_lever(verdict.decomposition.lever(Dominant.RECIPE)) for _, verdict in corpora}
        lever = names.pop() if len(names) == 1 else "a change of the positions"
        return (f"{models} text worse; {lever} brings that back, and "
                f"{_temperature_alone(corpora)}.")
    if leads and all(lead is Dominant.TEMPERATURE for lead in leads):
        return (f"{models} text worse, and a softmax temperature "
                "brings that back.")
    return (f"{models} text worse, and no one lever brings it back "
            "on every model.")


def _temperature_alone(corpora: Sequence[tuple[str, ContextVerdict]]) -> str:
    """'a softmax temperature hardly helps' where the best temperature alone brings back less than HARDLY_HELPS of
    the rise on every model; else the most it brings back."""
    shares = [verdict.decomposition.share_of_rise(lever) for _, verdict in corpora
              if (lever := verdict.decomposition.best(LeverKind.TEMPERATURE)) is not None]
    known = [share for share in shares if share is not None]
    if known and len(known) == len(corpora) and max(known) < HARDLY_HELPS:
        return "a softmax temperature hardly helps"
    if not known:
        return "what a softmax temperature alone does was not measured"
    return f"a softmax temperature alone brings back at most {max(known):.0%} of the rise"


def _share_words(share: float | None) -> str:
    """'96%' or 'an unknown share': a share of the rise as a percentage; 'more than all (106%)' above 100%."""
    if share is None:
        return "an unknown share"
    return f"more than all ({share:.0%})" if share >= ABOVE_ALL else f"{share:.0%}"


def found_bullets(corpora: Sequence[tuple[str, ContextVerdict]],
                  probes: Sequence[RetrievalDocument] = ()) -> list[str]:
    """At most three bullets with one number each: the first model's lead lever's share of the rise, the best
    temperature alone's share there, and how far back the first probe's model still uses what it read."""
    bullets = []
    if corpora:
        model, verdict = corpora[0]
        decomposition, documents = verdict.decomposition, verdict.documents
        on = (f"on {documents} documents ({model_name(model)})" if documents else
              f"on one text ({model_name(model)})")
        base = ("on the same words" if decomposition.rise_base is RiseBase.CUT_CONTEXT
                else "against earlier parts of the text")
        lead = decomposition.lever(Dominant.RECIPE) or decomposition.lever(decomposition.dominant)
        if lead is not None:
            bullets.append(f"{plain_lever(lead)[0].upper()}{plain_lever(lead)[1:]} brings back "
                           f"{_share_words(decomposition.share_of_rise(lead))} of the rise in the loss (lower is "
                           f"better) past the trained length, {base}, {on}.")
        alone = decomposition.best(LeverKind.TEMPERATURE)
        if alone is not None:
            where = "documents" if documents else "positions"
            bullets.append(f"The best temperature alone brings back {_share_words(decomposition.share_of_rise(alone))}"
                           f" of it, on {where} it was not chosen on.")
    if probes:
        bullets.append(_probe_bullet(probes[0]))
    return bullets[:3]


def _probe_bullet(probe: RetrievalDocument) -> str:
    """How far back the probe's model still uses what it read at T = 1, as the two measured distances its reach
    lies between, then what the plain temperatures (no recipe) do to that: which cut it short and which take it
    farther (their brackets apart from T = 1's, on every passage unless said to hold on the mean only), and which
    show no measurable shift (brackets that overlap T = 1's); the short form where the model uses nothing even at
    the shortest distance."""
    reach, model = probe.verdict.reach, model_name(probe.model)
    if reach.outcome is ReachOutcome.NONE:
        return f"{model} does not use a passage it read earlier, even at the shortest distance measured."
    head = (f"{model} still uses a passage it read {reach.longest:,} tokens back, the farthest measured"
            if reach.outcome is ReachOutcome.BEYOND else f"{model} stops using what it read "
            f"{between_text(reach.between)} back")
    plain = {view.label: view.temperature for view in probe.views
             if view.temperature is not None and view.rope is None and view.schedule is None and view != View(1.0)}
    shifts = [shift for shift in probe.verdict.shifts if shift.view.label in plain]
    beyond = [s.view.label for s in shifts if s.direction is ReachDirection.BOTH_BEYOND]
    if shifts and len(beyond) == len(shifts):
        return (f"{head}, and so {'does' if len(beyond) == 1 else 'do'} {_by_side(beyond, plain)}: this probe "
                "cannot tell whether a temperature moves it.")
    parts = []
    for direction, verb in ((ReachDirection.SHORTER, "cut"), (ReachDirection.LONGER, "take")):
        for every in (True, False):  # "on every passage" goes unsaid; the mean alone is said so
            named = [s for s in shifts if s.direction is direction and s.every_passage == every]
            if named:
                ending = "short" if direction is ReachDirection.SHORTER else "farther"
                verbs = f"{verb}s" if len(named) == 1 else verb
                parts.append(f"{_by_side([s.view.label for s in named], plain)} {verbs} it {ending}"
                             + ("" if every else " on the passages' mean, not on each"))
    same = [s.view.label for s in shifts if s.direction is ReachDirection.OVERLAP]
    if same:
        parts.append(f"{_by_side(same, plain)} {'shows' if len(same) == 1 else 'show'} no measurable shift")
    if not parts:
        return f"{head}; no temperature tried moves it past what the probe can tell."
    return head + "".join(f"; {part}" for part in parts) + "."


def _by_side(labels: Sequence[str], temperatures: dict[str, float]) -> str:
    """'T=1.5 (softer)', 'T=0.7 and T=0.9 (sharper)', 'T=0.9 (sharper) and T=1.5 (softer)'."""
    sides = [(side, [label for label in labels if (temperatures[label] > 1) == (side == "softer")])
             for side in ("sharper", "softer")]
    return " and ".join(f"{_and(named)} ({side})" for side, named in sides if named)


def _and(names: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# === Pages ===========================================================================================================
# What the app's pages say about a result in their own words: temperatures only (a schedule's logit multiplier m is
# said as the T = 1 / m it amounts to), and the one short sentence a page opens on.

PUBLISHED_ENTROPY_IN_T = ("Published argument (Chiang & Cholak 2022; Nakanishi 2025, Scalable-Softmax): with "
                          "attention scores of a fixed spread, attention entropy grows like ln n as the context "
                          "grows, so attention spreads thin; the length schedules lower the temperature below 1 "
                          "(sharper) to counter that.")  # PUBLISHED_ENTROPY as the pages say it


def temperature_words(direction: Direction, label: str = "") -> str:
    """Which way a result moved attention against T = 1, in temperatures: m is said as T = 1 / m. The value is left
    out where `label` already says it (a constant temperature labelled 'T=2')."""
    way = direction.kind
    if way is Way.UNCHANGED:
        return "leaves attention as at T = 1"
    low, high = 1 / direction.largest, 1 / direction.smallest  # the largest m is the smallest T
    if way is Way.MIXED:
        softer, sharper = direction.softer_share, direction.sharper_share
        shares = (f"softer than T = 1 on {softer:.0%} of the measured queries and sharper on {sharper:.0%}"
                  if softer and sharper else
                  f"{'softer' if softer else 'sharper'} than T = 1 on {softer or sharper:.0%} of the measured queries")
        return f"is {shares} (T from {low:.3g} to {high:.3g})"
    verb = "softens" if way is Way.SOFTER else "sharpens"
    if low != high:
        return f"{verb} attention (T from {low:.3g} to {high:.3g})"
    if label == f"T={low:g}":
        return f"{verb} attention"
    return f"{verb} attention (T = {low:.3g} {'>' if way is Way.SOFTER else '<'} 1)"


def page_finding_sentence(finding: Finding, reference: Finding, answer_text: str = "") -> tuple[str, str] | None:
    """finding_sentence in temperatures only, for a page (a schedule's m said as T = 1 / m)."""
    return finding_sentence(finding, reference, answer_text,
                            head=f"{finding.label} {temperature_words(finding.direction, finding.label)}")



# --- Attention maps: the head picked for a query, and when the mean of heads hides the effect ----------------------

def _times(ratio: float) -> str:
    """A top / runner-up ratio: '3.22x', '8,860x', 'unbounded' (a runner-up of weight 0)."""
    if math.isinf(ratio):
        return "unbounded"
    return f"{ratio:.3g}x" if float(f"{ratio:.3g}") < 1_000 else f"{ratio:,.0f}x"


def _moves(pair: Sequence[float], say=_times, temperatures: Sequence[float] | None = None) -> str:
    """'falls from 49.9x to 3.22x', each end as `say` writes it (with `temperatures`: 'from 49.9x at T = 0.5 to
    3.22x at T = 2')."""
    at = [""] * 2 if temperatures is None else [f" at T = {t:g}" for t in temperatures]
    first, last = say(pair[0]), say(pair[1])
    if first == last:
        return f"stays at {first}{at[0]} and{at[1]}" if temperatures else f"stays at {first}"
    return f"{'falls' if pair[1] < pair[0] else 'rises'} from {first}{at[0]} to {last}{at[1]}"


def head_pick_words(pick: HeadPick, token: str, shown: bool) -> str:
    """The Attention maps page's label of the head it picked for the query `token` (as the page shows a token):
    which head, what it was picked for, and its ratio and spread at both ends; `shown`: the view shows the pick."""
    low, high = pick.temperatures
    head = f"Layer {pick.layer}, head {pick.head}"
    what = f"the head whose attention for “{token}” spreads most from T = {low:g} to T = {high:g}"
    opening = (f"{head}: {what} (picked for this word; pick another layer or head to compare)." if shown else
               f"{head} is {what}; the view shows your choice.")
    return (f"{opening} Its top / runner-up ratio {_moves(pick.ratios)}; its spread, H / ln(visible keys), "
            f"{_moves(pick.entropies, lambda value: f'{value:.2f}')}.")


def hidden_by_mean_words(hidden: HiddenByMean) -> str:
    """Why the mean of heads shows little of what T does here: the averaged row's ratio against the pick's."""
    pick = hidden.pick
    mean = f"in layer {hidden.layer} its top / runner-up ratio {_moves(hidden.ratios, temperatures=pick.temperatures)}"
    other = f"that of layer {pick.layer}, head {pick.head}"
    said = (f"{mean}, against the lesson, while {other} {_moves(pick.ratios)}" if hidden.against else
            f"{mean}, far less than {other}, which {_moves(pick.ratios)}")
    return (f"The mean of heads hides the effect here: {said}. Averaging heads that look at different words mixes "
            "their weights, so the top and runner-up may be two heads' favourites; pick a head to see T at work.")

# --- The Collapse inspector: does attention collapse on this prompt, and does a temperature help? -------------------

QUOTED = 80  # characters of a quoted phrase or question; a longer one is cut with an ellipsis
FACT_SOURCES = {FactSource.MARKED: "the phrase you marked",
                FactSource.ANSWER: "where the expected answer first appears in the prompt",
                FactSource.QUESTION: "the earlier sentence that shares most of the question's words"}


def quoted(text: str, limit: int = QUOTED) -> str:
    """'"4817"': a phrase in quotes, on one line, cut to `limit` characters."""
    line = " ".join(text.split())
    return f'"{line if len(line) <= limit else line[: limit - 1].rstrip() + "…"}"'


def share(value: float) -> str:
    """A share of attention: two decimals ('0.41'), or at most two significant digits below 0.01 ('0.00034',
    '0.000007'), so that a small share is not said as nothing; '0' for none."""
    if value >= 0.01 or value <= 0:
        return f"{max(value, 0.0):.2f}" if value > 0 else "0"
    return f"{value:.{1 - math.floor(math.log10(value))}f}".rstrip("0")


def view_name(view: ViewOutcome) -> str:
    """'T = 1' for a constant temperature, else the view's own label."""
    return view.label if view.temperature is None else f"T = {view.temperature:g}"


def view_names(views: Sequence[ViewOutcome]) -> str:
    """'T = 0.5, 1.5 and 2' when every view is a constant temperature, else each view by its name."""
    if all(view.temperature is not None for view in views):
        return "T = " + _and([f"{view.temperature:g}" for view in views])
    return _and([view_name(view) for view in views])


def token_words(token: str) -> str:
    """A token as a sentence quotes it: '"?"', or what it is when it has nothing visible ('a line break')."""
    if token.strip():
        return quoted(token.strip(), 20)
    return "a line break" if "\n" in token else "a space" if token else "an empty token"


def _answer_clause(verdict: CollapseVerdict) -> str:
    """'T = 1 answers "4817", T = 0.5, 1.5 and 2 do not'."""
    if verdict.answer is None:
        return "give the expected answer to see which temperature makes the model say it"
    said = quoted(verdict.answer)
    yes = [view for view in verdict.views if view.answers]
    no = [view for view in verdict.views if not view.answers]
    if not no:
        return f"{view_names(yes)} answers {said}" if len(yes) == 1 else f"every temperature tried answers {said}"
    if not yes:
        return f"{view_names(no)} does not answer {said}" if len(no) == 1 else f"no temperature tried answers {said}"
    return (f"{view_names(yes)} {'answers' if len(yes) == 1 else 'answer'} {said}, "
            f"{view_names(no)} {'does not' if len(no) == 1 else 'do not'}")


def collapse_sentence(verdict: CollapseVerdict) -> str:
    """The Collapse inspector's first sentence: at the reference view, the last token's attention on its recent
    window, on the fact and on the sink, and which views answer."""
    reference = verdict.views[verdict.reference]
    masses = reference.masses
    fact = verdict.fact
    recent = f"{share(masses.recent)} of its attention on the last {verdict.window} tokens"
    sink = f"{share(masses.sink)} on the first token (the sink)"
    head = f"At {view_name(reference)} the last token ({token_words(verdict.last_token)}) puts "
    if masses.fact is not None:
        head += f"{recent}, {share(masses.fact)} on the fact and {sink}"
    elif fact is not None:
        head += f"{recent} and {sink}; the fact lies in the part of the prompt that was left out"
    else:
        head += f"{recent} and {sink}; no fact was found to measure (mark one under the prompt)"
    return f"{head}; {_answer_clause(verdict)}."


def collapse_more_sentences(verdict: CollapseVerdict) -> list[str]:
    """What follows the first sentence: the views that answer where the reference does not, and how far the fact's
    share moves between the temperatures."""
    said = []
    reference = view_name(verdict.views[verdict.reference])
    helped = [verdict.views[index] for index in verdict.helped]
    if helped:
        verb = "answers" if len(helped) == 1 else "answer"
        said.append(f"A temperature helps here: {view_names(helped)} {verb} where {reference} does not.")
    likeliest = verdict.likeliest
    if likeliest is not None and len(verdict.views) > 1:
        best, base = verdict.views[likeliest], verdict.views[verdict.reference]
        against = ("no other temperature tried makes it likelier" if best is base
                   else f"against {base.said.answer_log_prob:.2f} at {reference}")
        said.append(f"The whole answer is likeliest at {view_name(best)} (log-probability "
                    f"{best.said.answer_log_prob:.2f}; {against}).")
    ends = verdict.fact_range
    if ends is not None:
        low, high = (verdict.views[index] for index in ends)
        if share(low.masses.fact) == share(high.masses.fact):
            said.append(f"The fact's share stays at {share(high.masses.fact)} at every temperature tried.")
        else:
            said.append(f"The fact's share runs from {share(low.masses.fact)} at {view_name(low)} to "
                        f"{share(high.masses.fact)} at {view_name(high)}.")
    return said


def fact_sentences(verdict: CollapseVerdict) -> list[str]:
    """Which span is the fact and how it was found; a marked phrase the prompt does not hold; a fact that lies in
    the recent window."""
    said = []
    if verdict.marked_missing is not None:
        said.append(f"{quoted(verdict.marked_missing)} is not in the prompt (in any case or spacing), so the fact is "
                    "found without it.")
    fact = verdict.fact
    if fact is None:
        return said
    where = (f"tokens {fact.tokens[0]:,} to {fact.tokens[1] - 1:,}" if fact.tokens[1] - fact.tokens[0] > 1
             else f"token {fact.tokens[0]:,}") if fact.kept else "in the part left out"
    said.append(f"The fact: {quoted(fact.text)}, {FACT_SOURCES[fact.source]} ({where}).")
    if verdict.fact_in_recent:
        said.append(f"Part of it lies in the last {verdict.window} tokens, where it counts as recent.")
    return said


def cut_sentence(cut: Cut) -> str:
    """How a prompt too long for the page was cut, said before the verdict."""
    if cut.question_tokens:
        return (f"The prompt is longer than the {cut.limit:,} tokens this page reads, so its middle was left out: "
                f"its first {cut.head_tokens:,} tokens and its question ({quoted(cut.question)}, "
                f"{cut.question_tokens:,} tokens) were kept, and the {cut.left_out_chars:,} characters between them "
                "dropped. Everything below is measured on that shorter prompt.")
    return (f"The prompt is longer than the {cut.limit:,} tokens this page reads, so it was cut to its first "
            f"{cut.head_tokens:,}: its last sentence ({quoted(cut.question)}) is too long to keep apart, so the "
            "question at its end is not in what was read.")


def said_words(view: ViewOutcome) -> str:
    """'answers', 'does not answer', or '' without an expected answer."""
    return "" if view.answers is None else "answers" if view.answers else "does not answer"


def odds_words(log_prob: float) -> str:
    """A log-probability as odds a reader says: 'about 1 in 210', 'less than 1 in a million'."""
    odds = math.exp(min(-log_prob, 700.0))
    if odds < 1.05:
        return "almost certain"
    if odds >= 1e6:
        return "less than 1 in a million"
    return f"about 1 in {odds:,.1f}" if odds < 10 else f"about 1 in {float(f'{odds:.2g}'):,.0f}"


def answer_log_prob_words(log_prob: float, tokens: int) -> str:
    """'log-probability of the whole answer (5 tokens): -5.34, about 1 in 210'."""
    return (f"log-probability of the whole answer ({tokens} token{'s' if tokens != 1 else ''}): {log_prob:.2f}, "
            f"{odds_words(log_prob)}")


def answer_point(verdict: ContextVerdict) -> str:
    """The Context length page's opening sentence, in plain words: which lever brings the loss back past the trained
    length, by how much, and what the best temperature alone does (the full answer, every lever with its interval,
    is `answer`)."""
    decomposition = verdict.decomposition
    recipe, temperature = decomposition.lever(Dominant.RECIPE), decomposition.best(LeverKind.TEMPERATURE)
    where = f"past the trained length ({scope(verdict.documents)})"
    alone = "" if temperature is None else f"; the best temperature alone {_lowers(temperature, decomposition)}"
    subjects = {Family.FREQUENCY: "stretching the positions (a RoPE interpolation)",
                Family.REMAP: "giving far keys a distance the model was trained on (a distance remapping)",
                Family.SINK_WINDOW: "keeping only the first tokens and a window of the last (a sink + window)"}
    if decomposition.dominant is Dominant.NO_RISE:
        top = max((lever for lever in (recipe, temperature) if lever is not None), key=lambda lever: lever.saved,
                  default=None)
        if top is None or top is temperature:
            return f"The loss at T = 1 does not rise {where}{alone}."
        return f"The loss at T = 1 does not rise {where}, yet {row_label(top)} {_lowers(top, decomposition)}{alone}."
    if decomposition.dominant is Dominant.RECIPE:
        subject = subjects[recipe.family]
        return (f"{subject[0].upper()}{subject[1:]} brings the loss back {where}, not the temperature: "
                f"{row_label(recipe)} {_lowers(recipe, decomposition)}{alone}.")
    if decomposition.dominant is Dominant.TEMPERATURE:
        lead = decomposition.lever(Dominant.TEMPERATURE)
        other = "" if recipe is None else f"; {row_label(recipe)} {_lowers(recipe, decomposition)}"
        return f"The temperature brings the loss back {where}: {row_label(lead)} {_lowers(lead, decomposition)}{other}."
    best = max((lever for lever in (recipe, temperature) if lever is not None), key=lambda lever: lever.saved,
               default=None)
    if best is None:
        return f"No lever brings back half of the loss's rise {where}."
    return f"No lever brings back half of the loss's rise {where}: the best, {row_label(best)}, " \
           f"{_lowers(best, decomposition)}."


def _lowers(lever: DecompositionRow, decomposition: Decomposition) -> str:
    """'lowers the loss by 2.27 nats per token (101% of the rise)', 'raises the loss by 0.004 nats per token', 'leaves
    the loss as it is': a lever's saving in plain words, rounded as the answer rounds it, with its share of the rise
    where the loss rises."""
    digits = 2 if abs(lever.saved) >= 0.1 else 3
    if round(lever.saved, digits) == 0:
        return "leaves the loss as it is (0.000 nats per token)"
    share = decomposition.share_of_rise(lever)
    said = f"{'lowers' if lever.saved > 0 else 'raises'} the loss by {abs(lever.saved):.{digits}f} nats per token"
    return said + ("" if share is None else f" ({percent_of_rise(share)})")
