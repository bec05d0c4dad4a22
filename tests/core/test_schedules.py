"""The published length schedules: their values at known points, and the direction (they sharpen)."""

import math

import numpy as np
import pytest

from model_utils.core.schedules import (
    SCHEDULES,
    Schedule,
    llama4_multiplier,
    logn_multiplier,
    qwen_logn_multiplier,
    ssmax_multiplier,
    yarn_multiplier,
)


def test_yarn_squares_the_per_side_factor():
    assert yarn_multiplier(1.0) == 1.0
    assert yarn_multiplier(4.0) == pytest.approx((0.1 * math.log(4) + 1) ** 2)
    assert np.allclose(yarn_multiplier(np.array([0.5, 1.0, 16.0])), [1.0, 1.0, (0.1 * math.log(16) + 1) ** 2])


def test_qwen_logn_starts_after_the_training_length():
    positions = np.array([0, 2047, 2048, 2048**2 - 1])
    assert np.allclose(qwen_logn_multiplier(positions, 2048), [1.0, 1.0, math.log(2049, 2048), 2.0])


def test_llama4_steps_every_floor_scale_tokens():
    assert np.allclose(llama4_multiplier(np.array([0, 8190, 8191, 16383])),
                       [1.0, 1.0, 1 + 0.1 * math.log(2), 1 + 0.1 * math.log(3)])


def test_ssmax_and_logn_are_one_at_their_reference_length():
    assert ssmax_multiplier(512, 1 / math.log(512)) == pytest.approx(1.0)
    assert ssmax_multiplier(512**2, 1 / math.log(512)) == pytest.approx(2.0)
    assert logn_multiplier(512) == pytest.approx(1.0)
    assert logn_multiplier(np.array([512**2])) == pytest.approx([2.0])


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_every_schedule_sharpens_at_long_context(name):
    multipliers = Schedule(name).multipliers(20000)
    long = multipliers[8191:]  # past every default reference length
    assert np.all(long >= 1.0), "published schedules multiply logits by m >= 1 at long context"
    assert np.all(np.diff(multipliers) >= -1e-12), "and never soften as the context grows"
    assert multipliers[-1] > 1.0


def test_schedule_errors_name_the_fix():
    with pytest.raises(ValueError, match="choose one of"):
        Schedule("bogus")
    with pytest.raises(ValueError, match="train_length must be"):
        Schedule("qwen-logn", 1.0)
    with pytest.raises(ValueError, match="must be a finite number"):
        Schedule("yarn", float("nan"))


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_every_formula_is_written_with_its_knob(name):
    info = SCHEDULES[name]
    assert info.formula_for() == info.formula_for(info.default) == Schedule(name).formula
    written = info.formula_for(3333)
    assert "3333" in written and f"{info.default:g}" not in written and "{" not in written
    assert Schedule(name, 3333).formula == written


def test_formulas_at_their_defaults_are_the_published_ones():
    assert SCHEDULES["logn"].formula_for().startswith("ln n / ln 512 ")
    assert SCHEDULES["qwen-logn"].formula_for().startswith("log_512(p + 1) on the query at position p when p + 1 > 512")
    assert SCHEDULES["llama4"].formula_for().startswith("0.1 ln(floor((p + 1) / 8192) + 1) + 1")
    assert SCHEDULES["ssmax"].formula_for(1024).startswith("s ln n for n visible keys, s = 1 / ln 1024")


@pytest.mark.parametrize(("name", "words"), [
    ("yarn", ["attention factor", "RoPE interpolation", "left out", "RoPE recipe yarn:S", "yarn-rope:S"]),
    ("qwen-logn", ["dynamic NTK", "not applied"]),
    ("llama4", ["NoPE layers", "every layer"]),
    ("ssmax", ["learns s per layer and head", "fixed"]),
    ("logn", ["inference only"]),
])
def test_every_schedule_says_what_the_explorer_applies(name, words):
    applied = SCHEDULES[name].applied
    assert applied.endswith(".")
    for word in words:
        assert word in applied, (name, word)
