"""The answer in one sentence: which lever brings the loss back past the trained length, with the numbers it rests
on (`answer`, every lever with its interval), and the plain sentence the Context length page opens on
(`answer_point`). The lever that leads is the verdict's (Decomposition.dominant); which lever is named where none
leads is verdicts.decomposition's pick."""

from __future__ import annotations

from model_utils.core.records.verdict import (
    ContextVerdict,
    Decomposition,
    DecompositionRow,
    Dominant,
    Family,
    LeverKind,
    SameTokenRise,
)
from model_utils.verdicts.decomposition import by_saving, top
from model_utils.verdicts.words.common import (
    FAMILIES,
    SUBJECTS,
    interval_name,
    percent_of_rise,
    rise_base_words,
    scope,
    spread_name,
)
from model_utils.verdicts.words.rows import row_label

__all__ = ["answer", "answer_point"]


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
    lead = top(decomposition.lever(Dominant.RECIPE), decomposition.lever(Dominant.TEMPERATURE))
    if lead is None:
        return said + "; no lever ran past it."
    named = [_saving(lead, name)] + ([_saving(temperature, name)] if temperature not in (None, lead) else [])
    if not lead.clears_zero:
        return said + ", and no lever lowers it there: " + "; ".join(named) + "."
    who = {LeverKind.RECIPE: "a recipe, not the temperature,", LeverKind.TEMPERATURE: "a temperature, not a recipe,",
           LeverKind.SCHEDULE: "a published schedule"}[lead.lever]
    return (said + ", yet on the same positions " + "; ".join(named) + f": {who} lowers the loss past the "
            "trained length all the same.")


def _families_answer(verdict: ContextVerdict) -> str:
    """The answer where more than one family of recipes ran: each family's lever, the temperature alone, what a
    temperature adds on top, and the family that recovers the most, all from the numbers."""
    decomposition = verdict.decomposition
    ranked = by_saving(decomposition.family_lever(family) for family in decomposition.families())
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
    by = f"{gap.saved:+.3f} nats per token more than {gap.against.label}, {name} {low:+.3f} to {high:+.3f}"
    if gap.clears_zero:
        return f"{most}; {by})"
    return f"the recipe families recover about the same ({row_label(lead)} saves {by}, which does not clear 0)"


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
        lead = top(recipe, temperature)
        if lead is None or lead is temperature:
            return f"The loss at T = 1 does not rise {where}{alone}."
        return f"The loss at T = 1 does not rise {where}, yet {row_label(lead)} {_lowers(lead, decomposition)}{alone}."
    if decomposition.dominant is Dominant.RECIPE:
        subject = subjects[recipe.family]
        return (f"{subject[0].upper()}{subject[1:]} brings the loss back {where}, not the temperature: "
                f"{row_label(recipe)} {_lowers(recipe, decomposition)}{alone}.")
    if decomposition.dominant is Dominant.TEMPERATURE:
        lead = decomposition.lever(Dominant.TEMPERATURE)
        other = "" if recipe is None else f"; {row_label(recipe)} {_lowers(recipe, decomposition)}"
        return f"The temperature brings the loss back {where}: {row_label(lead)} {_lowers(lead, decomposition)}{other}."
    best = top(recipe, temperature)
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
