"""The verdict of a fit (fit.json's FitSummary record, model_utils/experiments/fit/summary.py): the logit multiplier
set against YaRN's published law and each held-out gain judged by its bootstrap interval (a gain whose interval
holds 0 is no measurable difference), as a FitVerdict of enums (`judge_fit`) that verdicts/words says; and the fits
folded into the corpus verdict of the tune they were made on (`fold_fits`), when the fit or the tune is written.
Plain arithmetic."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from model_utils.core.records.fit import FitSummary, Gain, Multiplier
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import DecompositionRow, FittedValue, RowKind, Scoring, family_of
from model_utils.core.views import View

# the references a fit's held-out gains are measured against, in the order the verdict names them
REFERENCES = ("plain", "recipe_at_1", "recipe", "best_constant", "best_schedule")


class Judgement(StrEnum):
    """A held-out gain against 0, by where its interval lies."""

    BETTER = "better"
    WORSE = "worse"
    NO_DIFFERENCE = "no measurable difference"


class LawPosition(StrEnum):
    """YaRN's law against the fitted multiplier's interval over documents."""

    WITHIN = "within"
    BELOW = "below"  # the fit sharpens more than the law
    ABOVE = "above"  # the law sharpens more than the fit


def judge(gain: Gain) -> Judgement:
    low, high = gain.interval
    if low > 0:
        return Judgement.BETTER
    return Judgement.WORSE if high < 0 else Judgement.NO_DIFFERENCE


def law(summary: FitSummary) -> Multiplier | None:
    """The fitted logit multiplier where it is set against YaRN's law (a constant T on yarn-rope), else None."""
    multiplier = summary.multiplier
    return multiplier if multiplier is not None and multiplier.yarn_law is not None else None


def law_position(multiplier: Multiplier) -> LawPosition:
    low, high = multiplier.interval
    if low <= multiplier.yarn_law <= high:
        return LawPosition.WITHIN
    return LawPosition.BELOW if multiplier.yarn_law < low else LawPosition.ABOVE


@dataclass(frozen=True, kw_only=True)
class FitVerdict:
    """A fit judged: where YaRN's law lies against the fitted multiplier's interval over documents (None: no law to
    set against), and each held-out gain the fit measured, in REFERENCES' order, against 0 by its interval."""

    summary: FitSummary
    law_position: LawPosition | None
    judgements: dict[str, Judgement]  # reference name -> judgement


def judge_fit(summary: FitSummary) -> FitVerdict:
    """The verdict of a fit, which the words (words/fit.py) say."""
    yarn, gains = law(summary), summary.held_out.gains
    return FitVerdict(summary=summary, law_position=None if yarn is None else law_position(yarn),
                      judgements={name: judge(gains[name]) for name in REFERENCES if name in gains})


def fit_order(summaries: Sequence[FitSummary]) -> list[FitSummary]:
    """Several fits in the order their table and verdicts take: recipes first (by their label), then the model's
    own positions; each by its length."""
    def order(summary: FitSummary) -> tuple:
        return (summary.rope is None, "" if summary.rope is None else summary.rope.label, summary.settings.max_tokens)

    return sorted(summaries, key=order)


def fitted_row(fit: FitSummary, summary: TuneSummary) -> DecompositionRow | None:
    """A fit made on exactly the tune's documents at its length, as a row of the corpus's decomposition: the fitted
    temperature on top of the fit's recipe, held out over those documents (its gain against the recipe at T = 1).
    None for a fit on other documents, at another length or without a recipe."""
    own = fit.held_out.gains.get("recipe_at_1")
    if (own is None or fit.rope is None or fit.settings.max_tokens != summary.settings.max_tokens
            or sorted(entry.sha256 for entry in fit.documents) != _documents(summary)):
        return None
    return DecompositionRow(
        kind=RowKind.FITTED, view=None, rope=fit.rope, against=View(1.0, fit.rope),
        scoring=Scoring.HELD_OUT_DOCUMENTS, saved=own.saved, interval=own.interval, untrained_mass_past=None,
        effective_untrained_mass_past=None, untrained_mass_by_layer_type=None, untrained=None, own_temperature=False,
        family=family_of(fit.rope), remaps=fit.rope.remaps,
        fitted=FittedValue(family=fit.family, knob=fit.knob, value=fit.parameter, interval=fit.interval))


def fold_fits(summary: TuneSummary, fits: Sequence[FitSummary]) -> TuneSummary:
    """The tune summary with the fits made on its documents at its length as rows of its verdict's decomposition
    (fitted_row), one per recipe: a fit replaces the row of an earlier fit on the same recipe, the others stay. A
    temperature on top of a recipe never leads, so the dominant lever stays as computed."""
    verdict = summary.verdict
    added = [row for row in (fitted_row(fit, summary) for fit in fits) if row is not None]
    if verdict is None or not added:
        return summary
    ropes = {row.rope for row in added}
    decomposition = verdict.decomposition
    kept = tuple(row for row in decomposition.rows if not (row.kind is RowKind.FITTED and row.rope in ropes))
    return replace(summary, verdict=replace(verdict, decomposition=replace(decomposition, rows=(*kept, *added))))


def carry_fits(previous: TuneSummary | None, summary: TuneSummary) -> TuneSummary:
    """A tune's new summary with the fitted rows the summary it replaces had folded in, where both cover the same
    documents at the same length (a rerun that only adds documents leaves the fits behind: they were made on the
    others)."""
    if previous is None or previous.verdict is None or summary.verdict is None:
        return summary
    same = (_documents(previous) == _documents(summary)
            and previous.settings.max_tokens == summary.settings.max_tokens)
    fitted = tuple(row for row in previous.verdict.decomposition.rows if row.kind is RowKind.FITTED)
    if not same or not fitted:
        return summary
    decomposition = summary.verdict.decomposition
    return replace(summary, verdict=replace(summary.verdict, decomposition=replace(
        decomposition, rows=(*(row for row in decomposition.rows if row.kind is not RowKind.FITTED), *fitted))))


def _documents(summary: TuneSummary) -> list[str]:
    return sorted(entry.sha256 for entry in summary.corpus.listed)
