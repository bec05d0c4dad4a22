"""The retrieval probe's records (core.retrieval lays out its tokens): `RetrievalPass`, what one pass leaves in the
pass cache; `RetrievalPoint`, one passage at one distance under one view, planted and not; `Curve` and `Reach`, the
gain by distance of one view over the passages and how far it reaches; `RetrievalVerdict`, what the views do to
the reach; `RetrievalDocument`, the JSON `python -m model_utils retrieval` writes and the page reads."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from model_utils.core.records import check_format
from model_utils.core.records.base import Record, numbers, read, records, rope
from model_utils.core.records.run import RunInfo
from model_utils.core.records.spread import Spread
from model_utils.core.rope import Rope

FORMAT = 2  # 2: separate_views, and each reach's bracket of measured distances (format 1 reads, migrated)
KIND = "retrieval document"
PASS = "retrieval pass"
MASSES = ("copy_mass", "copy_mass_top", "target_mass", "target_mass_top", "sink_mass")  # [layer] each


def _array(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


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

    @classmethod
    def from_dict(cls, data: dict) -> RetrievalPass:
        """Passes cached before prefixes were shared read as whole-text passes."""
        arrays = {name: _array for name in MASSES}
        return read(cls, {"prefix_tokens": None} | data if isinstance(data, dict) else data, PASS, token_nll=_array,
                    **arrays)

    def to_dict(self) -> dict:
        masses = {name: _rounded(getattr(self, name), 5) for name in MASSES}
        return super().to_dict() | {"token_nll": _rounded(self.token_nll, 4)} | masses


@dataclass(frozen=True, kw_only=True)
class RetrievalPoint(Record):
    """One passage at one distance under one view, planted and not, on the same positions."""

    passage: str
    distance: int
    view: str  # the view's label
    planted: RetrievalPass
    unplanted: RetrievalPass

    @property
    def gain(self) -> float:
        """What reading the copy saves on the repeat, nats per token (0: the copy is not used)."""
        return self.unplanted.loss - self.planted.loss

    @classmethod
    def from_dict(cls, data: dict) -> RetrievalPoint:
        return read(cls, data, KIND, planted=RetrievalPass.from_dict, unplanted=RetrievalPass.from_dict)


@dataclass(frozen=True, kw_only=True)
class ViewEntry(Record):
    """A view of the probe: a constant temperature or a schedule, on the model's own positions or a recipe."""

    label: str
    temperature: float | None
    schedule: str | None
    rope: Rope | None

    @classmethod
    def from_dict(cls, data: dict) -> ViewEntry:
        return read(cls, data, KIND, rope=rope(KIND))


@dataclass(frozen=True, kw_only=True)
class PassageEntry(Record):
    """A passage the probe plants: where it comes from and its tokens as the model's tokenizer writes them."""

    name: str
    source: str
    sha256: str  # of its token ids, as planted
    tokens: tuple[str, ...]

    @classmethod
    def from_dict(cls, data: dict) -> PassageEntry:
        return read(cls, data, KIND, tokens=tuple)


class ReachOutcome(Enum):
    """FOUND: the gain falls below half its short-distance value between two measured distances; BEYOND: it has not
    by the longest distance measured (the reach is at least that); NONE: no gain even at the shortest distance."""

    FOUND = "found"
    BEYOND = "beyond"
    NONE = "none"


@dataclass(frozen=True, kw_only=True)
class Reach(Record):
    """How far back a view still uses what it read: `value` in tokens (the longest distance measured for BEYOND,
    None for NONE), with the spread of the passages' own reaches (a passage that never fell counts at the longest
    distance; `beyond` says how many)."""

    outcome: ReachOutcome
    value: float | None
    low: float | None
    high: float | None
    spread: Spread
    passages: int
    beyond: int  # passages whose own reach is past the longest distance measured

    @classmethod
    def from_dict(cls, data: dict) -> Reach:
        return read(cls, data, KIND, outcome=ReachOutcome, spread=Spread)

    def to_dict(self) -> dict:
        return super().to_dict() | {"outcome": self.outcome.value, "spread": self.spread.value}


@dataclass(frozen=True, kw_only=True)
class Curve(Record):
    """One view's gain by distance, averaged over the passages, with its spread over them, and its reach."""

    view: str
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

    @classmethod
    def from_dict(cls, data: dict) -> Curve:
        return read(cls, data, KIND, distances=tuple, gain=tuple, low=tuple, high=tuple, spread=Spread, share=tuple,
                    planted_loss=tuple, unplanted_loss=tuple, copy_mass=tuple, reach=Reach.from_dict)

    def to_dict(self) -> dict:
        return super().to_dict() | {"spread": self.spread.value}


class Direction(Enum):
    """What a view does to the reach against the reference: LONGER or SHORTER on every passage (or its 95% interval
    on one side of 0), else UNCHANGED; BOTH_BEYOND where both still reach the longest distance on every passage (the
    probe cannot tell); UNKNOWN where either has no reach."""

    LONGER = "longer"
    SHORTER = "shorter"
    UNCHANGED = "unchanged"
    BOTH_BEYOND = "both beyond"
    UNKNOWN = "unknown"


@dataclass(frozen=True, kw_only=True)
class ReachShift(Record):
    """A view's reach against the reference's: the shift of the mean curves' reaches in tokens, the spread of the
    passages' own shifts, and its direction."""

    view: str
    shift: float | None
    low: float | None
    high: float | None
    direction: Direction

    @classmethod
    def from_dict(cls, data: dict) -> ReachShift:
        return read(cls, data, KIND, direction=Direction)

    def to_dict(self) -> dict:
        return super().to_dict() | {"direction": self.direction.value}


@dataclass(frozen=True, kw_only=True)
class RetrievalVerdict(Record):
    """The reference view's reach and what every other view does to it; the constant temperature that reaches
    farthest (ties: the larger mean gain over the distances)."""

    reference: str
    reach: Reach
    shifts: tuple[ReachShift, ...]
    best_temperature: float | None
    trained_length: int
    longest_distance: int

    @classmethod
    def from_dict(cls, data: dict) -> RetrievalVerdict:
        return read(cls, data, KIND, reach=Reach.from_dict, shifts=records(ReachShift.from_dict))


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
    views: tuple[ViewEntry, ...]
    points: tuple[RetrievalPoint, ...]
    curves: tuple[Curve, ...]
    verdict: RetrievalVerdict
    seconds: float  # compute time of the passes, cached or not
    peak_rss_gb: float | None
    run: RunInfo | None
    separate_views: tuple[str, ...]  # views whose every text was read whole (the others shared their prefixes)

    @classmethod
    def from_dict(cls, data: dict) -> RetrievalDocument:
        """Format 1 (every text read whole) reads migrated."""
        if check_format(data, KIND, FORMAT, accepted=(1,)) == 1:
            data = migrated(data)
        return read(cls, data, KIND, passages=records(PassageEntry.from_dict), distances=numbers,
                    views=records(ViewEntry.from_dict), points=records(RetrievalPoint.from_dict),
                    curves=records(Curve.from_dict), verdict=RetrievalVerdict.from_dict, run=RunInfo.from_dict,
                    separate_views=tuple)

    def curve(self, view: str) -> Curve:
        return next(curve for curve in self.curves if curve.view == view)

    def point(self, passage: str, distance: int, view: str) -> RetrievalPoint:
        return next(point for point in self.points
                    if (point.passage, point.distance, point.view) == (passage, distance, view))



def migrated(data: dict) -> dict:
    """A format-1 document as format 2 holds it: every view read its texts whole."""
    views = [view.get("label") for view in data.get("views", []) if isinstance(view, dict)]
    return data | {"format": FORMAT, "separate_views": views}
