"""The explorer's words: every sentence, headline and label a verdict is said in, as small pure functions (records
and numbers in, words out), so a page, the command line, the README generator and FINDINGS say the same thing and a
changed word is one function and one golden file (tests/golden)."""

from __future__ import annotations

from model_utils.core.names import model_name
from model_utils.core.records.retrieval import (
    Direction,
    Reach,
    ReachOutcome,
    ReachShift,
    RetrievalDocument,
    RetrievalVerdict,
)
from model_utils.core.records.spread import Spread
from model_utils.verdicts.retrieval import REACH_SHARE

# --- Retrieval at a distance -----------------------------------------------------------------------------------------


def tokens_text(value: float) -> str:
    """A distance in tokens as a reader says it: 'about 5,100 tokens' (two significant figures above 1,000)."""
    rounded = round(value, -2) if value >= 1000 else round(value, -1)
    return f"about {rounded:,.0f} tokens"


def spread_text(low: float | None, high: float | None, spread: Spread, passages: int) -> str:
    """'4 passages: 4,300 to 6,000' or '95% interval over 8 passages: 4,300 to 6,000'."""
    if low is None or high is None:
        return f"{passages} passages"
    where = f"{passages} passages" if spread is Spread.RANGE else f"95% interval over {passages} passages"
    return f"{where}: {low:,.0f} to {high:,.0f}"


def reach_short(reach: Reach) -> str:
    """A reach as a headline number: '5,100 tokens', '≥ 12,288 tokens', 'none'."""
    if reach.outcome is ReachOutcome.NONE:
        return "none"
    rounded = round(reach.value, -2) if reach.outcome is ReachOutcome.FOUND and reach.value >= 1000 else reach.value
    return f"{'≥ ' if reach.outcome is ReachOutcome.BEYOND else ''}{rounded:,.0f} tokens"


def reach_text(reach: Reach) -> str:
    """How far a view reaches, with its spread: 'about 5,100 tokens (4 passages: 4,300 to 6,000)'."""
    if reach.outcome is ReachOutcome.NONE:
        return "no reach (the copy does not help even at the shortest distance)"
    spread = spread_text(reach.low, reach.high, reach.spread, reach.passages)
    if reach.outcome is ReachOutcome.BEYOND:
        return f"at least {reach.value:,.0f} tokens, the longest distance measured ({spread})"
    return f"{tokens_text(reach.value)} ({spread})"


def reach_sentence(model: str, verdict: RetrievalVerdict) -> str:
    """The probe's answer in one sentence: how far back the model still uses what it read, at T = 1."""
    reach, model = verdict.reach, model_name(model)
    if reach.outcome is ReachOutcome.NONE:
        return (f"{model} does not use a passage it read earlier even at the shortest distance measured: its repeat "
                "is read as new text.")
    trained = f"its trained length is {verdict.trained_length:,}"
    if reach.outcome is ReachOutcome.BEYOND:
        return (f"{model} still uses a passage it read {reach.value:,.0f} tokens back, the farthest measured "
                f"({trained}).")
    return (f"{model} uses a passage it read earlier only up to {reach_text(reach)} back; "
            f"farther back it reads the repeat almost as new text ({trained}).")


def _labels(shifts: list[ReachShift]) -> str:
    names = [shift.view for shift in shifts]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def shifts_sentence(verdict: RetrievalVerdict) -> str:
    """What the other views do to the reach: which lengthen it, which shorten it, on every passage, by how much."""
    longer = [s for s in verdict.shifts if s.direction is Direction.LONGER]
    shorter = [s for s in verdict.shifts if s.direction is Direction.SHORTER]
    same = [s for s in verdict.shifts if s.direction is Direction.UNCHANGED]
    parts = []
    if longer:
        best = max(longer, key=lambda s: s.shift)
        parts.append(f"{_labels(longer)} {'reach' if len(longer) > 1 else 'reaches'} farther on every passage "
                     f"(the most: {best.view}, {best.shift:+,.0f} tokens)")
    if shorter:
        worst = min(shorter, key=lambda s: s.shift)
        parts.append(f"{_labels(shorter)} {'fall' if len(shorter) > 1 else 'falls'} short sooner "
                     f"(the most: {worst.view}, {worst.shift:+,.0f} tokens)")
    if same:
        parts.append(f"{_labels(same)} {'do' if len(same) > 1 else 'does'} not move it the same way on every "
                     "passage")
    if not parts:
        return "No other view was measured against T = 1."
    return "Against T = 1: " + "; ".join(parts) + "."


def retrieval_method() -> str:
    """How the reach is measured, with the threshold that picks it."""
    return (f"The reach is the distance at which what the copy saves on its repeat (the loss with nothing planted "
            f"minus the loss with the passage planted, nats per token) falls below {REACH_SHARE:.0%} of what it "
            "saves at the shortest distance, read between the measured distances on a log scale.")


def retrieval_table(document: RetrievalDocument) -> str:
    """The command line's table: per view, the gain at each distance and the reach; then the verdict."""
    width = max(12, *(len(curve.view) for curve in document.curves))
    head = f"{'view':>{width}} " + " ".join(f"{d:>8,}" for d in document.distances) + "  reach"
    lines = [f"{model_name(document.model)}: gain on the repeat (nats per token) by distance, {len(document.passages)} "
             f"passages, trained length {document.trained_length:,}", head]
    for curve in document.curves:
        gains = " ".join(f"{g:8.3f}" for g in curve.gain)
        lines.append(f"{curve.view:>{width}} {gains}  {reach_text(curve.reach)}")
    return "\n".join([*lines, reach_sentence(document.model, document.verdict), shifts_sentence(document.verdict)])
