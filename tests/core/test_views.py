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


def test_a_view_is_stored_whole_and_reads_back_equal():
    from model_utils.core.schedules import LengthTemperature

    views = [View(1.25), View(1.0, YARN_ROPE), View(Schedule("qwen-logn", 8192.0)), View(Schedule("yarn")),
             View(0.9, Rope("self-extend", group=2, window=1024)), View(LengthTemperature(0.3, 8192), YARN_ROPE)]
    for view in views:
        assert View.from_dict(view.to_dict()) == view
    assert View(1.0, YARN_ROPE).to_dict() == {"kind": "temperature", "temperature": 1.0,
                                              "rope": {"recipe": "yarn-rope", "factor": 2.0}}
    assert View(Schedule("yarn", 2.0)).to_dict() == {"kind": "schedule", "schedule": "yarn", "parameter": 2.0,
                                                     "rope": None}


def test_the_canonical_json_tells_apart_what_a_label_rounds_together():
    close = [View(1.0, Rope("yarn-rope", 2.0)), View(1.0, Rope("yarn-rope", 2.0000001))]
    assert close[0].label == close[1].label  # the label rounds to 6 significant digits
    assert close[0].canonical() != close[1].canonical()
    assert View(1.0000001).canonical() != View(1.0).canonical()
    assert View(Schedule("logn", 8192)).canonical() == View(Schedule("logn", 8192.0)).canonical()


def test_a_damaged_view_is_refused_by_name():
    import pytest

    for data in ({"kind": "temperature", "rope": None}, {"kind": "colour", "rope": None}, {"temperature": 1.0}):
        with pytest.raises(ValueError, match="a view needs 'kind'"):
            View.from_dict(data)
