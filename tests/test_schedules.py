"""The published length schedules: their values at known points, and the direction (they sharpen)."""

import math

import numpy as np
import pytest

from model_utils.schedules import (
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
