"""The decomposition picks its dominant lever from the numbers: synthetic rows where a recipe does the recovery,
where the temperature does, where neither does, and where the loss does not rise; every share is the saving over
the rise; the recipe families are compared by the lever that stands for each. The answer's words are pinned by
tests/golden/answer.txt."""

import pytest

from model_utils.core.records.verdict import (
    Decomposition,
    DecompositionRow,
    Dominant,
    Family,
    LeverKind,
    Multipliers,
    RowKind,
    Scoring,
)
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View
from model_utils.verdicts.decomposition import best_and_worst, by_saving, decompose, top

YARN_ROPE, YARN = Rope("yarn-rope", 2.0), Rope("yarn", 2.0)
SELF_EXTEND, SINKS = Rope("self-extend", group=2, window=1024), Rope("sink-window", sinks=4, window=8192)
T1 = View(1.0)  # the model as trained, what a row is scored against unless said


def row(kind: RowKind, saved: float | None, *, width: float = 0.02, rope: Rope | None = None, view: View | None = None,
        against: View = T1, family: Family | None = None, **more) -> DecompositionRow:
    return DecompositionRow(kind=kind, view=view, rope=rope, against=against,
                            scoring=more.pop("scoring", None if view else Scoring.CROSS_FIT_ONE_TEXT), saved=saved,
                            interval=None if saved is None else (saved - width, saved + width),
                            untrained_mass_past=None, effective_untrained_mass_past=None,
                            untrained_mass_by_layer_type=None, untrained=None,
                            own_temperature=more.pop("own_temperature", False),
                            family=family or (None if rope is None else Family.FREQUENCY), remaps=False, **more)


SCHEDULE = row(RowKind.SCHEDULE, 0.1, view=View(Schedule("ssmax", 8192.0)),
               multipliers=Multipliers(trained_context=(0.077, 1.0), past=(1.0, 1.077)))


def rows(*, temperature: float, recipe: float, on_top: float, width: float = 0.02) -> list[DecompositionRow]:
    return [row(RowKind.REFERENCE, 0.0, view=View(1.0)),
            row(RowKind.ORACLE, temperature + 0.01, width=width, scoring=Scoring.IN_SAMPLE),
            row(RowKind.HELD_OUT, temperature, width=width),
            row(RowKind.RECIPE, recipe, width=width, rope=YARN_ROPE, view=View(1.0, YARN_ROPE)),
            row(RowKind.HELD_OUT, recipe + on_top, width=width, rope=YARN_ROPE),
            row(RowKind.ON_TOP, on_top, width=width, rope=YARN_ROPE, against=View(1.0, YARN_ROPE))]


def verdict(rise: float, schedules=(SCHEDULE,), **savings) -> Decomposition:
    return decompose(rise=rise, rows=[*rows(**savings), *schedules])


def test_a_recipe_that_recovers_the_rise_is_the_dominant_lever():
    found = verdict(2.0, temperature=0.17, recipe=2.08, on_top=0.03)
    assert found.dominant is Dominant.RECIPE
    assert found.lever(Dominant.RECIPE).view == View(1.0, YARN_ROPE)
    assert found.share_of_rise(found.lever(Dominant.RECIPE)) == pytest.approx(1.04)
    assert [found.share_of_rise(lever) for lever in found.on_top()] == [pytest.approx(0.015)]


def test_a_temperature_that_recovers_more_than_any_recipe_is_the_dominant_lever():
    found = verdict(1.0, temperature=0.8, recipe=0.3, on_top=0.1)
    assert found.dominant is Dominant.TEMPERATURE
    assert found.lever(Dominant.TEMPERATURE).kind is RowKind.HELD_OUT and found.lever(Dominant.TEMPERATURE).rope is None


def test_when_no_lever_recovers_half_of_the_rise_neither_is_named():
    found = verdict(2.0, temperature=0.2, recipe=0.5, on_top=0.05)
    assert found.dominant is Dominant.NEITHER and found.lever(Dominant.NEITHER) is None


def test_a_lever_whose_interval_holds_zero_does_not_dominate():
    found = verdict(0.1, temperature=0.01, recipe=0.09, on_top=0.0, width=0.1, schedules=())
    assert found.dominant is Dominant.NEITHER


def test_a_temperature_on_top_never_leads():
    found = verdict(1.0, temperature=0.1, recipe=0.3, on_top=0.9)
    assert found.dominant is Dominant.NEITHER  # 0.9 on top of a recipe needs the recipe


def test_without_a_rise_there_is_no_share_and_the_lever_that_saves_the_most_is_kept():
    found = verdict(-0.05, temperature=0.01, recipe=0.02, on_top=0.0, schedules=())
    assert found.dominant is Dominant.NO_RISE
    assert all(found.share_of_rise(lever) is None for lever in found.levers)
    assert found.lever(Dominant.RECIPE).saved == 0.02 and not found.lever(Dominant.RECIPE).clears_zero
    lowers = verdict(-0.23, temperature=0.0, recipe=0.344, on_top=-0.002, schedules=())
    assert lowers.lever(Dominant.RECIPE).clears_zero  # Gemma 3 270M's case: the interpolation still lowers it


def test_levers_leave_out_the_in_sample_oracle_and_the_choices_on_a_recipe_and_put_each_saving_on_the_rise():
    found = verdict(2.0, temperature=0.17, recipe=2.07, on_top=0.03)
    assert [lever.lever for lever in found.levers] == [LeverKind.TEMPERATURE, LeverKind.RECIPE, LeverKind.ON_TOP,
                                                      LeverKind.SCHEDULE]
    for lever in found.levers:
        assert found.share_of_rise(lever) == pytest.approx(lever.saved / 2.0)
    assert Decomposition.from_dict(found.to_dict()) == found
    assert [row.kind for row in found.table] == [RowKind.REFERENCE, RowKind.ORACLE, RowKind.HELD_OUT,
                                                 RowKind.RECIPE, RowKind.HELD_OUT, RowKind.ON_TOP]  # no schedule


def test_a_recipe_with_its_own_temperature_does_not_stand_for_its_family_when_its_interpolation_ran():
    own = row(RowKind.RECIPE, 2.2, rope=YARN, view=View(1.0, YARN), own_temperature=True)
    found = decompose(rise=2.0, rows=[*rows(temperature=0.1, recipe=2.1, on_top=0.0), own])
    assert found.family_lever(Family.FREQUENCY).view == View(1.0, YARN_ROPE)
    alone = decompose(rise=2.0, rows=[row(RowKind.REFERENCE, 0.0, view=View(1.0)), own])
    assert alone.family_lever(Family.FREQUENCY).view == View(1.0, YARN)


# --- recipe families: frequency changes, distance remappings, a sink + window ------------------------------------


def family_rows(*, frequency: float, remap: float, sinks: float, temperature: float,
                on_remap: float = 0.05) -> list[DecompositionRow]:
    """The rows of a sweep that ran one recipe of each family at T = 1 and temperatures on the remapping."""
    return [*rows(temperature=temperature, recipe=frequency, on_top=0.03)[:4],
            row(RowKind.RECIPE, remap, rope=SELF_EXTEND, view=View(1.0, SELF_EXTEND), family=Family.REMAP),
            row(RowKind.ON_TOP, on_remap, rope=SELF_EXTEND, against=View(1.0, SELF_EXTEND),
                family=Family.REMAP),
            row(RowKind.RECIPE, sinks, rope=SINKS, view=View(1.0, SINKS), family=Family.SINK_WINDOW),
            rows(temperature=temperature, recipe=frequency, on_top=0.03)[-1], SCHEDULE]


def family_verdict(rise: float = 2.0, **savings) -> Decomposition:
    return decompose(rise=rise, rows=family_rows(**savings))


def test_a_remapping_that_recovers_the_most_leads_the_families():
    found = family_verdict(frequency=1.0, remap=1.8, sinks=0.4, temperature=0.2)
    assert found.dominant is Dominant.RECIPE and found.lever(Dominant.RECIPE).family is Family.REMAP
    assert found.families() == [Family.FREQUENCY, Family.REMAP, Family.SINK_WINDOW]
    assert [found.share_of_rise(found.family_lever(family)) for family in found.families()] == pytest.approx(
        [0.5, 0.9, 0.2])


def test_a_remapping_that_loses_to_the_interpolation_leaves_the_lead_to_it():
    found = family_verdict(frequency=2.08, remap=0.6, sinks=-0.3, temperature=0.17)
    assert found.lever(Dominant.RECIPE).view == View(1.0, YARN_ROPE)
    assert found.family_lever(Family.SINK_WINDOW).saved == -0.3  # a saving below nothing stays a lever


def test_with_families_the_temperature_or_nothing_can_still_win():
    assert family_verdict(rise=1.0, frequency=0.3, remap=0.4, sinks=0.1, temperature=0.8).dominant \
        is Dominant.TEMPERATURE
    assert family_verdict(frequency=0.3, remap=0.2, sinks=0.6, temperature=0.1).dominant is Dominant.NEITHER


def test_levers_are_grouped_by_family_and_read_back():
    found = family_verdict(frequency=1.0, remap=1.8, sinks=0.4, temperature=0.2)
    assert [(lever.lever, lever.family) for lever in found.levers] == [
        (LeverKind.TEMPERATURE, None), (LeverKind.RECIPE, Family.FREQUENCY), (LeverKind.ON_TOP, Family.FREQUENCY),
        (LeverKind.RECIPE, Family.REMAP), (LeverKind.ON_TOP, Family.REMAP), (LeverKind.RECIPE, Family.SINK_WINDOW),
        (LeverKind.SCHEDULE, None)]
    assert Decomposition.from_dict(found.to_dict()) == found


def test_the_family_gap_is_a_comparison_not_a_lever():
    gap = row(RowKind.FAMILY_GAP, 0.1, rope=SELF_EXTEND, view=View(1.0, SELF_EXTEND),
              against=View(1.0, SINKS), family=Family.REMAP)
    plain = family_verdict(frequency=1.0, remap=1.8, sinks=1.7, temperature=0.2)
    found = decompose(rise=2.0, rows=[*plain.rows, gap])
    assert found.family_gap() == gap and plain.family_gap() is None
    assert found.levers == plain.levers and gap in found.table


def test_the_picks_the_words_name_are_by_saving_the_first_on_a_tie():
    low, high, tied = row(RowKind.RECIPE, 0.1, rope=YARN_ROPE), row(RowKind.HELD_OUT, 0.5), row(RowKind.SCHEDULE, 0.5,
                                                                                               view="logn (base=512)")
    assert top(None, low, high, tied) is high and top(None) is None
    assert by_saving([low, high, tied]) == [high, tied, low]
    assert best_and_worst([low, high, tied]) == (high, low)
