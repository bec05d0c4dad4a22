"""The fit verdict on small synthetic fit.json contents where the right sentence is known."""

import pytest

from model_utils.core.rope import Rope
from model_utils.verdicts import NO_VALUE
from model_utils.verdicts.fit import COLUMNS, FitVerdict, fit_verdicts
from tests.verdicts.synthetic import fit_summary as summary


def test_yarn_law_inside_the_interval_is_said_to_lie_within_it():
    said = " ".join(FitVerdict(summary(values=(0.86, 0.9), law=1.143)).sentences())
    assert "lies within the fitted multiplier's interval over documents" in said
    assert "0.880 (0.860-0.900 over documents)" in said


@pytest.mark.parametrize("values, word", [((0.95, 0.97), "the law sharpens more than the fit"),
                                          ((0.7, 0.75), "the fit sharpens more than the law")])
def test_yarn_law_outside_the_interval_names_which_sharpens_more(values, word):
    assert word in " ".join(FitVerdict(summary(values=values)).sentences())


def test_each_gain_is_judged_by_its_interval():
    said = FitVerdict(summary(gains={"plain": (0.5, 0.2, 0.8), "recipe": (-0.01, -0.03, 0.02),
                                     "recipe_at_1": (-0.2, -0.3, -0.1)})).sentences()
    by_reference = {name: next(s for s in said if against in s) for name, against in [
        ("plain", "the model as trained"), ("recipe", "as published"), ("recipe_at_1", "the temperature's own")]}
    assert "the fit beats" in by_reference["plain"] and "+0.500" in by_reference["plain"]
    assert "do not differ measurably" in by_reference["recipe"]
    assert "the fit loses to" in by_reference["recipe_at_1"]


def test_a_fit_at_a_bound_says_the_minimum_may_lie_beyond():
    assert any("may lie beyond" in s for s in FitVerdict(summary(at_bound=True)).sentences())
    assert not any("may lie beyond" in s for s in FitVerdict(summary()).sentences())
    assert FitVerdict(summary(at_bound=True)).row()["fitted"].endswith("at a bound")


def test_a_fit_on_the_models_own_positions_has_no_law_and_rows_fill_every_column():
    own = FitVerdict(summary(rope=None, gains={"plain": (0.1, 0.05, 0.15)}))
    assert not any("YaRN's law" in s for s in own.sentences())
    row = own.row()
    assert set(row) == set(COLUMNS) and row["YaRN's law"] == NO_VALUE and row["vs recipe as published"] == NO_VALUE
    assert row["saved vs T = 1"] == "+0.100 (+0.050 to +0.150)"


def test_recipes_come_first_then_by_length():
    ordered = fit_verdicts([summary(rope=None), summary(tokens=16384), summary(rope=Rope("yarn-rope", 1.5),
                                                                               tokens=12288)])
    assert [v.summary.rope for v in ordered] == [Rope("yarn-rope", 1.5), Rope("yarn-rope", 2.0), None]


def test_a_fit_on_the_corpus_documents_is_a_lever_on_top_of_its_recipe():
    import json
    from dataclasses import replace

    from bench.readme import TUNE, read_fits
    from model_utils.core.records.tune import TuneSummary
    from model_utils.verdicts.corpus import corpus_verdict
    from model_utils.verdicts.fit import with_fits

    tuned = TuneSummary.from_dict(json.loads(TUNE.read_text()))
    (fit,) = [fit for fit in read_fits() if fit.settings.max_tokens == tuned.settings.max_tokens]
    verdict = corpus_verdict(tuned)
    both = with_fits(verdict, tuned, [fit])
    (added,) = [lever for lever in both.decomposition.levers if lever not in verdict.decomposition.levers]
    own = fit.held_out.gains["recipe_at_1"]
    assert (added.kind, added.saved, added.interval) == ("on_top", own.saved, list(own.interval))
    assert added.share_of_rise == pytest.approx(own.saved / verdict.decomposition.rise)
    assert added.against == f"{fit.rope.label} + T=1" and added.family == "frequency"
    assert f"fitted T = {fit.parameter:.3f}" in both.answer() and f"saves {own.saved:+.3f} more" in both.answer()
    assert both.decomposition.dominant == verdict.decomposition.dominant  # a lever on top never leads
    fewer = replace(fit, documents=fit.documents[1:])
    longer = replace(fit, settings=replace(fit.settings, max_tokens=2 * fit.settings.max_tokens))
    assert with_fits(verdict, tuned, [fewer, longer]) == verdict
