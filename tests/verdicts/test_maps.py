"""When the mean of a layer's heads hides what T does to one query (verdicts/maps.py): its top / runner-up ratio rises
with T, or falls by less than the square root of the picked head's factor."""

import math

import pytest

from model_utils.core.report import HeadPick
from model_utils.verdicts.maps import SHOWN_POWER, hidden_by_mean


def pick(ratios) -> HeadPick:
    return HeadPick(layer=20, head=2, query=10, temperatures=(0.5, 2.0), entropies=(0.1, 0.9), ratios=ratios)


def test_a_mean_whose_ratio_rises_with_t_hides_it_against_the_lesson():
    hidden = hidden_by_mean(15, (2.54, 2.75), pick((49.9, 3.22)))  # the trophy sentence's layer 15, in-model
    assert hidden is not None and hidden.against and hidden.layer == 15


@pytest.mark.parametrize(("mean", "hides"), [((4.0, 1.0), False), ((3.9, 1.0), True), ((1.2, 1.0), True),
                                             ((100.0, 2.0), False)])
def test_a_mean_that_falls_far_less_than_the_pick_hides_it(mean, hides):
    assert SHOWN_POWER == 0.5  # the pick's ratio falls 16-fold: the mean must fall at least 4-fold
    hidden = hidden_by_mean(3, mean, pick((32.0, 2.0)))
    assert (hidden is not None) is hides
    assert hidden is None or not hidden.against


def test_nothing_to_say_without_a_pick_a_finite_ratio_or_a_pick_that_falls():
    assert hidden_by_mean(3, (1.0, 1.2), None) is None
    assert hidden_by_mean(3, (math.inf, 1.2), pick((32.0, 2.0))) is None
    assert hidden_by_mean(3, (1.0, 1.2), pick((math.inf, 2.0))) is None
    assert hidden_by_mean(3, (1.0, 1.2), pick((1.5, 1.7))) is None  # the pick's own ratio rises: no lesson to hide
