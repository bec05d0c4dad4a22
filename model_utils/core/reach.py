"""How far back a gain curve reaches, from the distances measured (the retrieval probe's rule; numpy only): the reach
is where the gain first falls below REACH_SHARE of its shortest-distance value, known as the two measured distances
that bracket it (`bracket`); a value read between them on a log scale (`read_between`) is for drawing, never a
measurement. Two reaches are told apart only where their brackets do not overlap (`compare`), and `--refine` adds
distances inside a bracket, by bisection, until it is narrow (`narrow`, `midpoint`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum

REACH_SHARE = 0.5  # the reach: the distance where the gain falls below this share of its short-distance value
REFINE_TOKENS = 256  # --refine narrows a bracket to at most this many tokens,
REFINE_SHARE = 0.03  # or this share of its nearer distance, whichever is larger


class ReachOutcome(Enum):
    """FOUND: the gain falls below REACH_SHARE of its short-distance value between two measured distances; BEYOND: it
    has not by the longest distance measured (the reach is at least that); NONE: no gain even at the shortest
    distance."""

    FOUND = "found"
    BEYOND = "beyond"
    NONE = "none"


class Direction(Enum):
    """A view's reach against the reference's: LONGER or SHORTER where the brackets do not overlap (the view's lies
    past the reference's, or before it); OVERLAP where they do (the probe cannot tell the two apart); BOTH_BEYOND
    where both still reach the longest distance measured; UNKNOWN where either has no reach."""

    LONGER = "longer"
    SHORTER = "shorter"
    OVERLAP = "overlap"
    BOTH_BEYOND = "both beyond"
    UNKNOWN = "unknown"


Bracket = tuple[int, int]  # (the last measured distance at or above the level, the first below it)


def crossing(gains: Sequence[float]) -> int | None:
    """The index of the first gain below REACH_SHARE of the first (None: none is, or the first is not above 0)."""
    if not gains or gains[0] <= 0:
        return None
    level = REACH_SHARE * gains[0]
    return next((index for index in range(1, len(gains)) if gains[index] < level), None)


def comeback(distances: Sequence[int], gains: Sequence[float]) -> tuple[int, Bracket | None] | None:
    """Where a curve comes back after its reach: the first measured distance past the crossing whose gain is at or
    above the level again, and the bracket where it then falls below for good (None: still above at the longest
    distance); None where it never comes back (or has no reach)."""
    gains = [float(g) for g in gains]
    index = crossing(gains)
    if index is None:
        return None
    level = REACH_SHARE * gains[0]
    back = next((i for i in range(index + 1, len(gains)) if gains[i] >= level), None)
    if back is None:
        return None
    last = max(i for i in range(len(gains)) if gains[i] >= level)
    below = None if last == len(gains) - 1 else (int(distances[last]), int(distances[last + 1]))
    return int(distances[back]), below


def bracket(distances: Sequence[int], gains: Sequence[float]) -> tuple[ReachOutcome, Bracket | None]:
    """The reach of one gain curve (distances ascending) as its outcome and, where FOUND, the two measured distances
    it lies between."""
    gains = [float(g) for g in gains]
    if not gains or gains[0] <= 0:
        return ReachOutcome.NONE, None
    index = crossing(gains)
    if index is None:
        return ReachOutcome.BEYOND, None
    return ReachOutcome.FOUND, (int(distances[index - 1]), int(distances[index]))


def read_between(distances: Sequence[int], gains: Sequence[float]) -> float | None:
    """A value for the reach to be drawn at: linear in log distance between the bracket's two distances (FOUND), the
    longest distance (BEYOND), None (NONE). Read between points, never measured."""
    outcome, found = bracket(distances, gains)
    if outcome is ReachOutcome.NONE:
        return None
    if outcome is ReachOutcome.BEYOND:
        return float(distances[-1])
    index = crossing([float(g) for g in gains])
    level = REACH_SHARE * float(gains[0])
    near, far = math.log(found[0]), math.log(found[1])
    step = (gains[index - 1] - level) / (gains[index - 1] - gains[index])
    return math.exp(near + step * (far - near))


def span(outcome: ReachOutcome, between: Bracket | None, longest: int) -> tuple[float, float] | None:
    """Where a reach lies, (low, high] in tokens: its bracket (FOUND), past the longest distance (BEYOND), None."""
    if outcome is ReachOutcome.FOUND:
        return float(between[0]), float(between[1])
    if outcome is ReachOutcome.BEYOND:
        return float(longest), math.inf
    return None


def compare(mine: tuple[float, float] | None, theirs: tuple[float, float] | None) -> Direction:
    """One reach against another, each as its span: LONGER or SHORTER only where the spans do not overlap."""
    if mine is None or theirs is None:
        return Direction.UNKNOWN
    if math.isinf(mine[1]) and math.isinf(theirs[1]):
        return Direction.BOTH_BEYOND
    if mine[0] >= theirs[1]:
        return Direction.LONGER
    if mine[1] <= theirs[0]:
        return Direction.SHORTER
    return Direction.OVERLAP


def narrow(between: Bracket) -> bool:
    """Whether a bracket is as narrow as --refine makes it: at most REFINE_TOKENS, or REFINE_SHARE of its nearer
    distance, whichever is larger (or no whole distance fits inside)."""
    low, high = between
    return high - low <= max(REFINE_TOKENS, REFINE_SHARE * low) or high - low < 2


def midpoint(between: Bracket) -> int:
    """The distance --refine measures next inside a bracket: its middle, in whole tokens."""
    return (between[0] + between[1]) // 2
