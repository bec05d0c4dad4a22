"""The reference run, found in one place (core.views.reference_index): T = 1 on the model's own positions, never a
schedule or a recipe's T = 1, which is the reference of that recipe's own temperatures."""

from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View, reference_index

YARN_ROPE = Rope("yarn-rope", 2.0)


def test_the_reference_is_t1_on_the_models_own_positions():
    views = [View(Schedule("yarn", 2.0)), View(1.0, YARN_ROPE), View(0.8), View(1.0), View(1.25)]
    assert reference_index(views) == 3
    assert reference_index(views, YARN_ROPE) == 1  # a recipe's own T = 1, for its temperatures
    assert reference_index([View(0.8), View(1.0, YARN_ROPE)]) is None
    assert reference_index([]) is None
