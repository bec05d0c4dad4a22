"""The Collapse inspector's verdict on one prompt, as numbers: at each view, where the last query's attention goes
(its recent window, the fact, the sink) and whether the model answers, that is whether its greedy continuation holds
the expected answer (case and runs of whitespace aside); against the reference view (T = 1, or the temperature
closest to it), which views answer where it does not. verdicts/words says it."""

from __future__ import annotations

from dataclasses import dataclass

from model_utils.core.collapse import (
    AnswerProbe,
    FactSearch,
    FactSpan,
    LastQueryMasses,
    SaidAtView,
    fact_in_recent,
    report_masses,
)
from model_utils.core.report import Cut, Report


@dataclass(frozen=True, kw_only=True)
class ViewOutcome:
    """One view: the last query's masses, and what the model said (None without an expected answer)."""

    masses: LastQueryMasses
    said: SaidAtView | None
    answers: bool | None

    @property
    def label(self) -> str:
        return self.masses.label

    @property
    def temperature(self) -> float | None:
        return self.masses.temperature


@dataclass(frozen=True, kw_only=True)
class CollapseVerdict:
    """Every view of one prompt against the reference view (index `reference`)."""

    reference: int
    window: int
    last_token: str
    fact: FactSpan | None
    fact_in_recent: bool  # some of the fact's tokens lie in the recent window, where they count as recent
    marked_missing: str | None  # a phrase the user marked that the prompt does not hold
    answer: str | None  # the expected answer (None: none given)
    views: tuple[ViewOutcome, ...]
    cut: Cut | None

    @property
    def answering(self) -> list[int]:
        """The views whose continuation holds the answer."""
        return [index for index, view in enumerate(self.views) if view.answers]

    @property
    def helped(self) -> list[int]:
        """The views that answer where the reference does not."""
        return [] if self.views[self.reference].answers else self.answering

    @property
    def likeliest(self) -> int | None:
        """The view at which the whole answer is likeliest (None without an expected answer)."""
        said = [index for index, view in enumerate(self.views) if view.said is not None]
        return max(said, key=lambda index: self.views[index].said.answer_log_prob) if said else None

    @property
    def fact_range(self) -> tuple[int, int] | None:
        """(view with the least fact mass, view with the most); None without a fact mass or with one view."""
        measured = [index for index, view in enumerate(self.views) if view.masses.fact is not None]
        if len(measured) < 2:
            return None
        def fact(index: int) -> float:
            return self.views[index].masses.fact
        return min(measured, key=fact), max(measured, key=fact)


def normalised(text: str) -> str:
    """Lower-cased, with every run of whitespace one space and none at the ends."""
    return " ".join(text.split()).casefold()


def answers(said: SaidAtView, answer: str) -> bool:
    """Whether a continuation holds the answer (normalised; special tokens left out)."""
    wanted = normalised(answer)
    return bool(wanted) and wanted in normalised(said.text)


def collapse_verdict(report: Report, search: FactSearch, probe: AnswerProbe | None) -> CollapseVerdict:
    """The verdict of `report` (its last query's rows), with the fact `search` found and the answer `probe` (None:
    no expected answer; its views are the report's, in order)."""
    masses = report_masses(report, search.fact)
    said = [None] * len(masses) if probe is None else list(probe.views)
    if len(said) != len(masses) or any(entry is not None and entry.label != mass.label
                                       for entry, mass in zip(said, masses, strict=True)):
        raise ValueError("the answer probe's views are not the report's")
    views = tuple(ViewOutcome(masses=mass, said=entry, answers=None if entry is None else answers(entry, probe.answer))
                  for mass, entry in zip(masses, said, strict=True))
    return CollapseVerdict(reference=report.reference_index, window=report.window, last_token=report.tokens[-1],
                           fact=search.fact, fact_in_recent=fact_in_recent(report, search.fact),
                           marked_missing=search.marked_missing, answer=None if probe is None else probe.answer,
                           views=views, cut=report.cut)
