"""The fit verdict on small synthetic fit.json contents where the right judgement is known, and the fits folded into
the corpus verdict of the tune they were made on (verdicts.fit.fold_fits)."""

from dataclasses import replace

import pytest

from model_utils.core.records.fit import Gain
from model_utils.core.records.verdict import Family, LeverKind, RowKind, Scoring
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.verdicts import words
from model_utils.verdicts.fit import (
    Judgement,
    LawPosition,
    carry_fits,
    fit_order,
    fold_fits,
    judge,
    judge_fit,
    law,
    law_position,
)
from tests.verdicts.synthetic import fit_summary as summary


def test_yarn_law_inside_the_interval_lies_within_it():
    fit = summary(values=(0.86, 0.9), law=1.143)
    assert law_position(law(fit)) is LawPosition.WITHIN
    assert fit.multiplier.interval == pytest.approx((1 / 0.9, 1 / 0.86))


@pytest.mark.parametrize("values, where", [((0.95, 0.97), LawPosition.ABOVE), ((0.7, 0.75), LawPosition.BELOW)])
def test_yarn_law_outside_the_interval_says_which_sharpens_more(values, where):
    assert law_position(law(summary(values=values))) is where


@pytest.mark.parametrize("interval, judged", [((0.2, 0.8), Judgement.BETTER), ((-0.03, 0.02), Judgement.NO_DIFFERENCE),
                                              ((-0.3, -0.1), Judgement.WORSE)])
def test_each_gain_is_judged_by_its_interval(interval, judged):
    assert judge(Gain(saved=sum(interval) / 2, interval=interval)) is judged


def test_a_fits_verdict_judges_each_gain_it_measured_in_order_and_places_the_law():
    fit = summary(values=(0.95, 0.97), gains={"recipe": (0.0, -0.01, 0.01), "plain": (2.0, 1.9, 2.1),
                                              "best_constant": (-0.2, -0.3, -0.1)})
    verdict = judge_fit(fit)
    assert verdict.law_position is LawPosition.ABOVE
    assert list(verdict.judgements.items()) == [("plain", Judgement.BETTER), ("recipe", Judgement.NO_DIFFERENCE),
                                                ("best_constant", Judgement.WORSE)]  # REFERENCES' order
    said = words.fit_sentences(verdict)
    assert any("the fit loses to the best constant T" in sentence for sentence in said)
    assert judge_fit(summary(rope=None, gains={"plain": (0.1, 0.05, 0.15)})).law_position is None


def test_a_fit_on_the_models_own_positions_has_no_law_and_rows_fill_every_column():
    own = summary(rope=None, gains={"plain": (0.1, 0.05, 0.15)})
    assert law(own) is None
    row = words.fit_row(own)
    assert set(row) == set(words.FIT_COLUMNS) and row["YaRN's law"] == row["vs recipe as published"] == words.NO_VALUE
    assert row["saved vs T = 1"] == "+0.100 (+0.050 to +0.150)"  # the gain's numbers, as the table gives them


def test_recipes_come_first_then_by_length():
    ordered = fit_order([summary(rope=None), summary(tokens=16384), summary(rope=Rope("yarn-rope", 1.5),
                                                                            tokens=12288)])
    assert [fit.rope for fit in ordered] == [Rope("yarn-rope", 1.5), Rope("yarn-rope", 2.0), None]


def test_a_fit_on_the_corpus_documents_is_folded_in_as_a_lever_on_top_of_its_recipe():
    from model_utils.experiments.committed import FITS, TUNES

    tuned = TUNES.read_first()
    plain = replace(tuned, verdict=replace(tuned.verdict, decomposition=replace(
        tuned.verdict.decomposition, rows=tuple(row for row in tuned.verdict.decomposition.rows
                                               if row.kind is not RowKind.FITTED))))
    (fit,) = [fit for fit in FITS.read() if fit.settings.max_tokens == tuned.settings.max_tokens]
    both = fold_fits(plain, FITS.read())
    assert both == tuned  # the committed summary carries exactly the committed fit, folded when it was written
    (added,) = [row for row in both.verdict.decomposition.rows if row.kind is RowKind.FITTED]
    own = fit.held_out.gains["recipe_at_1"]
    assert (added.lever, added.saved, added.interval) == (LeverKind.ON_TOP, own.saved, own.interval)
    assert added.scoring is Scoring.HELD_OUT_DOCUMENTS and added.family is Family.FREQUENCY
    assert added.fitted.value == fit.parameter and added.fitted.interval == fit.interval
    assert both.verdict.decomposition.share_of_rise(added) == pytest.approx(own.saved / plain.verdict.rise)
    assert added.against == View(1.0, fit.rope)
    assert both.verdict.decomposition.dominant == plain.verdict.decomposition.dominant  # a lever on top never leads
    assert fold_fits(both, [fit]) == both  # folding again replaces the fit's own row
    fewer = replace(fit, documents=fit.documents[1:])
    longer = replace(fit, settings=replace(fit.settings, max_tokens=2 * fit.settings.max_tokens))
    assert fold_fits(plain, [fewer, longer]) == plain


def test_a_rerun_of_the_tune_keeps_the_fits_made_on_the_same_documents():
    from model_utils.experiments.committed import TUNES

    tuned = TUNES.read_first()
    rows = tuned.verdict.decomposition.rows
    fresh = replace(tuned, verdict=replace(tuned.verdict, decomposition=replace(
        tuned.verdict.decomposition, rows=tuple(row for row in rows if row.kind is not RowKind.FITTED))))
    assert carry_fits(tuned, fresh) == tuned
    more = replace(fresh, corpus=replace(fresh.corpus, listed=fresh.corpus.listed[1:]))
    assert carry_fits(tuned, more) == more and carry_fits(None, fresh) == fresh
