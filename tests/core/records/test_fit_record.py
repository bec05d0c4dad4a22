"""The fit record on the committed fit.json (format 3: methods as sentences, views as labels): read through the
upgrade, each label read as the view it was written from and each sentence said again by the words from the facts,
then written in this format and read back unchanged; an unknown sentence or label, a file with a missing key or of
another format refused with a RecordError that names the fix."""

import copy
import json
import re
from pathlib import Path

import pytest

from model_utils.core.records import RecordError
from model_utils.core.records.fit import FORMAT, FitSummary
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.verdicts.words import fit_methods, fit_reused

CHANGED = {"format", "family_description", "interval_method", "bootstrap", "optimizer", "folds", "held_out",
           "compared_from"}

COMMITTED = sorted((Path(__file__).resolve().parents[3] / "assets" / "fit").glob("*/fit.json"))


@pytest.fixture(scope="module")
def committed() -> dict:
    assert COMMITTED, "no committed fit under assets/fit"
    return json.loads(COMMITTED[0].read_text())


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.parent.name)
def test_every_committed_fit_reads_its_views_and_methods_and_round_trips(path):
    old = json.loads(path.read_text())
    fit = FitSummary.from_dict(old)
    assert [fold.view.label for fold in fit.folds] == [fold["label"] for fold in old["folds"]]
    assert [fold.view.temperature for fold in fit.folds] == [fold["parameter"] for fold in old["folds"]]
    assert all(fold.view.rope == fit.rope for fold in fit.folds)
    labels = [(c["best_schedule"], c["best_constant"]) for c in old["held_out"]["choices"]]
    assert [(None if c.best_schedule is None else c.best_schedule.label, c.best_constant.label)
            for c in fit.held_out.choices] == labels
    assert fit_methods(fit) == {"family": old["family_description"], "optimizer": old["optimizer"],
                                "interval": old["interval_method"], "held_out": old["held_out"]["method"]}
    assert (None if fit.compared_from is None else fit_reused(fit.compared_from)) == old["compared_from"]
    written = json.loads(json.dumps(fit.to_dict()))
    assert FitSummary.from_dict(written) == fit and written["format"] == FORMAT == 4
    assert {key: value for key, value in written.items() if key not in CHANGED} == {
        key: value for key, value in old.items() if key not in CHANGED}
    assert View.from_dict(written["folds"][0]["view"]) == fit.folds[0].view


@pytest.mark.parametrize("where", [(), ("held_out",)])
def test_a_method_sentence_this_version_does_not_know_is_refused(committed, where):
    damaged = copy.deepcopy(committed)
    holder = damaged
    for step in where:
        holder = holder[step]
    key = "method" if where else "interval_method"
    holder[key] = holder[key].replace("1000 resamples", "2000 resamples")
    with pytest.raises(RecordError, match=r"2000 resamples.*a method this version does not know: regenerate it"):
        FitSummary.from_dict(damaged)


def test_what_a_format_3_fit_read_from_a_tune_is_read_from_its_whole_sentence_or_refused(committed):
    said = ("assets/tune/x (8): 7 of the 9 comparisons read from the tune's rows, checked against this fit's own "
            "T = 1 pass (largest difference 2.5e-07 nats per token past the trained length)")
    read = FitSummary.from_dict(committed | {"compared_from": said}).compared_from
    assert (read.source, read.reused, read.comparisons, read.largest) == ("assets/tune/x (8)", 7, 9, 2.5e-07)
    with pytest.raises(RecordError, match="a method this version does not know"):
        FitSummary.from_dict(committed | {"compared_from": said.replace("tune's rows", "tune's summary")})


@pytest.mark.parametrize(("path", "key", "label"), [(("folds", 0), "label", "yarn-rope (s=1.5) + T=0.95"),
                                                    (("held_out", "choices", 1), "best_constant", "T=1.1")])
def test_a_label_that_is_not_a_view_of_the_fit_is_refused(committed, path, key, label):
    damaged = copy.deepcopy(committed)
    holder = damaged
    for step in path:
        holder = holder[step]
    holder[key] = label
    with pytest.raises(RecordError, match=rf"the view '{re.escape(label)}', which this version cannot match"):
        FitSummary.from_dict(damaged)


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.parent.name)
def test_the_recipe_is_a_rope_and_the_gains_are_by_reference(path):
    fit = FitSummary.from_dict(json.loads(path.read_text()))
    assert fit.rope == Rope("yarn-rope", fit.rope.factor) and path.parent.name.endswith(f"-{fit.rope.factor:g}")
    order = ["plain", "recipe", "recipe_at_1", "best_schedule", "best_constant"]
    assert list(fit.held_out.gains) == [name for name in order if name in fit.held_out.gains]
    assert {"plain", "recipe", "recipe_at_1", "best_constant"} <= set(fit.held_out.gains)
    assert fit.multiplier.scale == fit.rope.factor and fit.multiplier.fitted == pytest.approx(1 / fit.parameter)
    assert fit.evaluations == sum(len(fold.evaluations) for fold in fit.folds) >= 2 * len(fit.folds)


@pytest.mark.parametrize(("path", "key"), [((), "held_out"), (("held_out",), "gains"),
                                           (("held_out", "gains", "plain"), "interval"), (("folds", 1), "label"),
                                           (("folds", 0, "evaluations", 2), "nll_past"), (("run",), "machine")])
def test_a_missing_key_is_named(committed, path, key):
    damaged = copy.deepcopy(committed)
    holder = damaged
    for step in path:
        holder = holder[step]
    del holder[key]
    with pytest.raises(RecordError, match=rf"has no '{key}': it is damaged .* regenerate it"):
        FitSummary.from_dict(damaged)


@pytest.mark.parametrize("found", [None, 1, FORMAT + 1])
def test_another_format_is_refused(committed, found):
    other = {key: value for key, value in committed.items() if key != "format"}
    if found is not None:
        other["format"] = found
    with pytest.raises(RecordError, match=rf"this fit has format {found!r}; this version reads format 3, {FORMAT}: "
                                          "regenerate it"):
        FitSummary.from_dict(other)


def test_a_fit_that_is_not_an_object_is_refused():
    with pytest.raises(RecordError, match="a fit must be a JSON object, got list"):
        FitSummary.from_dict([])


def test_a_fit_written_before_compare_from_reads_as_computed(committed):
    current = FitSummary.from_dict(committed).to_dict()
    for written in (committed, current):
        older = {key: value for key, value in written.items() if key != "compared_from"}
        assert FitSummary.from_dict(older).compared_from is None
    assert FitSummary.from_dict(older).to_dict() == {**older, "compared_from": None}


def test_a_fit_written_before_its_compared_temperatures_reads_them_from_its_command(committed):
    """The s = 1.5 fit compared one constant temperature, T = 1: its "best constant T" is T = 1 itself, and the
    words must say so (verdicts/words/fit.py _against)."""
    older = {key: value for key, value in committed.items() if key != "compared_temperatures"}
    assert "--compare-temperatures 1 " in older["run"]["command"]
    assert FitSummary.from_dict(older).compared_temperatures == (1.0,)
    with pytest.raises(RecordError, match="the view 'T=1', which this version cannot match"):
        FitSummary.from_dict({**older, "run": None})  # nothing says which constant temperatures it chose among
