"""The untrained-distance mass per layer type (verdicts/layers.py): on a tiny Gemma 3 (layers 0 and 2 slide over 8
keys, layer 1 is global) swept with a trained length of 64 and a text of 256 tokens, a sliding layer never sees a
distance past the trained length and the global layer does; the split is stored in the sweep's JSON verdict (format
3) and an older verdict or document still reads."""

import json

import numpy as np
import pytest

from model_utils.core.records.sweep import SweepDocument
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.experiments.sweep import SweepSettings, sweep
from model_utils.experiments.texts import builtin_text
from model_utils.verdicts import NO_VALUE
from model_utils.verdicts.context import context_verdict
from model_utils.verdicts.layers import layer_groups
from model_utils.verdicts.past import FORMAT

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TRAINED = 64  # the window of 8 keys is far shorter: a sliding layer cannot reach a distance of 64
SETTINGS = SweepSettings(max_tokens=256, bucket_size=32, trained_length=TRAINED, beyond_trained=True)
SPECS = [1.0, 1.25, View(1.0, Rope("yarn-rope", 2.0))]


@pytest.fixture(scope="module")
def gemma_document(architecture_model, tmp_path_factory) -> SweepDocument:
    """The tiny Gemma 3's sweep, written to JSON and read back as the page and the README read it."""
    written = sweep(architecture_model("gemma3_text"), builtin_text("long"), SPECS, SETTINGS,
                    cache_dir=tmp_path_factory.mktemp("passes"))
    return SweepDocument.from_dict(json.loads(json.dumps(written.to_dict(), allow_nan=False)))


def test_the_sweep_records_each_layers_window(gemma_document):
    assert gemma_document.layer_windows == (8, None, 8)
    assert gemma_document.to_dict()["layer_windows"] == [8, None, 8]


def test_a_sliding_layer_meets_no_untrained_distance_and_the_global_layer_does(gemma_document):
    verdict = context_verdict(gemma_document)
    sliding, full = verdict.layer_types
    assert (sliding.window, sliding.layers) == (8, (0, 2)) and (full.window, full.layers) == (None, (1,))
    assert sliding.untrained_mass == (0.0,) * 6 and sliding.untrained_mass_past == 0.0
    assert min(full.untrained_mass) > 0.05 and full.untrained_mass_past > 0.05
    # the mean over every layer, which the verdict gave before, is the types' means weighted by their layers
    overall = [row["mass"] for row in verdict.attention["untrained"]]
    np.testing.assert_allclose(overall, (2 * np.array(sliding.untrained_mass) + full.untrained_mass) / 3, atol=1e-12)


def test_the_decomposition_gives_each_rows_mass_per_layer_type(gemma_document):
    verdict = context_verdict(gemma_document)
    rows = {row["view"]: row for row in verdict.decomposition_rows()}
    column = "untrained-distance mass past it, by layer type"
    recipe = rows["yarn-rope (s=2) + T=1"][column]
    assert rows["T=1"][column] == f"sliding 8: 0.000; global: {verdict.layer_types[1].untrained_mass_past:.3f}"
    assert recipe.startswith("sliding 8: 0.000; global: 0.") and recipe != rows["T=1"][column]
    assert rows["best T per bucket (cross-fit on one text)"][column] == NO_VALUE  # no pass of its own


def test_the_verdict_says_which_layers_cannot_meet_an_untrained_distance(gemma_document):
    said = [sentence for sentence in context_verdict(gemma_document).sentences() if sentence.startswith("By layer")]
    assert len(said) == 1
    assert "sliding-window layers of 8 keys (2 layers: 0, 2): 0.000 -> 0.000, 0.000 over the past region" in said[0]
    assert "global (full-attention) layers (1 layer: 1): 0." in said[0]
    assert said[0].endswith("a sliding-window layer of 8 keys, no more than the trained length of 64, never sees a "
                            "key that far back.")


def test_the_split_is_stored_in_the_json_verdict(gemma_document):
    stored = gemma_document.verdict
    assert stored["format"] == FORMAT == 3
    assert [entry["window"] for entry in stored["layer_types"]] == [8, None]
    assert set(stored["layer_types"][0]) == {"window", "layers", "untrained_mass", "untrained_mass_past"}
    assert context_verdict(gemma_document).to_dict() == stored


def test_a_verdict_and_a_document_of_format_2_still_read(gemma_document):
    """A format-2 verdict (no layer_types) is read as stored, not recomputed; a format-2 document has no windows."""
    data = gemma_document.to_dict()
    verdict = {key: value for key, value in data["verdict"].items() if key != "layer_types"} | {"format": 2}
    older = {key: value for key, value in data.items() if key != "layer_windows"} | {"format": 2, "verdict": verdict}
    document = SweepDocument.from_dict(older)
    read = context_verdict(document)
    assert document.layer_windows is None and read.layer_types is None
    assert read.gain_held_out == context_verdict(gemma_document).gain_held_out  # stored numbers, not recomputed
    assert not any(sentence.startswith("By layer") for sentence in read.sentences())
    assert all(len(row) == 4 for row in read.decomposition_rows())


def test_a_model_of_one_layer_type_has_no_split(tiny, tmp_path):
    document = sweep(tiny, builtin_text("long"), SPECS, SETTINGS, cache_dir=tmp_path)
    verdict = context_verdict(document)
    assert document.layer_windows == (None, None, None) and verdict.layer_types is None
    assert document.verdict["layer_types"] is None
    assert all("untrained_mass_by_layer_type" not in row for row in document.verdict["decomposition"]["rows"])
    assert not any(sentence.startswith("By layer") for sentence in verdict.sentences())


def test_layer_groups_keep_the_order_of_first_appearance():
    untrained = [np.arange(24, dtype=float).reshape(2, 4, 3)]  # one view, [bucket, layer, head]
    groups = layer_groups([None, 512, 512, None], untrained)
    assert [(group.window, group.layers) for group in groups] == [(None, [0, 3]), (512, [1, 2])]
    np.testing.assert_array_equal(groups[1].untrained_mass, [[np.mean(untrained[0][0, 1:3]),
                                                              np.mean(untrained[0][1, 1:3])]])
    assert layer_groups([512] * 4, untrained) == [] and layer_groups(None, untrained) == []
