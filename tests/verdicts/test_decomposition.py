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
    # each figure with its 95% interval first, then its share of the rise
    assert "+2.08 nats per token (95% interval +2.06 to +2.10; 104% of the rise)" in found.sentence()
    assert "+0.17 nats per token (95% interval +0.15 to +0.19; 8% of the rise)" in found.sentence()
    assert "saves +0.030 more (95% interval +0.010 to +0.050; 2% of the rise)" in found.sentence()


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


def test_without_a_rise_there_is_no_share_and_no_lever_is_said_to_lower_the_loss_unless_it_does():
    found = verdict(-0.05, temperature=0.01, recipe=0.02, on_top=0.0, schedules=[])
    assert found.dominant == "no_rise"
    assert "does not rise" in found.sentence()
    assert "no lever lowers it there: yarn-rope (s=2) + T=1 saves +0.020 nats per token" in found.sentence()
    assert all(lever.share_of_rise is None for lever in found.levers)


def test_without_a_rise_a_recipe_that_still_lowers_the_loss_is_named_with_its_interval():
    # Gemma 3 270M's case: the loss past the trained length is lower than inside it, yet the interpolation lowers
    # it further on the same positions; the sentence must not say there is nothing to win.
    found = verdict(-0.23, temperature=0.0, recipe=0.344, on_top=-0.002, schedules=[])
    said = found.sentence()
    assert "yarn-rope (s=2) + T=1 saves +0.344 nats per token (95% interval +0.324 to +0.364)" in said
    assert "best T per bucket (cross-fit on one text) saves +0.000" in said
    assert "a recipe, not the temperature, lowers the loss" in said
    assert "nothing" not in said


def test_levers_leave_out_the_in_sample_oracle_and_put_each_saving_on_the_rise():
    found = verdict(2.0, temperature=0.17, recipe=2.07, on_top=0.03)
    kinds = [lever.kind for lever in found.levers]
    assert kinds == ["temperature", "recipe", "on_top", "schedule"]  # the recipe's own held-out T is in on_top
    for lever in found.levers:
        assert lever.share_of_rise == pytest.approx(lever.saved / 2.0)
    assert "softens before the trained length" in found.levers[-1].what
    assert Decomposition.from_dict(found.to_dict()) == found


# --- recipe families: frequency changes, distance remappings, a sink + window ------------------------------------

SELF_EXTEND, SINKS = "self-extend (G=2, W=1024) + T=1", "sink-window (S=4, W=8192) + T=1"


def family_rows(*, frequency: float, remap: float, sinks: float, temperature: float,
                on_remap: float = 0.05) -> list[dict]:
    """The verdict rows of a sweep that ran one recipe of each family at T = 1 and temperatures on the remapping."""
    def row(kind, label, saved, family, against="T=1"):
        return {"kind": kind, "label": label, "what": label, "saved": saved, "against": against,
                "interval": [saved - 0.02, saved + 0.02], "family": family}

    return [*rows(temperature=temperature, recipe=frequency, on_top=0.03)[:4],
            row("recipe", SELF_EXTEND, remap, "remap"),
            row("on_top", "self-extend + best T", on_remap, "remap", against=SELF_EXTEND),
            row("recipe", SINKS, sinks, "sink_window"),
            rows(temperature=temperature, recipe=frequency, on_top=0.03)[-1]]


def family_verdict(rise: float = 2.0, **savings) -> Decomposition:
    return decompose(rise=rise, scope="one model, one text", rows=family_rows(**savings), schedules=SCHEDULES)


def test_a_remapping_that_recovers_the_most_is_named_with_its_family_and_share():
    found = family_verdict(frequency=1.0, remap=1.8, sinks=0.4, temperature=0.2)
    said = found.sentence()
    assert found.dominant == "recipe" and found.lever("recipe").label == SELF_EXTEND
    assert said.endswith(f"A distance remapping recovers the most of the recipe families ({SELF_EXTEND}, 90% of the "
                         "rise), and a recipe, not the temperature, does the recovery.")
    # each family's lever, the one that saves the most first, then the temperature alone and what is on top
    assert said.index("distance remapping: self-extend") < said.index("frequency change (interpolation): yarn-rope") \
        < said.index("sink + window: sink-window") < said.index("temperature alone: best T per bucket")
    assert "+1.02; 50% of the rise)" in said and "+0.42; 20% of the rise)" in said  # 1.0 and 0.4 of 2.0
    assert "a temperature on top of a recipe: " in said and "self-extend + best T saves +0.050 more" in said
    assert "The interpolation does the recovery" not in said


def test_a_remapping_that_loses_to_the_interpolation_is_said_to_lose():
    found = family_verdict(frequency=2.08, remap=0.6, sinks=-0.3, temperature=0.17)
    said = found.sentence()
    assert found.lever("recipe").label == "yarn-rope (s=2) + T=1"
    assert said.endswith("A change of the rotary frequencies (interpolation) recovers the most of the recipe families "
                         "(yarn-rope (s=2) + T=1, 104% of the rise), and a recipe, not the temperature, does the "
                         "recovery.")
    assert ("sink + window: sink-window (S=4, W=8192) + T=1 saves -0.30 nats per token (95% interval -0.32 to -0.28; "
            "-15% of the rise)") in said


def test_with_families_the_temperature_or_nothing_can_still_win():
    temperature = family_verdict(rise=1.0, frequency=0.3, remap=0.4, sinks=0.1, temperature=0.8)
    assert temperature.dominant == "temperature"
    assert temperature.sentence().endswith("The temperature does the recovery: no recipe here recovers as much; a "
                                           f"distance remapping recovers the most of the recipe families "
                                           f"({SELF_EXTEND}, 40% of the rise).")
    neither = family_verdict(frequency=0.3, remap=0.2, sinks=0.6, temperature=0.1)
    assert neither.dominant == "neither"
    assert neither.sentence().endswith("No lever recovers half of the rise: most of it remains; the sink + window "
                                       f"recovers the most of the recipe families ({SINKS}, 30% of the rise).")


def test_levers_are_grouped_by_family_and_read_back():
    found = family_verdict(frequency=1.0, remap=1.8, sinks=0.4, temperature=0.2)
    assert [(lever.kind, lever.family) for lever in found.levers] == [
        ("temperature", None), ("recipe", "frequency"), ("on_top", "frequency"), ("recipe", "remap"),
        ("on_top", "remap"), ("recipe", "sink_window"), ("schedule", None)]
    assert found.families() == ["frequency", "remap", "sink_window"]
    assert Decomposition.from_dict(found.to_dict()) == found
    older = found.to_dict()
    for lever in older["levers"]:
        del lever["family"]  # written before the families: every recipe then changed the frequencies
    assert {lever.family for lever in Decomposition.from_dict(older).levers if lever.kind == "recipe"} == {"frequency"}


def test_without_a_remapping_the_sentence_is_the_interpolations():
    found = verdict(2.0, temperature=0.17, recipe=2.08, on_top=0.03)
    assert found.families() == ["frequency"]
    assert "recipe families" not in found.sentence() and "on top of the interpolation" in found.sentence()


def with_gap(found: Decomposition, saved: float, interval: list[float]) -> Decomposition:
    """`found` with the row past.family_gap_rows adds: the leading family's recipe against the next, paired."""
    gap = {"kind": "family_gap", "label": f"{SELF_EXTEND} vs {SINKS}", "what": "", "saved": saved,
           "interval": interval, "against": SINKS, "family": "remap"}
    return Decomposition.from_dict(found.to_dict() | {"rows": [*found.rows, gap]})


def test_a_lead_whose_paired_interval_clears_zero_is_named_with_it():
    found = with_gap(family_verdict(frequency=1.0, remap=1.8, sinks=1.7, temperature=0.2), 0.1, [0.05, 0.15])
    assert found.sentence().endswith(
        f"A distance remapping recovers the most of the recipe families ({SELF_EXTEND}, 90% of the rise; +0.100 nats "
        f"per token more than {SINKS}, 95% interval +0.050 to +0.150), and a recipe, not the temperature, does the "
        "recovery.")
    assert [lever.kind for lever in found.levers] == [lever.kind for lever in family_verdict(
        frequency=1.0, remap=1.8, sinks=1.7, temperature=0.2).levers]  # the gap is a comparison, not a lever


def test_a_lead_within_the_noise_is_not_called_a_lead():
    found = with_gap(family_verdict(frequency=1.0, remap=1.8, sinks=1.79, temperature=0.2), 0.01, [-0.02, 0.04])
    said = found.sentence()
    assert "recovers the most" not in said
    assert said.endswith(f"The recipe families recover about the same ({SELF_EXTEND} saves +0.010 nats per token "
                         f"more than {SINKS}, 95% interval -0.020 to +0.040, which does not clear 0), and a recipe, "
                         "not the temperature, does the recovery.")


def test_a_share_that_rounds_to_zero_keeps_a_decimal_and_its_sign():
    found = family_verdict(frequency=2.08, remap=0.6, sinks=-0.008, temperature=0.17)
    said = found.sentence()
    # a saving under 0.1 keeps three decimals, its interval too
    assert "saves -0.008 nats per token (95% interval -0.028 to +0.012; -0.4% of the rise)" in said
    assert "(-0% of the rise)" not in said
