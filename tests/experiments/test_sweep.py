"""The sweep's pass cache keys (experiments/sweep.py): a pass is found under its view's canonical JSON, and a cache
made before, under each view's label and in the flat form of its time, is moved to the new keys and read as the views
of its keys, so a committed or copied cache replays without computing a pass."""

import json

import pytest

from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View, as_view
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.sweep import SweepSettings, _key, pass_key, run_passes

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SETTINGS = SweepSettings(max_tokens=300, bucket_size=128, beyond_trained=True)
SPECS = [1.0, 1.25, Schedule("qwen-logn", 128.0), View(1.0, Rope("yarn", 2))]
TEXT = "The cache keeps every pass a sweep has run, so that a sweep run again computes none of them. " * 12


def flat(data: dict) -> dict:
    """A pass as the cache held it before views were stored whole: the result's fields beside the pass's own, the
    view by its label, temperature and schedule label, the recipe as applied, no multipliers."""
    result = data["result"]
    view = View.from_dict(result["view"])
    applied = None if view.rope is None else view.rope.applied(result["attention_factor"])
    kept = {key: value for key, value in result.items()
            if key not in ("view", "attention_factor", "rope_layer_types", "multipliers")}
    return {"label": view.label, "temperature": view.temperature,
            "schedule": None if view.schedule is None else view.schedule.label, "rope": applied, **kept,
            **{key: value for key, value in data.items() if key != "result"}}


def test_two_views_a_label_rounds_together_have_two_keys():
    close = [View(1.0, Rope("yarn-rope", 2.0)), View(1.0, Rope("yarn-rope", 2.0000001))]
    assert close[0].label == close[1].label
    assert pass_key("model", TEXT, close[0], SETTINGS) != pass_key("model", TEXT, close[1], SETTINGS)


def test_a_cache_keyed_by_labels_is_moved_to_the_new_keys_and_replays_without_a_pass(tiny, tmp_path):
    computed = []
    passes = run_passes(tiny, TEXT, SPECS, SETTINGS, tmp_path, on_start=lambda label, index: computed.append(label))
    assert len(computed) == len(SPECS) == len(list(tmp_path.glob("*.json")))
    fingerprint = model_fingerprint(tiny, portable=True)
    for spec in SPECS:  # the cache as it was: each pass under its label's key, in the flat form
        path = tmp_path / f"{pass_key(fingerprint, TEXT, spec, SETTINGS)}.json"
        older = tmp_path / f"{_key(fingerprint, TEXT, as_view(spec).label, SETTINGS)}.json"
        older.write_text(json.dumps(flat(json.loads(path.read_text()))))
        path.unlink()
    again = []
    replayed = run_passes(tiny, TEXT, SPECS, SETTINGS, tmp_path, on_start=lambda label, index: again.append(label))
    assert again == [] and replayed == passes
    assert sorted(path.stem for path in tmp_path.glob("*.json")) == sorted(
        pass_key(fingerprint, TEXT, spec, SETTINGS) for spec in SPECS)  # moved, none left under an old key
