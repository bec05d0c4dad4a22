"""The retrieval probe's records (core.retrieval lays out its tokens): `RetrievalPass`, what one pass leaves in the
pass cache; `RetrievalPoint`, one passage at one distance under one view, planted and not; `Curve` and `Reach`, the
gain by distance of one view over the passages and how far it reaches, as the measured distances that bracket it
(core.reach has the rule), per view and per passage; `RetrievalVerdict`, what the views do to the reach;
`RetrievalDocument`, the JSON `python -m model_utils retrieval` writes and the page reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model_utils.core.reach import Bracket, Direction, ReachOutcome, bracket, compare, read_between, span
from model_utils.core.records import RecordError, check_format, field
from model_utils.core.records.base import Record, old_view, read
from model_utils.core.records.run import RunInfo
from model_utils.core.records.spread import Spread
from model_utils.core.views import View

__all__ = ["Direction", "ReachOutcome"]  # core.reach's, named here too: a record of a verdict holds them

FORMAT = 3  # 3: views stored whole; 2: separate_views, and each reach's bracket of measured distances
KIND = "retrieval document"
PASS = "retrieval pass"
MASSES = ("copy_mass", "copy_mass_top", "target_mass", "target_mass_top", "sink_mass")  # [layer] each


def _rounded(values: np.ndarray, digits: int) -> list[float]:
    return [round(float(value), digits) for value in values]


@dataclass(frozen=True, kw_only=True)
class RetrievalPass(Record):
    """One pass of the probe: the loss on the repeat (its tokens after the first) and where the repeat's queries put
    their attention, per layer: on the copy's keys (the mean of the heads, and the head that puts the most there)
    and on the first token (the sink); the rest is elsewhere."""

    n_tokens: int
    loss: float  # mean next-token NLL over the repeat's tokens after its first
    token_nll: np.ndarray  # [passage - 1]
    copy_mass: np.ndarray  # [layer] mean over heads and the repeat's queries
    copy_mass_top: np.ndarray  # [layer] the largest head's mean over the repeat's queries
    target_mass: np.ndarray  # [layer] on the one copy key an induction copy reads: the next token's first copy
    target_mass_top: np.ndarray  # [layer] the largest head's
    sink_mass: np.ndarray  # [layer] mean over heads and queries, on token 0
    seconds: float  # the pass and the masses (a continuation: its own and its share of the prefix's pass)
    kernel: str
    peak_rss_gb: float | None  # of the process that ran it, so far
    prefix_tokens: int | None = None  # the repeat read as the continuation of a prefix this long, read once for
    # several distances or passages; None: the whole text read in one pass

    def to_dict(self) -> dict:
        masses = {name: _rounded(getattr(self, name), 5) for name in MASSES}
        return super().to_dict() | {"token_nll": _rounded(self.token_nll, 4)} | masses


@dataclass(frozen=True, kw_only=True)
class RetrievalPoint(Record):
    """One passage at one distance under one view, planted and not, on the same positions."""

    passage: str
    distance: int
    view: View
    planted: RetrievalPass
    unplanted: RetrievalPass

    @property
    def gain(self) -> float:
        """What reading the copy saves on the repeat, nats per token (0: the copy is not used)."""
        return self.unplanted.loss - self.planted.loss


@dataclass(frozen=True, kw_only=True)
class PassageEntry(Record):
    """A passage the probe plants: where it comes from and its tokens as the model's tokenizer writes them."""

    name: str
    source: str
    sha256: str  # of its token ids, as planted
    tokens: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class PassageReach(Record):
    """One passage's own reach under a view: its outcome and, where FOUND, the two measured distances it lies
    between."""

    passage: str
    outcome: ReachOutcome
    between: Bracket | None


@dataclass(frozen=True, kw_only=True)
class Reach(Record):
    """How far back a view still uses what it read, on the mean of the passages: where FOUND, the two measured
    distances it lies between (`between`); `value` is read between them on a log scale, for drawing only (the
    longest distance for BEYOND, None for NONE); and each passage's own reach."""

    outcome: ReachOutcome
    value: float | None
    between: Bracket | None
    longest: int  # the longest distance measured on this curve
    passages: int
    beyond: int  # passages whose own reach is past the longest distance measured
    per_passage: tuple[PassageReach, ...]

    @classmethod
    def of(cls, distances: Sequence[int], names: Sequence[str], table: np.ndarray) -> Reach:
        """The reach of the mean of `table` ([passage, distance] gains, distances ascending) and each row's."""
        outcome, between = bracket(distances, table.mean(axis=0))
        value = read_between(distances, table.mean(axis=0))
        own = tuple(PassageReach(passage=name, outcome=found[0], between=found[1])
                    for name, found in zip(names, (bracket(distances, row) for row in table), strict=True))
        return cls(outcome=outcome, value=None if value is None else round(value, 1), between=between,
                   longest=int(distances[-1]), passages=len(names),
                   beyond=sum(p.outcome is ReachOutcome.BEYOND for p in own), per_passage=own)

    def span(self, passage: str | None = None) -> tuple[float, float] | None:
        """Where the reach lies, (low, high] in tokens (core.reach.span), of the mean or of one passage's."""
        if passage is None:
            return span(self.outcome, self.between, self.longest)
        own = next(p for p in self.per_passage if p.passage == passage)
        return span(own.outcome, own.between, self.longest)


@dataclass(frozen=True, kw_only=True)
class Curve(Record):
    """One view's gain by distance, averaged over the passages, with its spread over them, and its reach."""

    view: View
    distances: tuple[int, ...]
    gain: tuple[float, ...]  # mean over passages, nats per token
    low: tuple[float, ...]
    high: tuple[float, ...]
    spread: Spread  # of low and high
    share: tuple[float | None, ...]  # gain / gain at the shortest distance (None where that is not above 0)
    planted_loss: tuple[float, ...]
    unplanted_loss: tuple[float, ...]
    copy_mass: tuple[float, ...]  # mean over layers, heads, queries and passages, planted
    reach: Reach



@dataclass(frozen=True, kw_only=True)
class ReachShift(Record):
    """A view's reach against the reference's, as brackets: its direction (moved only where the brackets of the
    means do not overlap), the view's own outcome and bracket, and on how many of the passages each passage's own
    brackets are apart the same way."""

    view: View
    direction: Direction
    outcome: ReachOutcome
    between: Bracket | None
    agree: int  # passages whose own reach moves the same way as the mean's (LONGER or SHORTER only; else 0)
    passages: int

    @classmethod
    def of(cls, view: View, mine: Reach, reference: Reach) -> ReachShift:
        direction = compare(mine.span(), reference.span())
        moved = direction in (Direction.LONGER, Direction.SHORTER)
        agree = sum(compare(mine.span(p.passage), reference.span(p.passage)) is direction
                    for p in mine.per_passage) if moved else 0
        return cls(view=view, direction=direction, outcome=mine.outcome, between=mine.between, agree=agree,
                   passages=mine.passages)

    @property
    def every_passage(self) -> bool:
        return self.agree == self.passages


@dataclass(frozen=True, kw_only=True)
class RetrievalVerdict(Record):
    """The reference view's reach and what every other view does to it; the constant temperature that reaches
    farthest (ties: the larger mean gain over the distances)."""

    reference: View
    reach: Reach
    shifts: tuple[ReachShift, ...]
    best_temperature: float | None
    trained_length: int
    longest_distance: int


@dataclass(frozen=True, kw_only=True)
class RetrievalDocument(Record):
    """A retrieval run: its settings, every point, one curve per view and the verdict."""

    format: int
    model: str
    trained_length: int
    beyond_trained: bool
    filler_source: str
    filler_sha256: str
    filler_tokens: int
    lead: int
    passages: tuple[PassageEntry, ...]
    distances: tuple[int, ...]
    views: tuple[View, ...]
    points: tuple[RetrievalPoint, ...]
    curves: tuple[Curve, ...]
    verdict: RetrievalVerdict
    seconds: float  # compute time of the passes, cached or not
    peak_rss_gb: float | None
    run: RunInfo | None
    separate_views: tuple[View, ...]  # views whose every text was read whole (the others shared their prefixes)

    @classmethod
    def from_dict(cls, data: dict, kind: str | None = None) -> RetrievalDocument:
        """A document of this format or an older one (upgraded first: `upgraded`)."""
        return read(cls, upgraded(data), KIND)

    def curve(self, view: View) -> Curve:
        return next(curve for curve in self.curves if curve.view == view)

    @property
    def refined(self) -> bool:
        """Whether a curve holds distances past the grid's (added by --refine)."""
        return any(curve.distances != self.distances for curve in self.curves)

    def point(self, passage: str, distance: int, view: View) -> RetrievalPoint:
        return next(point for point in self.points
                    if (point.passage, point.distance, point.view) == (passage, distance, view))


def upgraded(data: dict) -> dict:
    """A document's JSON of this format, from this format or an older one."""
    found = check_format(data, KIND, FORMAT, accepted=(1, 2))
    if found == 1:
        data = _from_format_1(data)
    return data if found == FORMAT else _from_format_2(data)


def _from_format_2(data: dict) -> dict:
    """Format 2 (and 1) stored each view as its label, temperature, schedule label and recipe, and named it by its
    label everywhere else (points, curves, the verdict, the separate views): each label is the view it was written
    from."""
    longest = field(data, "lead", KIND) + max(field(data, "distances", KIND)) + max(
        len(field(entry, "tokens", KIND)) for entry in field(data, "passages", KIND))
    views = {field(entry, "label", KIND): old_view(entry, (longest,), field(data, "trained_length", KIND), KIND)
             for entry in field(data, "views", KIND)}

    def whole(label: str) -> dict:
        if label not in views:
            raise RecordError(f"this {KIND} names the view {label!r}, which it does not list: it is damaged; "
                              "regenerate it with the command that made it")
        return views[label]

    def named(entries: list) -> list:
        return [entry | {"view": whole(field(entry, "view", KIND))} for entry in entries]

    verdict = field(data, "verdict", KIND)
    verdict = verdict | {"reference": whole(field(verdict, "reference", KIND)),
                         "shifts": named(field(verdict, "shifts", KIND))}
    return data | {"format": FORMAT, "views": list(views.values()), "verdict": verdict,
                   "points": named(field(data, "points", KIND)), "curves": named(field(data, "curves", KIND)),
                   "separate_views": [whole(label) for label in field(data, "separate_views", KIND)]}


def _from_format_1(data: dict) -> dict:
    """A format-1 document as format 2 holds it: every view read its texts whole, and each reach and shift is
    judged again from the points by brackets (format 1 kept reaches read between points)."""
    try:
        names = [entry["name"] for entry in data["passages"]]
        gains = {(p["passage"], p["distance"], p["view"]): p["unplanted"]["loss"] - p["planted"]["loss"]
                 for p in data["points"]}
        reaches = {}
        curves = []
        for curve in data["curves"]:
            table = np.array([[gains[(name, d, curve["view"])] for d in curve["distances"]] for name in names])
            reaches[curve["view"]] = Reach.of(curve["distances"], names, table)
            curves.append(curve | {"reach": reaches[curve["view"]].to_dict()})
        verdict = data["verdict"]
        reference = reaches[verdict["reference"]]
        shifts = [ReachShift.of(shift["view"], reaches[shift["view"]], reference).to_dict()
                  for shift in verdict["shifts"]]
        verdict = verdict | {"reach": reference.to_dict(), "shifts": shifts}
    except (KeyError, TypeError):
        return data  # damaged: the reader names what is missing
    views = [view.get("label") for view in data.get("views", []) if isinstance(view, dict)]
    return data | {"format": 2, "separate_views": views, "curves": curves, "verdict": verdict}
