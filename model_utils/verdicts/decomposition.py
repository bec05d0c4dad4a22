"""The answer first: what brings the loss back past the trained length. From the length verdict's rows
(verdicts/past.py: the loss rise and what each way of going past it saves, with its interval), the lever that does
the recovery, chosen by the numbers: a RoPE recipe, a temperature, or neither (core.records.verdict.Dominant). A
recipe belongs to a family (core.records.verdict.Family): a change of the rotary frequencies, a distance remapping,
or a sink + window; the answer names the family that recovers the most (verdicts/words/). Every other pick the
words name is made here too: the lever that saves the most of some (`top`), levers ranked (`by_saving`), the best
and the worst (`best_and_worst`). Savings in nats per token past the trained length against T = 1 on the model's
own positions (positive = better); a lever's share of the rise divides by the rise's point value."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from model_utils.core.records.verdict import (
    Decomposition,
    DecompositionRow,
    Dominant,
    Interval,
    LeverKind,
    RiseBase,
)

# A lever "does the recovery" when its interval clears 0 and its point value recovers at least this share of the
# rise: below half, the rise is mostly still there, whatever the lever.
RECOVERS = 0.5


def decompose(*, rise: float, rows: Sequence[DecompositionRow], untrained_constant_range: Interval | None = None,
              rise_base: RiseBase = RiseBase.EARLIER_POSITIONS) -> Decomposition:
    """The decomposition of the verdict's rows, with the lever that does the recovery; `rise` is measured against
    `rise_base` (the cut context where it was measured)."""
    found = Decomposition(rise=rise, dominant=Dominant.NEITHER, rows=tuple(rows),
                          untrained_constant_range=untrained_constant_range, rise_base=rise_base)
    return Decomposition(rise=rise, dominant=dominant(found.levers, rise), rows=tuple(rows),
                         untrained_constant_range=untrained_constant_range, rise_base=rise_base)


def dominant(levers: Sequence[DecompositionRow], rise: float) -> Dominant:
    """The kind of the lever that saves the most, if it clears 0 and recovers at least RECOVERS of the rise; a
    temperature on top of a recipe never leads (it needs the recipe)."""
    if rise <= 0:
        return Dominant.NO_RISE
    alone = [row for row in levers if row.lever is not LeverKind.ON_TOP and row.saved is not None]
    top = max(alone, key=lambda row: row.saved, default=None)
    if top is None or not top.clears_zero or top.saved < RECOVERS * rise:
        return Dominant.NEITHER
    return Dominant.RECIPE if top.lever is LeverKind.RECIPE else Dominant.TEMPERATURE


def top(*levers: DecompositionRow | None) -> DecompositionRow | None:
    """Of the levers given (None skipped), the one that saves the most (the first on a tie): the lever the words
    name where none does the recovery or the loss does not rise."""
    return max((lever for lever in levers if lever is not None), key=lambda lever: lever.saved, default=None)


def by_saving(levers: Iterable[DecompositionRow]) -> list[DecompositionRow]:
    """The levers ranked by what they save, the most first (a stable sort: ties keep their order)."""
    return sorted(levers, key=lambda lever: -lever.saved)


def best_and_worst(levers: Sequence[DecompositionRow]) -> tuple[DecompositionRow, DecompositionRow]:
    """The lever that saves the most and the one that saves the least (the first of each on a tie)."""
    return max(levers, key=lambda lever: lever.saved), min(levers, key=lambda lever: lever.saved)
