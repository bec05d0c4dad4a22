"""The big numbers of a verdict: a Headline is a value, an interval or ratio and a unit, formatted only by
headline_number and headline_note, so nothing parses a formatted number back. Led by the dominant lever, then the
best temperature alone, where the loss breaks, and the best recipe when it is not the lead."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from model_utils.core.records.verdict import (
    ContextVerdict,
    DecompositionRow,
    Dominant,
)
from model_utils.verdicts.words.common import (
    SAVES,
    interval_name,
    percent_of_rise,
    resampling,
    rise_base_words,
    scope,
    scoring_method,
    scoring_short,
    short_interval,
    span,
)
from model_utils.verdicts.words.rows import row_label, row_what

__all__ = ["Headline", "Unit", "headline_note", "headline_number", "headline_text", "headlines"]


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

