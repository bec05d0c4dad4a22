"""The retrieval probe's words (RetrievalDocument, judged by verdicts/retrieval.py): how far back the model still
uses what it read, as the two measured distances its reach lies between; what each other view does to that reach;
how the probe is measured; FINDINGS' block and the command line's table."""

from __future__ import annotations

from collections.abc import Sequence

from model_utils.core.names import model_name
from model_utils.core.records.retrieval import (
    Curve,
    Reach,
    ReachOutcome,
    ReachShift,
    RetrievalDocument,
    RetrievalVerdict,
)
from model_utils.core.records.retrieval import Direction as ReachDirection
from model_utils.core.records.spread import Spread
from model_utils.verdicts.retrieval import REACH_SHARE, comeback
from model_utils.verdicts.words.common import joined

__all__ = ["TRANSPOSE_FROM", "against_trained", "between_text", "comebacks_sentence", "reach_headline",
           "reach_sentence", "reach_share_words", "reach_short", "reach_text", "retrieval_findings", "retrieval_method",
           "retrieval_table", "separate_passes_line", "shifts_sentence"]


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


def reach_share_words() -> str:
    """REACH_SHARE as a sentence says it: 'half', else '40%'."""
    return "half" if REACH_SHARE == 0.5 else f"{REACH_SHARE:.0%}"


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
    return (f"{model} uses less than {reach_share_words()} as much of what it read beyond a point "
            f"{between_text(reach.between)} back, both distances measured ({_passages_text(reach)}), as at the "
            f"shortest distance: from there on, the first copy saves less than {REACH_SHARE:.0%} of what it saves "
            f"there. {trained[:-1]}: {against_trained(reach.between, verdict.trained_length)}.")


def reach_headline(model: str, verdict: RetrievalVerdict) -> str:
    """The probe's answer as a page's first line: how far back the model still uses what it read at T = 1, as the
    measured distances that bracket it, and on which side of the trained length; reach_sentence says it in full."""
    reach = verdict.reach
    if reach.outcome is not ReachOutcome.FOUND:
        return reach_sentence(model, verdict)
    low, high = reach.between
    trained = verdict.trained_length
    side = ("inside" if high <= trained else "past" if low >= trained else
            "around (the probe cannot tell on which side)")
    return (f"{model_name(model)} uses less than {reach_share_words()} as much of what it read once it lies "
            f"{between_text(reach.between)} back: {side} the {trained:,} tokens it was trained on.")


def against_trained(between: tuple[int, int], trained: int) -> str:
    """Where a bracketed reach ends against the trained length, by how much as the bracket allows: 'the reach ends
    inside it, 1,517 to 1,692 tokens short of it', 'past it, by 1,232 to 3,232 tokens', or, where the bracket holds
    it, that the probe cannot tell."""
    low, high = between
    if high <= trained:
        return f"the reach ends inside it, {trained - high:,} to {trained - low:,} tokens short of it"
    if low >= trained:
        return f"the reach ends past it, by {low - trained:,} to {high - trained:,} tokens"
    return "it lies between the two, so the probe cannot tell whether the reach ends inside it or past it"


def _moved(shift: ReachShift, longest: int, reach: Reach | None) -> str:
    """'T=1.5 cuts it short on every passage: to between 1,024 and 2,048 tokens on the passages' mean (the 4
    passages' own: from 512 to 2,048 tokens)', 'T=0.9 takes it farther on 3 of the 4 passages: past 7,900 tokens,
    the farthest measured, on the passages' mean'. "On every passage" is said of the move alone (each passage's own
    bracket apart from T = 1's); the bracket named is the pooled one, with the passages' own beside it where they
    differ (`reach`, the view's, where known)."""
    verb = "takes it farther" if shift.direction is ReachDirection.LONGER else "cuts it short"
    passages = "on every passage" if shift.every_passage else f"on {shift.agree} of the {shift.passages} passages"
    where = (f"past {longest:,} tokens, the farthest measured," if shift.outcome is not ReachOutcome.FOUND
             else f"to {between_text(shift.between)}")
    own = ""
    if reach is not None and reach.per_passage and not _alike(reach):
        own = f" ({_passages_text(reach)})"
    return f"{shift.view.label} {verb} {passages}: {where} on the passages' mean{own}"


def comebacks_sentence(curves: Sequence[Curve]) -> str | None:
    """The views whose use of the copy comes back above the reach's level after the reach (core.reach.comeback),
    with where and how much, and where it falls below for good; None where no curve does."""
    said = []
    for curve in curves:
        found = comeback(curve.distances, curve.gain)
        if found is None:
            continue
        back, below = found
        gain = curve.gain[curve.distances.index(back)]
        end = (f"and falls below it again {between_text(below)} back" if below is not None else
               f"and is still above it at {curve.distances[-1]:,} tokens, the farthest measured")
        said.append(f"{curve.view.label}'s gain comes back above {reach_share_words()} of its shortest-distance "
                    f"value at {back:,} tokens ({gain:.2f} against {curve.gain[0]:.2f}) {end}")
    if not said:
        return None
    return ("Past its reach, a curve need not stay down: " + "; ".join(said) + ". The reach names the first fall; "
            "the table has every measured point.")


def _alike(reach: Reach) -> bool:
    """Whether every passage's own reach is the mean's: the same bracket, or all past the longest distance."""
    if reach.outcome is ReachOutcome.BEYOND:
        return reach.beyond == reach.passages
    return {p.between for p in reach.per_passage} == {reach.between}


def shifts_sentence(verdict: RetrievalVerdict, curves: Sequence[Curve] = ()) -> str:
    """What the other views do to the reach, as brackets: a view moves it only where its bracket and T = 1's do not
    overlap, and on every passage only where each passage's own do not (the bracket said is the passages' mean's,
    with their own beside it from `curves`, the probe's, where given); the probe cannot tell the others from T = 1,
    nor views that, like T = 1, still use the copy at the longest distance."""
    if not verdict.shifts:
        return "No other view was measured against T = 1."
    reaches = {curve.view: curve.reach for curve in curves}
    found = {direction: [s for s in verdict.shifts if s.direction is direction] for direction in ReachDirection}
    moved = found[ReachDirection.SHORTER] + found[ReachDirection.LONGER]
    said = ("Against T = 1, " + "; ".join(_moved(s, verdict.longest_distance, reaches.get(s.view)) for s in moved)
            + ".") if moved else ""
    overlap, beyond, unknown = (found[d] for d in (ReachDirection.OVERLAP, ReachDirection.BOTH_BEYOND,
                                                   ReachDirection.UNKNOWN))
    if overlap:
        said += (f" The probe cannot tell {joined([s.view.label for s in overlap])} from T = 1: "
                 f"{'its reach lies' if len(overlap) == 1 else 'their reaches lie'} between measured distances "
                 "that overlap T = 1's.")
    if beyond:
        said += (f" {joined([s.view.label for s in beyond])} still {'uses' if len(beyond) == 1 else 'use'} the copy at "
                 f"{verdict.longest_distance:,} tokens too, the farthest measured, so this probe cannot tell whether "
                 f"{'it moves' if len(beyond) == 1 else 'they move'} the reach.")
    if unknown:
        said += f" {joined([s.view.label for s in unknown])} cannot be compared: no reach on the mean of the passages."
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


TRANSPOSE_FROM = 9  # from this many grid distances on, the tables set one distance per row and one view per column


def _gain_at(curve: Curve, distance: int) -> int | None:
    """The index of `distance` among the curve's own distances (a view may have fewer than the grid, or more, where
    --refine added some); None where the view was not measured there."""
    return curve.distances.index(distance) if distance in curve.distances else None


def _refined_text(document: RetrievalDocument) -> str:
    """'; --refine added 3 to 4 distances per view inside their reaches' brackets' (empty when it added none): the
    distances of each curve that are not on the grid (a view measured at fewer grid distances adds none by that)."""
    grid = set(document.distances)
    added = [len(set(curve.distances) - grid) for curve in document.curves]
    if not any(added):
        return ""
    low, high = min(added), max(added)
    count = f"{low}" if low == high else f"{low} to {high}"
    return f"; --refine added {count} distances per view inside their reaches' brackets"


def _cell(curve: Curve, distance: int) -> str:
    """'2.66 (2.33 to 3.24)': the view's gain at the distance with the passages' spread; '' where not measured."""
    index = _gain_at(curve, distance)
    return "" if index is None else f"{curve.gain[index]:.2f} ({curve.low[index]:.2f} to {curve.high[index]:.2f})"


def _measured(document: RetrievalDocument) -> list[int]:
    """Every distance some view was measured at: the grid's and those --refine added, ascending."""
    return sorted({distance for curve in document.curves for distance in curve.distances})


def _findings_table(document: RetrievalDocument) -> list[str]:
    """The gain by distance per view and the reach: one row per view and a column per grid distance, or, from
    TRANSPOSE_FROM grid distances on, one row per distance measured (the grid's and any --refine added) and a
    column per view, a blank cell where a view was not measured, the reach as the last row."""
    curves = document.curves
    if len(document.distances) < TRANSPOSE_FROM:
        lines = [f"| view | {' | '.join(f'{d:,}' for d in document.distances)} | reach |",
                 "|---|" + "---:|" * len(document.distances) + "---|"]
        return lines + [f"| {curve.view.label} | {' | '.join(_cell(curve, d) for d in document.distances)} | "
                        f"{reach_text(curve.reach)} |" for curve in curves]
    lines = [f"| tokens back | {' | '.join(curve.view.label for curve in curves)} |",
             "|---:|" + "---:|" * len(curves)]
    lines += [f"| {d:,} | {' | '.join(_cell(curve, d) for curve in curves)} |" for d in _measured(document)]
    return [*lines, f"| reach | {' | '.join(reach_text(curve.reach) for curve in curves)} |"]


def retrieval_findings(document: RetrievalDocument) -> list[str]:
    """FINDINGS' block of one probe: what it ran, its verdict, and a table of the gain by distance per view with the
    passages' spread and the reach's bracket (_findings_table: transposed where the grid is long)."""
    lines = [f"{model_name(document.model)}: {len(document.passages)} passages of "
             f"{len(document.passages[0].tokens)} tokens ({', '.join(p.name for p in document.passages)}) planted in "
             f"{document.filler_source}; distances {', '.join(f'{d:,}' for d in document.distances)}"
             f"{_refined_text(document)}; trained length {document.trained_length:,}; "
             f"{document.seconds / 60:.0f} min of passes"
             + (f"; command: `{document.run.command}`" if document.run else "") + ".", "",
             f"- {reach_sentence(document.model, document.verdict)}",
             f"- {shifts_sentence(document.verdict, document.curves)}",
             *([f"- {back}"] if (back := comebacks_sentence(document.curves)) else []), f"- {retrieval_method()}", "",
             "What the first copy saves on its repeat (nats per token; the passages' "
             f"{'range' if document.curves[0].spread is Spread.RANGE else '95% interval'} in brackets; blank: not "
             "measured), by distance back, and the reach:", ""]
    return lines + _findings_table(document)


def retrieval_table(document: RetrievalDocument) -> str:
    """The command line's table: per view, the gain at each of the grid's distances and the reach; from
    TRANSPOSE_FROM grid distances on, one line per distance measured and a column per view (blank: not measured),
    then each view's reach on a line of its own; then the verdict."""
    title = (f"{model_name(document.model)}: gain on the repeat (nats per token) by distance, "
             f"{len(document.passages)} passages, trained length {document.trained_length:,}"
             f"{_refined_text(document)}")
    curves = document.curves
    if len(document.distances) < TRANSPOSE_FROM:
        width = max(12, *(len(curve.view.label) for curve in curves))
        lines = [title, f"{'view':>{width}} " + " ".join(f"{d:>8,}" for d in document.distances) + "  reach"]
        for curve in curves:
            indices = [_gain_at(curve, d) for d in document.distances]
            gains = " ".join(f"{'':>8}" if i is None else f"{curve.gain[i]:8.3f}" for i in indices)
            lines.append(f"{curve.view.label:>{width}} {gains}  {reach_text(curve.reach)}")
    else:
        widths = [max(8, len(curve.view.label)) for curve in curves]
        lines = [title, f"{'tokens back':>11} " + " ".join(f"{c.view.label:>{w}}" for c, w in zip(curves, widths,
                                                                                               strict=True))]
        for distance in _measured(document):
            cells = [(f"{'':>{w}}" if (i := _gain_at(c, distance)) is None else f"{c.gain[i]:{w}.3f}")
                     for c, w in zip(curves, widths, strict=True)]
            lines.append(f"{distance:>11,} " + " ".join(cells))
        lines += [f"reach of {curve.view.label}: {reach_text(curve.reach)}" for curve in curves]
    return "\n".join([*lines, reach_sentence(document.model, document.verdict),
                      shifts_sentence(document.verdict, curves)])


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

