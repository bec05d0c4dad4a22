"""The fit record on the committed fit.json: read and written back unchanged, and a file with a missing key or of
another format refused with a RecordError that names the fix."""

import copy
import json
from pathlib import Path

import pytest

from model_utils.core.records import RecordError
from model_utils.core.records.fit import FORMAT, FitSummary
from model_utils.core.rope import Rope

COMMITTED = sorted((Path(__file__).resolve().parents[3] / "assets" / "fit").glob("*/fit.json"))


@pytest.fixture(scope="module")
def committed() -> dict:
    assert COMMITTED, "no committed fit under assets/fit"
    return json.loads(COMMITTED[0].read_text())


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.parent.name)
def test_every_committed_fit_round_trips(path):
    written = json.loads(path.read_text())
    fit = FitSummary.from_dict(written)
    assert FitSummary.from_dict(fit.to_dict()) == fit
    assert fit.to_dict() == written


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
    with pytest.raises(RecordError, match=rf"this fit has format {found!r}; this version reads format {FORMAT}: "
                                          "regenerate it"):
        FitSummary.from_dict(other)


def test_a_fit_that_is_not_an_object_is_refused():
    with pytest.raises(RecordError, match="a fit must be a JSON object, got list"):
        FitSummary.from_dict([])


def test_a_fit_written_before_compare_from_reads_as_computed(committed):
    older = {key: value for key, value in committed.items() if key != "compared_from"}
    assert FitSummary.from_dict(older).compared_from is None
    assert FitSummary.from_dict(older).to_dict() == {**older, "compared_from": None}


def test_a_fit_written_before_its_compared_temperatures_reads_them_from_its_command(committed):
    """The s = 1.5 fit compared one constant temperature, T = 1: its "best constant T" is T = 1 itself, and the
    words must say so (verdicts/words/fit.py _against)."""
    older = {key: value for key, value in committed.items() if key != "compared_temperatures"}
    assert "--compare-temperatures 1 " in older["run"]["command"]
    assert FitSummary.from_dict(older).compared_temperatures == (1.0,)
    assert FitSummary.from_dict({**older, "run": None}).compared_temperatures is None
