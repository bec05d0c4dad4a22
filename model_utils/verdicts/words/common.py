"""The pieces every kind of words shares: what a number rests on (scope), positions (span), an interval and what
it is called (bracket, spread_name), a saving in a table cell (signed), a share of the rise (share_label,
percent_of_rise), how a choice was scored (scoring_short, scoring_method), the recipe families' names, and small
list helpers the other word modules import (joined, bucket_runs)."""

from __future__ import annotations

from collections.abc import Sequence

from model_utils.core.records.spread import Spread
from model_utils.core.records.verdict import (
    ContextVerdict,
    Family,
    MassMove,
    RiseBase,
    Scoring,
)

__all__ = ["ALL_OF_IT", "FAMILIES", "MOVES", "NO_VALUE", "SAVES", "SAVES_PER_TOKEN", "SUBJECTS", "bracket",
           "interval_name", "layer_list", "no_held_out", "percent_of_rise", "resampling", "rise_base_words", "scope",
           "scoring_method", "scoring_short", "share_label", "short_interval", "signed", "span", "spread_name"]

NO_VALUE = "—"  # a table cell without a number: an em dash, as a bare "-" is a list bullet in st.table's markdown
SAVES = "saves = NLL at T = 1 minus NLL, positive = better"
SAVES_PER_TOKEN = "saves = NLL at T = 1 minus NLL, in nats per token; positive = better"  # a heading's


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


ALL_OF_IT = 0.995  # a share of the rise that rounds to 100% or more: the lever brings back all of it


def share_label(share: float | None) -> str:
    """'106% of the rise', a chart's short note; a share that rounds to 0% keeps a decimal, and its sign."""
    if share is None:
        return "share of the rise unknown"
    return f"{share:.0%} of the rise" if abs(share) >= 0.005 else f"{share:.1%} of the rise"


def percent_of_rise(share: float | None) -> str:
    """share_label in a sentence: from ALL_OF_IT on, "all of it" (the lever's loss ends at or below the cut-context
    reference's in the point estimate), and no more: a share above 100% is never said to be more than the rise, as
    no interval on the difference was measured."""
    if share is not None and share >= ALL_OF_IT:
        return f"{share_label(share)}: all of it"
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


def bucket_runs(entries: Sequence[tuple[float, Sequence[int]]]) -> list[tuple[float, int, int]]:
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


def rise_base_words(verdict: ContextVerdict) -> str:
    """What the rise is measured against: the same words read with the context cut to the trained length, or the
    text's own earlier positions (other words: the text's own difficulty is mixed in)."""
    if verdict.decomposition.rise_base is RiseBase.CUT_CONTEXT:
        return "on the same words, against reading them with at most the trained length before them"
    return ("against the text's earlier positions, which are other words: how hard each part of the text is is "
            "mixed in")


def joined(names: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
