"""The decomposition verdict picks its sentence from the numbers: synthetic verdict rows where a recipe does the
recovery, where the temperature does, where neither does, and where the loss does not rise, each get their own
sentence, and every share is the saving over the rise."""

import pytest

from model_utils.verdicts.decomposition import Decomposition, decompose


def rows(*, temperature: float, recipe: float, on_top: float, width: float = 0.02) -> list[dict]:
    def row(kind, label, saved, against="T=1", recipe=None):
        return {"kind": kind, "label": label, "what": label, "saved": saved, "against": against, "recipe": recipe,
                "interval": [saved - width, saved + width]}

    return [{"kind": "reference", "label": "T=1", "saved": 0.0, "interval": None, "against": "T=1"},
            row("oracle", "best T per bucket (oracle, in-sample)", temperature + 0.01),
            row("held_out", "best T per bucket (cross-fit on one text)", temperature),
            row("recipe", "yarn-rope (s=2) + T=1", recipe, recipe="yarn-rope (s=2)"),
            row("held_out", "yarn-rope (s=2) + best T per bucket (cross-fit on one text)", recipe + on_top,
                recipe="yarn-rope (s=2)"),
            row("on_top", "best T on yarn-rope (s=2)", on_top, against="yarn-rope (s=2) + T=1",
                recipe="yarn-rope (s=2)")]


SCHEDULES = [{"label": "ssmax (train_length=8192)", "saved": 0.1, "interval": [0.08, 0.12],
              "m_trained_context": [0.077, 1.0], "m_past": [1.0, 1.077]}]


def verdict(rise: float, schedules=SCHEDULES, **savings) -> Decomposition:
    return decompose(rise=rise, scope="one model, one text", rows=rows(**savings), schedules=schedules)


def test_a_recipe_that_recovers_the_rise_is_the_dominant_lever():
    found = verdict(2.0, temperature=0.17, recipe=2.08, on_top=0.03)
    assert found.dominant == "recipe"
    assert "The interpolation does the recovery" in found.sentence()
    assert "+2.08 nats per token (104% of the rise)" in found.sentence()
    assert "+0.17 nats per token (8% of the rise)" in found.sentence()
    assert "+0.030" in found.sentence()


def test_a_temperature_that_recovers_more_than_any_recipe_is_the_dominant_lever():
    found = verdict(1.0, temperature=0.8, recipe=0.3, on_top=0.1)
    assert found.dominant == "temperature"
    assert "The temperature does the recovery" in found.sentence()


def test_when_no_lever_recovers_half_of_the_rise_neither_is_named():
    found = verdict(2.0, temperature=0.2, recipe=0.5, on_top=0.05)
    assert found.dominant == "neither"
    assert "No lever recovers half of the rise" in found.sentence()


def test_a_lever_whose_interval_holds_zero_does_not_dominate():
    found = verdict(0.1, temperature=0.01, recipe=0.09, on_top=0.0, width=0.1, schedules=[])
    assert found.dominant == "neither"


def test_without_a_rise_there_is_nothing_to_recover_and_no_share():
    found = verdict(-0.05, temperature=0.01, recipe=0.02, on_top=0.0)
    assert found.dominant == "no_rise"
    assert "does not rise" in found.sentence()
    assert all(lever.share_of_rise is None for lever in found.levers)


def test_levers_leave_out_the_in_sample_oracle_and_put_each_saving_on_the_rise():
    found = verdict(2.0, temperature=0.17, recipe=2.07, on_top=0.03)
    kinds = [lever.kind for lever in found.levers]
    assert kinds == ["temperature", "recipe", "on_top", "schedule"]  # the recipe's own held-out T is in on_top
    for lever in found.levers:
        assert lever.share_of_rise == pytest.approx(lever.saved / 2.0)
    assert "softens before the trained length" in found.levers[-1].what
    assert Decomposition.from_dict(found.to_dict()) == found
