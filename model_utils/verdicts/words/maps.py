"""The Attention maps page's words: the head picked for a query and how its top / runner-up ratio and spread move
between two temperatures, and why the mean of heads hides the effect (verdicts/maps.py's HiddenByMean)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from model_utils.core.report import HeadPick
from model_utils.verdicts.maps import HiddenByMean

__all__ = ["head_pick_words", "hidden_by_mean_words"]


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
